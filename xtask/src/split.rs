//! Cuts a wasm bundle at its split points (`wasm_split` in the app: the Dashboard's panels
//! below its first screen, issue 34): the main module, which the page starts with, and a chunk
//! per split point, which the app fetches the first time it calls into it. The cut is made on
//! the linker's output (linked with `--emit-relocs`), before wasm-bindgen, by
//! `wasm_split_cli_support` — the library behind Leptos' `#[lazy]` in cargo-leptos — which also
//! writes the small JS loader the main module imports to fetch a chunk.
//!
//! The main module's JS, the loader and the chunks name one another, so their names cannot
//! each carry a hash of their own bytes. They share a tag instead: a hash of everything they
//! are made from — the linked wasm, and the lock files and versions that pin the tools after
//! it (the splitter, wasm-bindgen, binaryen) — so new bytes always come under new names, which
//! is what `immutable` caching needs.

use std::path::{Path, PathBuf};

use crate::hash::fnv;
use crate::paths::root;
use crate::Result;

/// A cut bundle in its package directory.
pub struct Cut {
    /// The main module, for wasm-bindgen.
    pub main: PathBuf,
    /// The tag the files that name one another share.
    pub tag: String,
    /// The chunks and their loader, named with the tag; none if the bundle has no split point.
    pub files: Vec<PathBuf>,
}

impl Cut {
    /// Whether the bundle was cut (it has split points), or came out whole.
    pub fn is_split(&self) -> bool {
        !self.files.is_empty()
    }
}

/// The loader's file name for bundle `name`.
pub fn loader_name(name: &str, tag: &str) -> String {
    format!("{name}_split-{tag}.js")
}

/// The main module's JS file name (what the loader imports) for bundle `name`.
pub fn js_name(name: &str, tag: &str) -> String {
    format!("{name}-{tag}.js")
}

/// Cuts `wasm` (bundle `name`) into `pkg`; a bundle without split points comes out whole (and
/// without the linker's relocations, which wasm-bindgen would keep). `tools` names the tools'
/// versions that are not in a lock file.
pub fn cut(wasm: &Path, pkg: &Path, name: &str, tools: &str) -> Result<Cut> {
    let input = std::fs::read(wasm).map_err(|e| format!("reading {wasm:?}: {e}"))?;
    let tag = tag(&input, tools)?;
    let main = pkg.join("main.wasm");
    let loader = format!("./{}", loader_name(name, &tag));
    let main_module = format!("./{}", js_name(name, &tag));
    let out = wasm_split_cli_support::transform({
        let mut o = wasm_split_cli_support::Options::new(&input);
        o.output_dir = pkg;
        o.main_out_path = &main;
        o.link_name = &loader;
        o.main_module = &main_module;
        o
    })
    .map_err(|e| format!("wasm_split of {wasm:?}: {e:?}"))?;
    let loader = pkg.join(loader_name(name, &tag));
    let mut js = std::fs::read_to_string(&loader)?;
    let mut files = Vec::new();
    for chunk in out.split_modules {
        files.push(rename_chunk(&chunk, name, &tag, &mut js)?);
    }
    if files.is_empty() {
        // No split point: the main module imports nothing from the loader.
        std::fs::remove_file(&loader)?;
    } else {
        std::fs::write(&loader, js)?;
        files.push(loader);
    }
    Ok(Cut { main, tag, files })
}

/// Names `chunk` with the bundle's name and the tag, in its directory and in the loader's `js`.
fn rename_chunk(chunk: &Path, name: &str, tag: &str, js: &mut String) -> Result<PathBuf> {
    let stem = chunk
        .file_stem()
        .and_then(|s| s.to_str())
        .ok_or_else(|| format!("a chunk without a name: {chunk:?}"))?;
    let named = chunk.with_file_name(format!(
        "{name}_split_{}-{tag}.wasm",
        stem.strip_prefix("split_").unwrap_or(stem)
    ));
    let quoted = format!("\"./{stem}.wasm\"");
    if !js.contains(&quoted) {
        return Err(format!("the loader does not name {quoted}").into());
    }
    let file = named.file_name().unwrap_or_default().to_string_lossy();
    *js = js.replace(&quoted, &format!("\"./{file}\""));
    std::fs::rename(chunk, &named)?;
    Ok(named)
}

/// The tag: the linked wasm, the lock files and `tools`, hashed.
fn tag(input: &[u8], tools: &str) -> Result<String> {
    let mut all = input.to_vec();
    for lock in ["Cargo.lock", "package-lock.json"] {
        all.extend(std::fs::read(root().join(lock))?);
    }
    all.extend(tools.as_bytes());
    Ok(format!("{:016x}", fnv(&all)))
}
