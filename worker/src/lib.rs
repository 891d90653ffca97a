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
mod ops;
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

/// Request bodies read before routing, at most (every JSON endpoint takes far less); uploads
/// (`POST /batches`) stream instead.
const MAX_BUFFERED_BODY: usize = 4 * 1024 * 1024;

#[event(fetch)]
async fn fetch(
    req: HttpRequest,
    env: Env,
    _ctx: Context,
) -> worker::Result<axum::http::Response<axum::body::Body>> {
    use futures_util::StreamExt;
    // A body left unread when the answer goes out (a 401, a 404, a 405 before any handler
    // reads it) leaves the connection in a state the local runtime cannot reuse. So bodies
    // are read first — and one too large for any JSON endpoint is drained and refused.
    let (parts, body) = req.into_parts();
    let body = axum::body::Body::new(body);
    if parts.method == axum::http::Method::POST && parts.uri.path() == "/batches" {
        let req = axum::http::Request::from_parts(parts, body);
        return Ok(routes::router(env).call(req).await?);
    }
    let mut stream = body.into_data_stream();
    let mut buf = Vec::new();
    let mut too_large = false;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| worker::Error::RustError(e.to_string()))?;
        if !too_large && buf.len() + chunk.len() <= MAX_BUFFERED_BODY {
            buf.extend_from_slice(&chunk);
        } else {
            too_large = true;
            buf.clear();
        }
    }
    if too_large {
        let err = pipeline::error::ApiError::new(
            413,
            "body_too_large",
            format!("the body must be at most {MAX_BUFFERED_BODY} bytes"),
            None,
        );
        return Ok(axum::response::IntoResponse::into_response(
            error::AppError(err),
        ));
    }
    let req = axum::http::Request::from_parts(parts, axum::body::Body::from(buf));
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
