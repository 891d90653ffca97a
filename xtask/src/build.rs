//! Builds the two wasm artifacts — the SPA into `dist/` and the Worker into `worker/build/` —
//! and skips either when none of its inputs changed since the last build (a content
//! fingerprint, not mtimes, so a fresh checkout of the same tree is still a cache hit).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::hash::fnv;
use crate::paths::{cargo_bin, dist, node_bin, root, target_dir, worker_build, worker_target_dir};
use crate::proc::run;
use crate::tools::WASM_BINDGEN_VERSION;
use crate::{step, Result};

const WASM: &str = "wasm32-unknown-unknown";

/// binaryen's level for both wasm files, after rustc's `opt-level = "z"` and fat LTO. Measured
/// on 2026-12-06 (this 2-core machine, wasm-opt from npm's binaryen, brotli 11 as Cloudflare
/// serves browsers, gzip -9): the SPA at -O0 / -O1 / -Oz 1,409 / 1,366 / 1,279 KB raw,
/// 360 / 356 / 358 KB brotli, 478 / 474 / 475 KB gzip, in 2 / 9 / 20 s; the Worker 1,942 /
/// 1,890 / 1,822 KB raw, 570 / 564 / 571 KB brotli, 741 / 734 / 739 KB gzip, in 2 / 13 / 30 s.
/// -O1 sends the fewest bytes; -Oz's 4–7 % fewer raw bytes (what the engines compile) cost
/// 28 s of every build on the one thread left after the rest (README, "Where a test
/// run's time goes").
const WASM_OPT_LEVEL: &str = "-O1";

/// Inputs shared by both artifacts (`.cargo/config.toml` among them: it holds the lints).
const SHARED_INPUTS: &[&str] = &["pipeline", "Cargo.lock", "Cargo.toml", ".cargo/config.toml"];

/// Builds the SPA unless it is up to date. Returns whether it was rebuilt.
pub fn spa() -> Result<bool> {
    // `contract`: the OpenAPI document is written with the SPA's files.
    let inputs = [SHARED_INPUTS, &["app", "frontend", "style", "contract"]].concat();
    let stamp = target_dir().join("xtask-spa.stamp");
    let fp = fingerprint(&inputs)?;
    if dist().join("index.html").exists() && read(&stamp) == Some(fp.clone()) {
        step("SPA is up to date (dist/)");
        return Ok(false);
    }
    let started = Instant::now();
    // The Dashboard's bundle first, the whole app last: `target/…/frontend.wasm` is then the
    // whole app's, as `cargo xtask sizes` reads it.
    let pkgs = [Bundle::Dashboard, Bundle::App]
        .into_iter()
        .map(|b| Ok((b, bundle(b)?)))
        .collect::<Result<Vec<_>>>()?;
    let shells = shells()?;
    assemble_dist(&pkgs, &shells)?;
    built("SPA", &dist(), &stamp, fp, started)
}

/// The SPA's two wasm bundles: the whole app, and the Dashboard alone (`app`'s
/// `dashboard-bundle` feature) for a visit that lands on the Dashboard: about 60 % of the whole
/// app's bytes, so it draws its data a second sooner at phone speed (README, "At phone speed").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bundle {
    App,
    Dashboard,
}

impl Bundle {
    /// Its name: wasm-bindgen's `--out-name`, the stem of its files, the shells' `bundle`.
    fn name(self) -> &'static str {
        match self {
            Bundle::App => "app",
            Bundle::Dashboard => "dashboard",
        }
    }

    fn features(self) -> &'static [&'static str] {
        match self {
            Bundle::App => &[],
            Bundle::Dashboard => &["--features", "frontend/dashboard-bundle"],
        }
    }
}

/// rustc's flags for the SPA's wasm, besides the workspace's for wasm32 (`.cargo/config.toml`;
/// cargo adds these to them): the linker keeps its relocations, which the split reads
/// (`xtask::split`). Both bundles link with them, so they share one build of their
/// dependencies; the relocations go with wasm-bindgen.
const SPA_LINK_FLAGS: &str = "-Clink-args=--emit-relocs";

/// A bundle built: its directory (`<name>.js`, `<name>_bg.wasm`) and its split
/// (`xtask::split`).
struct Pkg {
    dir: PathBuf,
    cut: crate::split::Cut,
}

