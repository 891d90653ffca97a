//! Where things are. Everything is derived from the workspace root, so the tooling works from any
//! working directory and honours `CARGO_TARGET_DIR`.

use std::path::{Path, PathBuf};

/// The workspace root (the parent of `xtask/`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives inside the workspace")
        .to_path_buf()
}

/// Cargo's target directory: `CARGO_TARGET_DIR` when set (relative to the root), else `target/`.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) if !d.is_empty() => root().join(d),
        _ => root().join("target"),
    }
}

/// The built SPA served from `[assets]`.
pub fn dist() -> PathBuf {
    root().join("dist")
}

/// worker-build's output; `wrangler.toml` points `main` at `worker/build/worker/shim.mjs`.
pub fn worker_build() -> PathBuf {
    root().join("worker").join("build")
}

/// A binary installed by npm from `package-lock.json`.
pub fn node_bin(name: &str) -> PathBuf {
    root().join("node_modules").join(".bin").join(name)
}

/// A binary installed by `cargo install`: `$CARGO_HOME/bin`, else `~/.cargo/bin`.
pub fn cargo_bin(name: &str) -> PathBuf {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap_or_else(|| PathBuf::from("/root/.cargo"));
    home.join("bin").join(name)
}

/// Local state of `cargo xtask dev` (D1, R2, queues, Durable Objects on disk).
pub fn dev_state() -> PathBuf {
    root().join(".state").join("dev")
}

/// Debian's Chromium, which the browser suites drive.
pub const CHROMIUM: &str = "/usr/bin/chromium";
