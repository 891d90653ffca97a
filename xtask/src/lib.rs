//! The project's tooling as a library: `cargo xtask` (in `main.rs`) and the end-to-end suites
//! (`end2end`) share one way to install tools, build the wasm targets and run the local stack.
//!
//! # Layout
//! - [`paths`]: where things are (workspace, target dir, installed tools).
//! - [`proc`]: running commands, supervised child processes, Ctrl-C.
//! - [`tools`]: installs what is missing (wasm target, pinned CLIs, npm packages, Chromium).
//! - [`build`]: the SPA and the Worker, rebuilt only when their inputs changed.
//! - [`wrangler_config`]: local wrangler configs generated from `wrangler.toml` and a profile.
//! - [`stack`]: `wrangler dev` (+ migrations) on a port with its own state directory.
//! - [`template`]: migrated template states that fresh stacks copy instead of migrating.
//! - [`keys`]: API keys made on the command line (`cargo xtask key create`).
//! - [`testing`]: the test binaries of `cargo xtask test`, built once and run side by side.
//! - [`http`]: a tiny blocking HTTP client for readiness checks and the cron trigger.

pub mod build;
pub mod hash;
pub mod http;
pub mod keys;
pub mod paths;
pub mod proc;
pub mod split;
pub mod stack;
pub mod template;
pub mod testing;
pub mod tools;
pub mod wasm_size;
pub mod wrangler_config;

/// Errors of the tooling: a sentence of context is enough, they end the command.
pub type Error = Box<dyn std::error::Error + Send + Sync>;
pub type Result<T> = std::result::Result<T, Error>;

/// Prints a step header, so progress is visible while long builds run.
pub fn step(msg: &str) {
    eprintln!("\x1b[1;36m==>\x1b[0m {msg}");
}
