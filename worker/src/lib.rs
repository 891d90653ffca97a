//! The claude-pipeline Worker: HTTP API, queue consumers, cron and the token-budget Durable Object.
//!
//! Decisions live in `pipeline`; this crate resolves the bindings once per invocation into
//! typed services ([`services::AppState`]) and carries the decisions out. This file holds only
//! the entry points.
//!
//! # Layout
//! - [`config`]: binding names (mirroring `wrangler.toml`) and every var, parsed once.
//! - [`services`]: the bindings as typed services — the store, the blobs, the lanes, the
//!   budget, the Anthropic client — in the `AppState` every entry point shares.
//! - [`store`]: the one store layer; all SQL is there.
//! - [`blobs`]: R2 (requests, uploads, answers); [`requests`]: the request each kind sends.
//! - [`routes`]: the axum router and its handlers; [`identity`]: the one identity extractor;
//!   [`error`]: `AppError`, the single error type at the HTTP boundary.
//! - [`consumer`]: the queue consumers (high, bulk, dead letters).
//! - [`message_batches`]: the batch mode — flushes into Message Batches, and the poller.
//! - [`anthropic`]: the Anthropic API over fetch, with timeouts.
//! - [`budget_client`]: the consumers' side of the budget; [`budget_object`]: the `TokenBudget`
//!   Durable Object itself.
//! - [`cron`]: the scheduled handler; [`ops`]: the metrics row; [`alerts`]: the operator's
//!   alerts and the notification webhook.

mod alerts;
mod anthropic;
mod blobs;
mod budget_client;
mod budget_object;
mod cells;
mod config;
mod consumer;
mod cron;
mod error;
mod files;
mod google_auth;
mod headroom;
mod identity;
mod message_batches;
mod meter;
mod models_watch;
mod ops;
mod pages;
mod pauses;
mod providers;
mod reconcile;
mod refusals;
mod requests;
mod retention;
mod routes;
mod routing;
mod services;
mod store;
mod webcrypto;
mod webhooks;

use tower_service::Service;
use worker::{event, Context, Env, HttpRequest, MessageBatch, ScheduleContext, ScheduledEvent};

pub use budget_object::TokenBudget;

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
    // Cells (`CELLS` > 1, this Worker being cell 0): a request naming a user of another cell
    // goes there, whole and unread, over its service binding (`CELL_<n>`).
    if let Some(cell) = cells::other_cell(&env, req.headers()) {
        let resp = env
            .service(&format!("CELL_{cell}"))?
            .fetch_request(req)
            .await?;
        return Ok(resp.map(axum::body::Body::new));
    }
    // A job's or an upload's own page: the frame shell, not the Submit page's.
    if req.method() == axum::http::Method::GET && pages::is_deep_page(req.uri().path()) {
        if let Some(frame) = pages::frame(&env).await {
            return Ok(frame);
        }
    }
    // A body left unread when the answer goes out (a 401, a 404, a 405 before any handler
    // reads it) leaves the connection in a state the local runtime cannot reuse. So bodies
    // are read first — and one too large for any JSON endpoint is drained and refused.
    let (parts, body) = req.into_parts();
    let body = axum::body::Body::new(body);
    if parts.method == axum::http::Method::POST && parts.uri.path() == "/batches" {
        let req = axum::http::Request::from_parts(parts, body);
        return Ok(routes::router(&env).call(req).await?);
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
    Ok(routes::router(&env).call(req).await?)
}

#[event(queue)]
async fn queue(
    batch: MessageBatch<serde_json::Value>,
    env: Env,
    _ctx: Context,
) -> worker::Result<()> {
    let state = services::AppState::from_env(&env, pipeline::envelope::Entry::Queue);
    let kept = state.as_ref().ok().cloned();
    let queue = batch.queue();
    consumer::handle_batch(batch, state).await;
    ended(kept.as_ref(), &format!("queue {queue}")).await;
    Ok(())
}

#[event(scheduled)]
async fn scheduled(event: ScheduledEvent, env: Env, _ctx: ScheduleContext) {
    let state = services::AppState::from_env(&env, pipeline::envelope::Entry::Cron);
    let kept = state.as_ref().ok().cloned();
    cron::run(&event, state).await;
    ended(kept.as_ref(), "cron").await;
}

/// At an invocation's end: a limit passed without a subrequest is logged, (`D1_STATS`) one
/// line says what it asked of the platform (`cargo xtask bench cost` sums them; the envelope
/// suite reads each entry point's peaks from them), and the peaks it raised are recorded for
/// the operator's headroom.
pub(crate) async fn ended(state: Option<&services::AppState>, what: &str) {
    let Some(state) = state else { return };
    state.meter.finish();
    if state.config.d1_stats {
        state.meter.log_use(what);
    }
    headroom::record(state).await;
}
