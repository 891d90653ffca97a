//! The platform-free heart of claude-pipeline.
//!
//! Everything here is pure: no I/O and no clock reads (time is always an argument), so the same
//! code runs inside the Worker (wasm32), the simulator and the SPA, and is tested on the host.
//!
//! # Layout
//! - [`status`]: job statuses, kinds, lanes and modes, the status state machine and the
//!   transitions whose guards the store's SQL is made of.
//! - [`identity`]: auth modes, user ids and roles, and the identity decision the Worker's one
//!   extractor carries out.
//! - [`jobs`]: job ids, elapsed time and list cursors.
//! - [`batching`]: the bulk lane's accumulation, flushes, batch-result outcomes and recovery.
//! - [`budget`]: the token budget (RPM / ITPM / OTPM buckets, reservations, reconciliation).
//! - [`lanes`]: per-lane in-flight slots (leases) kept by the BUDGET Durable Object.
//! - [`fair`]: fair shares of a lane across users (which new job a delivered message runs).
//! - [`multipart`]: a streaming, tolerant multipart/form-data reader.
//! - [`open_mode`]: what `AUTH_MODE=open` allows: loopback hosts, no cross-site writes.
//! - [`ops`]: the operator's side: metrics, usage reports, daily budgets, DLQ triage.
//! - [`pdf`]: multi-PDF uploads: limits, file checks, display names, templates, requests, extraction.
//! - [`models`]: the model catalog: ids, limits, what each model refuses, prices with their
//!   dates, tokenizers, rate-limit groups, retirement.
//! - [`shape`]: requests checked and shaped per model (nothing is sent that a model refuses).
//! - [`answer`]: what a paid answer means for its job (usable, or failed once, never retried).
//! - [`pricing`]: cost in micro-dollars at the catalog's prices.
//! - [`prompt`]: prompt jobs' input and the Idempotency-Key rules.
//! - [`retention`]: what is kept and for how long; what one cron run deletes.
//! - [`outcome`]: how a call to Claude ended, and what kind of failure ended a job.
//! - [`retry`]: what a consumer does after a call (ack, retry with backoff, fail, dead-letter).
//! - [`routing`]: deadline-aware routing — batch while the deadline allows, moved to sync before
//!   it is at risk, refused when not even sync fits.
//! - [`delivery`]: what a consumer does with a delivered job (run it, expire it, accumulate it)
//!   and while it waits for the token budget.
//! - [`rollout`]: which users' calls take the queue path.
//! - [`pause`]: pausing a lane, a model or a user, and which pause holds a job.
//! - [`tags`]: `key=value` tags on jobs, checked and stored for usage by tag.
//! - [`timing`]: every delay of the product as configuration, the three timing profiles and backoff.
//! - [`tokens`]: token estimation from text.
//! - [`webhooks`]: completion webhooks — Standard Webhooks signatures, retries, callback URLs.
//! - [`anthropic`]: Anthropic wire types (Messages API, error bodies, rate-limit headers).
//! - [`clock`]: RFC 3339 timestamps and UTC calendar days (chrono).
//! - [`money`]: micro-dollars written and read for people.
//! - [`dto`]: the JSON shapes the Worker serves and the SPA reads, and the request bodies the
//!   producers accept ([`dto::JobRequest`], [`dto::FeedbackRequest`], [`dto::KeyRequest`]).
//! - [`envelope`]: Cloudflare's per-invocation limits per plan, and the plan that shares an
//!   invocation's room between the loops that work per item.
//! - [`error`]: the contract's error envelope.
//! - [`caps`]: budget caps and the figures a refusal under one carries.
//! - [`feedback`]: the feedback flow's input, prompt and analysis (with JSON repair).

#[macro_use]
mod text;

pub mod answer;
pub mod anthropic;
pub mod batching;
pub mod breaker;
pub mod budget;
pub mod caps;
pub mod cells;
pub mod clock;
pub mod decimal;
pub mod delivery;
pub mod dto;
pub mod envelope;
pub mod error;
pub mod fair;
pub mod feedback;
pub mod identity;
pub mod jobs;
pub mod lanes;
pub mod models;
pub mod money;
pub mod multipart;
pub mod open_mode;
pub mod ops;
pub mod outcome;
pub mod pause;
pub mod pdf;
pub mod pricing;
pub mod prompt;
pub mod provider;
pub mod refusal;
pub mod retention;
pub mod retry;
pub mod rollout;
pub mod routing;
pub mod shape;
pub mod sigv4;
pub mod status;
pub mod tags;
pub mod thinking;
pub mod timing;
pub mod tokens;
pub mod webhooks;