/// Builds bundle `b` (release wasm, the split, wasm-bindgen, wasm-opt) into a directory of its
/// own.
fn bundle(b: Bundle) -> Result<Pkg> {
    step(&format!(
        "building the SPA's {} bundle (frontend → wasm32, release)",
        b.name()
    ));
    // `-p app` too: clippy lints the crates a build names (the app is frontend's dependency),
    // and every build is linted (`.cargo/config.toml`).
    let args = [
        &[
            "build",
            "-p",
            "frontend",
            "-p",
            "app",
            "--target",
            WASM,
            "--release",
        ],
        b.features(),
    ]
    .concat();
    run(
        Command::new("cargo")
            .args(&args)
            .env(
                "CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS",
                SPA_LINK_FLAGS,
            )
            .current_dir(root()),
        "cargo build -p frontend -p app",
    )?;
    let wasm = target_dir()
        .join(WASM)
        .join("release")
        .join("frontend.wasm");
    let dir = target_dir().join(format!("spa-pkg-{}", b.name()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    // Every bundle goes through the splitter: one without split points comes out whole, and
    // without the linker's relocations.
    step("wasm_split");
    let tools = format!("wasm-bindgen {WASM_BINDGEN_VERSION}, wasm-opt {WASM_OPT_LEVEL}");
    let cut = crate::split::cut(&wasm, &dir, b.name(), &tools)?;
    step("wasm-bindgen (--target web)");
    let mut bindgen = Command::new(cargo_bin("wasm-bindgen"));
    bindgen.args(["--target", "web", "--no-typescript"]);
    if cut.is_split() {
        // The exports the split added for the chunks to call into the main module.
        bindgen.arg("--keep-lld-exports");
    }
    run(
        bindgen
            .arg("--out-name")
            .arg(b.name())
            .arg("--out-dir")
            .arg(&dir)
            .arg(&cut.main),
        "wasm-bindgen",
    )?;
    step(&format!("wasm-opt {WASM_OPT_LEVEL} (binaryen from npm)"));
    let chunks = cut
        .files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "wasm"));
    for w in std::iter::once(&dir.join(format!("{}_bg.wasm", b.name()))).chain(chunks) {
        // --strip-debug: the chunks keep the names section wasm-bindgen drops from the main.
        run(
            Command::new(node_bin("wasm-opt"))
                .arg(WASM_OPT_LEVEL)
                .arg("--strip-debug")
                .arg(w)
                .arg("-o")
                .arg(w),
            "wasm-opt",
        )?;
    }
    Ok(Pkg { dir, cut })
}

/// A page's shell: its route, its file under `dist/`, the bundle that hydrates it, what goes
/// inside its `<body>`.
struct Shell {
    route: String,
    file: String,
    bundle: String,
    html: String,
    /// What goes in its `<head>`: the page's first GETs, for `boot.js`.
    head: String,
}

/// Every page's shell, rendered by the app's `shells` binary (`app::shell`, `ssr` feature) on
/// the host: the whole app's, but the Dashboard's from the Dashboard's bundle (the app it
/// hydrates). Built with the wasm's `erase_components` cfg, so the HTML carries the same markers
/// the wasm hydrates; in a target directory of its own, so those flags never rebuild the host's
/// test builds.
fn shells() -> Result<Vec<Shell>> {
    step("rendering the pages' shells (app --bin shells, ssr)");
    let own = shells_of("ssr,dashboard-bundle")?;
    let mut all: Vec<Shell> = shells_of("ssr")?
        .into_iter()
        .filter(|s| !own.iter().any(|o| o.file == s.file))
        .collect();
    all.extend(own);
    Ok(all)
}

/// The shells the `shells` binary renders with `features`.
fn shells_of(features: &str) -> Result<Vec<Shell>> {
    let out = Command::new("cargo")
        .args([
            "run",
            "--quiet",
            "-p",
            "app",
            "--bin",
            "shells",
            "--no-default-features",
            "--features",
            features,
        ])
        .env("RUSTFLAGS", "--cfg erase_components")
        .env("CARGO_TARGET_DIR", target_dir().join("shells"))
        .current_dir(root())
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cargo run --bin shells: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo run --bin shells failed ({})", out.status).into());
    }
    let list: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout)?;
    let text = |v: &serde_json::Value, k: &str| v[k].as_str().unwrap_or_default().to_owned();
    Ok(list
        .iter()
        .map(|v| Shell {
            route: text(v, "route"),
            file: text(v, "file"),
            bundle: text(v, "bundle"),
            html: text(v, "html"),
            head: text(v, "head"),
        })
        .collect())
}

