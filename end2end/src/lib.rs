//! End-to-end suites against the real local stack: `wrangler dev` (workerd + Miniflare with D1,
//! R2, Queues, the Durable Object and the cron) and `anthropic-sim`, in the test timing profile.
//!
//! Every suite is a module of one test binary, `e2e` (`tests/e2e/`, its own small harness,
//! `harness = false`): `e2e NAME` runs suite NAME, which starts **one** stack for all its tests
//! (wrangler dev takes ≈600 MB), runs the tests in order, prints cargo's summary line, and tears
//! the stack down whatever happened — a panic included. `cargo xtask test` runs the binary once
//! per suite, a few at a time. Tests speak to
//! the stack through one client, as zero2prod's `TestApp` does: `s.user("ann").submit_job(..)`,
//! `s.anon().job(id)`, `s.user(u).job_reaches(id, "completed", ..)`, `s.cron()`, `s.billed(id)`.
//!
//! # Layout
//! - [`stack`]: [`spawn_stack`] (a fresh stack on free ports with a fresh state directory) and
//!   what a test may do to it from outside the API: restart, cron, D1, keys, R2 on disk.
//! - [`d1_file`]: a test's plain D1 reads, straight from the runtime's SQLite file.
//! - [`harness`]: the binary's [`harness::main`], a [`Suite`] and the [`tests!`] list.
//! - [`client`]: the API per caller (`anon`, `user`, `key`): requests, submissions, reads.
//! - [`waits`]: [`eventually`] and the waits for jobs, uploads and batches.
//! - [`sim`]: what the simulator saw (bills, calls, webhooks, shape refusals, batches).
//! - [`api`]: the HTTP layer under the client, and the error envelope check.
//! - [`browser`]: Chromium through playwright-rs, with action / find / check helpers.
//! - [`pdfs`]: real small PDFs made in the tests.
//! - [`batches`]: Message Batches made in the simulator with their jobs in D1, at any size.
//! - [`envelope`]: each entry point's peak use of each production limit, from the `use:` lines.
//! - [`heap`]: the Worker isolate's memory through the runtime's inspector.
//! - [`timing`]: where a suite's time goes (stack start, waiting, running), for the xtask.

pub mod api;
pub mod batches;
pub mod browser;
pub mod client;
pub mod d1_file;
pub mod envelope;
pub mod harness;
pub mod heap;
pub mod pdfs;
pub mod sim;
pub mod stack;
pub mod timing;
pub mod waits;

pub use client::{Client, Files};
pub use harness::{suite, suite_timed, suite_with, Suite, TestFn};
pub use sim::rollout_user;
pub use stack::{spawn_stack, spawn_stack_of, spawn_stack_with, StackConfig, TestStack};
pub use timing::pause;
pub use waits::eventually;
