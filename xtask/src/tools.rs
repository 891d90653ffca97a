//! Installs what is missing, idempotently: a fresh machine needs only Rust, Node and network
//! access to the package registries (crates.io, npm, Debian). Nothing comes from GitHub.

use std::path::Path;
use std::process::Command;

use crate::paths::{self, cargo_bin, node_bin, root};
use crate::proc::{output, run};
use crate::{step, Result};

/// The wasm-bindgen CLI must match the `wasm-bindgen` crate in Cargo.lock exactly.
pub const WASM_BINDGEN_VERSION: &str = "0.2.130";
pub const WORKER_BUILD_VERSION: &str = "0.8.7";

/// Everything `dev` needs; `for_tests` adds Chromium for the browser suites and the official
/// Anthropic Python SDK that the simulator is tested against.
pub fn ensure(for_tests: bool) -> Result<()> {
    wasm_target()?;
    cargo_tool(
        "wasm-bindgen",
        "wasm-bindgen-cli",
        WASM_BINDGEN_VERSION,
        false,
    )?;
    cargo_tool("worker-build", "worker-build", WORKER_BUILD_VERSION, true)?;
    npm_packages()?;
    if for_tests {
        chromium()?;
        python_sdk()?;
    }
    Ok(())
}

/// Where the pinned Python SDK is installed (`pip install --target`, no virtualenv needed).
pub fn python_sdk_dir() -> std::path::PathBuf {
    paths::target_dir().join("sdk-py")
}

/// `pip install --target target/sdk-py -r sim/tests/sdk/requirements.txt`, once per change of
/// the requirements.
fn python_sdk() -> Result<()> {
    let reqs = root().join("sim/tests/sdk/requirements.txt");
    let wanted = std::fs::read_to_string(&reqs).map_err(|e| format!("reading {reqs:?}: {e}"))?;
    let dir = python_sdk_dir();
    let stamp = dir.join(".requirements");
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(wanted.as_str()) {
        return Ok(());
    }
    step(&format!(
        "installing the Anthropic Python SDK ({}) from PyPI",
        wanted.trim()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    run(
        Command::new("python3")
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(["--no-warn-conflicts", "--target"])
            .arg(&dir)
            .arg("-r")
            .arg(&reqs),
        "pip install (Anthropic Python SDK)",
    )?;
    std::fs::write(stamp, wanted)?;
    Ok(())
}

fn wasm_target() -> Result<()> {
    let installed =
        output(Command::new("rustup").args(["target", "list", "--installed"])).unwrap_or_default();
    if installed
        .lines()
        .any(|l| l.trim() == "wasm32-unknown-unknown")
    {
        return Ok(());
    }
    step("installing the wasm32-unknown-unknown target (rustup)");
    run(
        Command::new("rustup").args(["target", "add", "wasm32-unknown-unknown"]),
        "rustup target add",
    )
}

/// `cargo install <krate> --version <version>` unless `<bin> --version` already says it.
/// wasm-bindgen-cli is installed without `--locked`: its lockfile names a crate version that
/// the registry no longer has.
fn cargo_tool(bin: &str, krate: &str, version: &str, locked: bool) -> Result<()> {
    let path = cargo_bin(bin);
    let current = output(Command::new(&path).arg("--version")).unwrap_or_default();
    if current.split_whitespace().any(|w| w == version) {
        return Ok(());
    }
    step(&format!(
        "installing {krate} {version} (cargo install, a few minutes on a fresh machine)"
    ));
    let mut cmd = Command::new("cargo");
    cmd.args(["install", krate, "--version", version, "--force"]);
    if locked {
        cmd.arg("--locked");
    }
    run(&mut cmd, &format!("cargo install {krate}"))
}

/// `npm ci` from the committed package-lock.json when node_modules is missing or stale.
fn npm_packages() -> Result<()> {
    let lock = root().join("package-lock.json");
    let installed = root().join("node_modules").join(".package-lock.json");
    let fresh = match (modified(&lock), modified(&installed)) {
        (Some(l), Some(i)) => i >= l,
        _ => false,
    };
    if fresh
        && ["wrangler", "wasm-opt", "node"]
            .iter()
            .all(|b| node_bin(b).exists())
    {
        return Ok(());
    }
    step("installing npm packages from package-lock.json (wrangler and its Node 22, binaryen, playwright-core)");
    run(
        Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(root()),
        "npm ci",
    )
}

fn modified(p: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// Debian's Chromium, installed with apt-get (as root, or through sudo).
fn chromium() -> Result<()> {
    if Path::new(paths::CHROMIUM).exists() {
        return Ok(());
    }
    step("installing Chromium from Debian (apt-get)");
    // SAFETY: geteuid has no preconditions.
    let root_user = unsafe { libc::geteuid() } == 0;
    let apt = |args: &[&str]| {
        let mut cmd = if root_user {
            Command::new("apt-get")
        } else {
            let mut c = Command::new("sudo");
            c.arg("apt-get");
            c
        };
        cmd.args(args).env("DEBIAN_FRONTEND", "noninteractive");
        cmd
    };
    run(&mut apt(&["update"]), "apt-get update")?;
    run(
        &mut apt(&["install", "-y", "--no-install-recommends", "chromium"]),
        "apt-get install chromium",
    )
}
