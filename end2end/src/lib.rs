//! End-to-end suites against the real local stack: `wrangler dev` (workerd + Miniflare with D1,
//! R2, Queues, the Durable Object and the cron) and `anthropic-sim`, in the test timing profile.
//!
//! Each suite is a test binary with its own small harness (`harness = false`): it starts **one**
//! stack for all its tests (wrangler dev takes ≈600 MB), runs the tests in order, prints cargo's
//! summary line, and tears the stack down whatever happened — a panic included. Tests speak to
//! the stack through one client, as zero2prod's `TestApp` does: `s.user("ann").submit_job(..)`,
//! `s.anon().job(id)`, `s.user(u).job_reaches(id, "completed", ..)`, `s.cron()`, `s.billed(id)`.
//!
//! # Layout
//! - [`stack`]: [`spawn_stack`] (a fresh stack on free ports with a fresh state directory) and
//!   what a test may do to it from outside the API: restart, cron, D1, keys, R2 on disk.
//! - [`harness`]: [`run_suite`] and the [`tests!`] list.
//! - [`client`]: the API per caller (`anon`, `user`, `key`): requests, submissions, reads.
//! - [`waits`]: [`eventually`] and the waits for jobs, uploads and batches.
//! - [`sim`]: what the simulator saw (bills, calls, webhooks, shape refusals, batches).
//! - [`api`]: the HTTP layer under the client, and the error envelope check.
//! - [`browser`]: Chromium through playwright-rs, with action / find / check helpers.
//! - [`pdfs`]: real small PDFs made in the tests.
//! - [`timing`]: where a suite's time goes (stack start, waiting, running), for the xtask.

pub mod api;
pub mod browser;
pub mod client;
pub mod harness;
pub mod pdfs;
pub mod sim;
pub mod stack;
pub mod timing;
pub mod waits;

pub use client::{Client, Files};
pub use harness::{run_suite, run_suite_timed, run_suite_with, TestFn};
pub use sim::rollout_user;
pub use stack::{spawn_stack, spawn_stack_of, spawn_stack_with, StackConfig, TestStack};
pub use timing::pause;
pub use waits::eventually;
