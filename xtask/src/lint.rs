//! Clippy while compiling, not as a pass of its own: every cargo build of the xtask (the wasm
//! artifacts, the tests, the benchmarks) runs with clippy's driver as the workspace's compiler
//! wrapper, as `cargo clippy` itself does for `cargo check`, so the workspace's own crates are
//! linted (`-D warnings`) by the same compilation that builds them. Dependencies compile with
//! plain rustc. This replaces two `cargo clippy` passes (host `--all-targets` and wasm32) that
//! type-checked everything a second time: ≈ 5 minutes of `cargo xtask test` on 2 cores.
//!
//! One wrapper and one set of lint flags for every build, `cargo xtask dev` included: cargo
//! fingerprints the wrapper, so builds with and without it would rebuild each other's crates.

use std::path::PathBuf;
use std::process::Command;

use crate::paths::cargo_bin;

/// The lint flags, as `cargo clippy -- -D warnings` passes them to the driver (its own
/// separator between arguments).
pub const CLIPPY_ARGS: &str = "-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__";

/// Clippy's driver: rustup's proxy beside cargo, else whatever `clippy-driver` is on PATH.
pub fn driver() -> PathBuf {
    let proxy = cargo_bin("clippy-driver");
    if proxy.exists() {
        proxy
    } else {
        PathBuf::from("clippy-driver")
    }
}

/// The environment that makes a cargo build lint the workspace's crates.
pub fn env() -> [(&'static str, std::ffi::OsString); 2] {
    [
        ("RUSTC_WORKSPACE_WRAPPER", driver().into_os_string()),
        ("CLIPPY_ARGS", CLIPPY_ARGS.into()),
    ]
}

/// `cmd` (a cargo build, or a tool that runs one) with [`env`].
pub fn linted(cmd: &mut Command) -> &mut Command {
    cmd.envs(env())
}

/// A cargo command in the workspace root that lints what it compiles.
pub fn cargo() -> Command {
    let mut cmd = Command::new("cargo");
    cmd.current_dir(crate::paths::root());
    linted(&mut cmd);
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lint_flags_are_clippys_deny_warnings_in_its_own_encoding() {
        let args: Vec<&str> = CLIPPY_ARGS
            .split("__CLIPPY_HACKERY__")
            .filter(|a| !a.is_empty())
            .collect();
        assert_eq!(args, ["-D", "warnings"]);
    }
}
