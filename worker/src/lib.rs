//! The claude-pipeline Worker: HTTP API, queue consumers, cron and the token-budget Durable Object.
//!
//! Decisions live in `pipeline`; this crate resolves bindings and carries decisions out.
//!
//! # Layout
//! - [`config`]: binding names (mirroring `wrangler.toml`) and vars read once per invocation.
//! - [`routes`]: the axum router and its handlers.
//! - [`identity`]: the one extractor that resolves who is calling.
//! - [`error`]: `AppError`, the single error type at the HTTP boundary.
//! - [`consumer`]: the queue consumers (high, bulk, dead letters).
//! - [`anthropic`]: the Anthropic API over fetch, with timeouts.
//! - [`jobs`]: job rows in D1 (guarded writes); [`results`]: answers into R2 and D1.
//! - [`queues`]: sending jobs to their lane; [`lanes`]: lane slots from the BUDGET object.
//! - [`batches`]: the Message Batches poller.
//! - [`cron`]: the scheduled handler.
//! - [`budget`]: the `TokenBudget` Durable Object.
//! - [`db`]: small D1 helpers.

mod anthropic;
mod batches;
mod budget;
mod config;
mod consumer;
mod cron;
mod db;
mod error;
mod flush;
mod identity;
mod jobs;
mod lanes;
mod queues;
mod results;
mod routes;
mod uploads;

use tower_service::Service;
use worker::{event, Context, Env, HttpRequest, MessageBatch, ScheduleContext, ScheduledEvent};

pub use budget::TokenBudget;

#[event(start)]
fn start() {
    console_error_panic_hook::set_once();
}

#[event(fetch)]
async fn fetch(
    req: HttpRequest,
    env: Env,
    _ctx: Context,
) -> worker::Result<axum::http::Response<axum::body::Body>> {
    Ok(routes::router(env).call(req).await?)
}

#[event(queue)]
async fn queue(
    batch: MessageBatch<serde_json::Value>,
    env: Env,
    _ctx: Context,
) -> worker::Result<()> {
    consumer::handle_batch(batch, &env).await;
    Ok(())
}

#[event(scheduled)]
async fn scheduled(event: ScheduledEvent, env: Env, _ctx: ScheduleContext) {
    cron::run(&event, &env).await;
}