/// The hashed files of one bundle in `dist/`, and the `boot.js` that starts it.
struct BundleFiles {
    wasm: String,
    js: String,
    boot: String,
}

/// Content-hashed file names, so browsers may cache them forever; each page's HTML points at
/// its bundle's, its shell inside.
fn assemble_dist(pkgs: &[(Bundle, Pkg)], shells: &[Shell]) -> Result<()> {
    let out = dist();
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out)?;
    let copy = |src: PathBuf, stem: &str, ext: &str| -> Result<String> {
        let bytes = std::fs::read(&src).map_err(|e| format!("reading {src:?}: {e}"))?;
        let name = format!("{stem}-{:016x}.{ext}", fnv(&bytes));
        std::fs::write(out.join(&name), bytes)?;
        Ok(name)
    };
    let css = copy(root().join("style").join("main.css"), "style", "css")?;
    let statics = root().join("frontend").join("static");
    let mut files = std::collections::HashMap::new();
    for (b, pkg) in pkgs {
        let name = b.name();
        let wasm = copy(
            pkg.dir.join(format!("{name}_bg.wasm")),
            &format!("{name}_bg"),
            "wasm",
        )?;
        let js_file = pkg.dir.join(format!("{name}.js"));
        let js = if pkg.cut.is_split() {
            for f in &pkg.cut.files {
                std::fs::copy(f, out.join(f.file_name().unwrap_or_default()))?;
            }
            // The loader imports the main module's JS by the split's tag.
            let js = crate::split::js_name(name, &pkg.cut.tag);
            std::fs::copy(js_file, out.join(&js))?;
            js
        } else {
            copy(js_file, name, "js")?
        };
        let boot = std::fs::read_to_string(statics.join("boot.js"))?
            .replace("__JS__", &js)
            .replace("__WASM__", &wasm);
        let boot_name = format!("boot-{:016x}.js", fnv(boot.as_bytes()));
        std::fs::write(out.join(&boot_name), boot)?;
        let boot = boot_name;
        files.insert(name, BundleFiles { wasm, js, boot });
    }
    let page = std::fs::read_to_string(statics.join("index.html"))?.replace("__STYLE__", &css);
    for shell in shells {
        let f = files
            .get(shell.bundle.as_str())
            .ok_or_else(|| format!("{}: no bundle {:?}", shell.file, shell.bundle))?;
        let html = page
            .replace("__JS__", &f.js)
            .replace("__WASM__", &f.wasm)
            .replace("__BOOT__", &f.boot)
            .replace("__ROUTE__", &shell.route)
            .replace("__HEAD__", &shell.head)
            .replace("__SHELL__", &shell.html);
        let file = out.join(&shell.file);
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(file, html)?;
    }
    std::fs::copy(statics.join("_headers"), out.join("_headers"))?;
    // The Worker answers `GET /api/openapi.json` with this file (through the assets binding).
    let doc = contract::openapi::document(env!("CARGO_PKG_VERSION"));
    std::fs::write(out.join("openapi.json"), serde_json::to_vec(&doc)?)?;
    Ok(())
}

/// Builds the Worker with worker-build unless it is up to date. Returns whether it was rebuilt.
pub fn worker() -> Result<bool> {
    let inputs = [SHARED_INPUTS, &["worker/src", "worker/Cargo.toml"]].concat();
    let stamp = target_dir().join("xtask-worker.stamp");
    let fp = fingerprint(&inputs)?;
    let shim = worker_build().join("worker").join("shim.mjs");
    if shim.exists() && read(&stamp) == Some(fp.clone()) {
        step("Worker is up to date (worker/build/)");
        return Ok(false);
    }
    let started = Instant::now();
    step("building the Worker (worker-build --release)");
    run(
        Command::new(cargo_bin("worker-build"))
            .arg("--release")
            .current_dir(root().join("worker"))
            .env("CARGO_TARGET_DIR", worker_target_dir())
            // Point worker-build at local tools: it would download them from GitHub otherwise.
            .env("WASM_BINDGEN_BIN", cargo_bin("wasm-bindgen"))
            .env("WASM_OPT_BIN", node_bin("wasm-opt"))
            .env(
                "ESBUILD_BIN",
                root().join("node_modules/@esbuild/linux-x64/bin/esbuild"),
            ),
        "worker-build",
    )?;
    // One wasm-opt pass after worker-build (which is told not to run it): `-O1`, and the
    // names section worker-build would keep (function names for symbolized stack traces; a
    // panic's message is still logged without them) stripped — about a fifth of the bundle.
    step(&format!(
        "wasm-opt {WASM_OPT_LEVEL} --strip-debug (the Worker)"
    ));
    let wasm = worker_build().join("index_bg.wasm");
    let mut strip = Command::new(node_bin("wasm-opt"));
    strip
        .arg(WASM_OPT_LEVEL)
        .arg("--strip-debug")
        .arg("--strip-producers");
    // The features worker-build enables, so binaryen reads what rustc and wasm-bindgen wrote
    // and emits no newer encoding than workerd supports.
    for feature in [
        "mutable-globals",
        "sign-ext",
        "nontrapping-float-to-int",
        "bulk-memory",
        "multivalue",
        "reference-types",
        "exception-handling",
    ] {
        strip.arg(format!("--enable-{feature}"));
    }
    run(
        strip.arg(&wasm).arg("-o").arg(&wasm),
        "wasm-opt (the Worker)",
    )?;
    built("Worker", &worker_build(), &stamp, fp, started)
}

/// Ends a build of `what` into `dir`: keeps its inputs' fingerprint in `stamp` (the next build
/// of the same inputs is skipped), says how long it took and what it made. Returns that it built.
fn built(what: &str, dir: &Path, stamp: &Path, fp: String, started: Instant) -> Result<bool> {
    std::fs::write(stamp, fp)?;
    step(&format!(
        "{what} built in {:.0} s: {}",
        started.elapsed().as_secs_f64(),
        sizes(dir)?
    ));
    Ok(true)
}

/// `name raw/gzip` of every .wasm under `dir`.
pub fn sizes(dir: &Path) -> Result<String> {
    let mut parts = Vec::new();
    for path in files(dir)? {
        if path.extension().is_some_and(|e| e == "wasm") {
            let bytes = std::fs::read(&path)?;
            parts.push(format!(
                "{} {} KB raw / {} KB gzip",
                path.file_name().unwrap_or_default().to_string_lossy(),
                bytes.len() / 1024,
                gzip_len(&bytes)? / 1024
            ));
        }
    }
    Ok(parts.join(", "))
}

pub fn gzip_len(bytes: &[u8]) -> Result<usize> {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(bytes)?;
    Ok(enc.finish()?.len())
}

/// A fingerprint of the contents of `inputs` (files or directories, relative to the root).
fn fingerprint(inputs: &[&str]) -> Result<String> {
    let mut all = Vec::new();
    for input in inputs {
        let p = root().join(input);
        if p.is_dir() {
            all.extend(files(&p)?);
        } else if p.exists() {
            all.push(p);
        }
    }
    all.sort();
    let mut acc = Vec::new();
    for f in all {
        acc.extend_from_slice(
            f.strip_prefix(root())
                .unwrap_or(&f)
                .to_string_lossy()
                .as_bytes(),
        );
        acc.extend_from_slice(&fnv(&std::fs::read(&f)?).to_le_bytes());
    }
    Ok(format!("{:016x}", fnv(&acc)))
}

/// Every file under `dir`, skipping build output.
fn files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).map_err(|e| format!("reading {d:?}: {e}"))? {
            let path = entry?.path();
            let name = path.file_name().unwrap_or_default();
            if name == "target" || name == "build" || name == "node_modules" {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    Ok(out)
}

fn read(p: &Path) -> Option<String> {
    std::fs::read_to_string(p).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_changes_with_content_and_is_stable_otherwise() {
        let a = fingerprint(&["migrations"]).unwrap();
        assert_eq!(a, fingerprint(&["migrations"]).unwrap());
        assert_ne!(a, fingerprint(&["migrations", "wrangler.toml"]).unwrap());
    }
}
