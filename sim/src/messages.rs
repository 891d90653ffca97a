//! `POST /v1/messages` and `POST /v1/messages/count_tokens`.
//!
//! A Messages call: headers → body → markers and random faults → answer → rate limits → billing
//! → latency. Billing happens before the latency sleep, as with the real API: a client that
//! gives up waiting has still been charged, which is what makes "paid twice" measurable. A hang
//! is the same: the answer is made and billed, then held past any client timeout — what a retry
//! after a timeout really costs shows in `/_sim/stats` (`abandoned_billed`).

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use crate::answering::{commit, json_body, message, plan, Payer};
use crate::auth::{check_headers, version};
use crate::clock::now_ms;
use crate::errors::{with_headers, SimError};
use crate::faults::{self, Fault};
use crate::pricing;
use crate::request::{self, Parsed};
use crate::state::Sim;

/// The Messages API accepts requests of up to 32 MB.
pub const MAX_REQUEST_BYTES: usize = 32 * 1024 * 1024;
/// The header the Worker sends with each job's calls (harmless to the real API).
pub const JOB_HEADER: &str = "x-job-id";

/// `POST /v1/messages`.
pub async fn create(
    State(sim): State<Sim>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    match handle(&sim, &headers, body).await {
        Ok(resp) => {
            sim.lock().stats.call("messages", 200);
            resp
        }
        Err(mut e) => {
            let mut inner = sim.lock();
            inner.stats.call("messages", e.status);
            inner.stats.refused("messages", &e);
            // Every answer carries the rate-limit state, errors included.
            if !e
                .headers
                .iter()
                .any(|(k, _)| k.starts_with("anthropic-ratelimit-"))
            {
                let now = now_ms();
                e.headers.extend(inner.limits.headers(now));
            }
            e.into_response()
        }
    }
}

async fn handle(
    sim: &Sim,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, SimError> {
    let req = read(sim, headers, body, true)?;
    let job = job_of(headers);
    answer(sim, req, job, Payer::Anthropic).await
}

/// The job a call bills (`x-job-id`), if it names one.
pub fn job_of(headers: &HeaderMap) -> Option<String> {
    headers
        .get(JOB_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// Answers a validated Messages request: faults, the answer, the rate limits (the Anthropic
/// API's; another route's are its own), the bill, the latency.
pub async fn answer(
    sim: &Sim,
    req: Parsed,
    job: Option<String>,
    payer: Payer,
) -> Result<Response, SimError> {
    let (fault, hang_ms, retry_after_s) = {
        let mut guard = sim.lock();
        let inner = &mut *guard;
        let fault = faults::decide(
            &req.markers,
            &req.model,
            req.prompt_hash,
            &mut inner.counters,
            &inner.knobs,
            &mut inner.rng,
            true,
        );
        if fault == Fault::Hang {
            // Recorded now: the client will most likely give up before we answer.
            inner.stats.call("messages", "hang");
        }
        (fault, inner.knobs.hang_ms, inner.knobs.retry_after_s)
    };
    let mut hold_ms = 0;
    match fault {
        Fault::None => {}
        Fault::Status(status) => return Err(SimError::injected(status, retry_after_s)),
        Fault::Slow(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
        // The model works on and is billed; the answer comes after the client has given up.
        Fault::Hang => hold_ms = hang_ms,
    }

    let now = now_ms();
    let (message, rl_headers, latency_ms) = {
        let mut inner = sim.lock();
        let (answer, usage) = plan(&inner, &req, now);
        // Cache reads do not count toward input tokens per minute, as with the real API.
        let counted_input = usage.input_tokens + usage.cache_creation_input_tokens;
        // Output tokens are estimated from max_tokens when the request starts and adjusted to
        // what was generated when it ends, as with the real API.
        let reserved_output = req.max_tokens.max(usage.output_tokens);
        let anthropic = payer == Payer::Anthropic;
        let taken = match anthropic {
            true => inner.limits.try_take(counted_input, reserved_output, now),
            false => Ok(()),
        };
        if let Err(wait_ms) = taken {
            let mut e = SimError::injected(429, (wait_ms as u64).div_ceil(1000).max(1));
            e.headers.extend(inner.limits.headers(now));
            return Err(e);
        }
        commit(
            &mut inner,
            &req,
            &usage,
            (now, false),
            (job.as_deref(), payer),
        );
        if hold_ms > 0 {
            let cost = pricing::cost_micros(&req.model, &usage, false, now);
            inner.stats.abandoned(job.as_deref(), cost);
        }
        let latency = inner.knobs.latency_ms
            + (inner.knobs.latency_per_token_ms * usage.output_tokens as f64) as u64
            + hold_ms;
        let unused = req.max_tokens.saturating_sub(usage.output_tokens);
        (
            (message(&req, answer, usage, false), unused),
            inner.limits.headers(now),
            latency,
        )
    };
    let (message, unused) = message;
    if latency_ms > 0 {
        tokio::time::sleep(Duration::from_millis(latency_ms)).await;
    }
    if payer != Payer::Anthropic {
        // Another route answers without the Anthropic API's rate-limit headers.
        return Ok(Json(message).into_response());
    }
    sim.lock().limits.refund_output(unused, now_ms());
    Ok(with_headers(Json(message).into_response(), rl_headers))
}

/// Header checks, the size limit, JSON, then validation.
fn read(
    sim: &Sim,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
    require_max_tokens: bool,
) -> Result<Parsed, SimError> {
    check_headers(sim, headers)?;
    let value = json_body(body, MAX_REQUEST_BYTES)?;
    let mut inner = sim.lock();
    let files = inner.knobs.files_api.then_some(&inner.files);
    let req = request::parse(
        &value,
        require_max_tokens,
        version(headers),
        now_ms(),
        files,
    )?;
    crate::models::refuse_dropped((req.spec, &req.model), &inner.knobs)?;
    inner.stats.documents(&req);
    Ok(req)
}

/// A Messages request unwrapped from another route's body (`crate::clouds`): validated as the
/// Anthropic API's current version validates it, without the Files API (no other route has it).
pub fn validate_elsewhere(sim: &Sim, value: &serde_json::Value) -> Result<Parsed, SimError> {
    let mut inner = sim.lock();
    let req = request::parse(value, true, "2023-06-01", now_ms(), None)?;
    crate::models::refuse_dropped((req.spec, &req.model), &inner.knobs)?;
    inner.stats.documents(&req);
    Ok(req)
}

/// `POST /v1/messages/count_tokens` → `{"input_tokens": N}`.
pub async fn count_tokens(
    State(sim): State<Sim>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let result = read(&sim, &headers, body, false);
    let mut inner = sim.lock();
    match result {
        Ok(req) => {
            inner.stats.call("count_tokens", 200);
            with_headers(
                Json(json!({"input_tokens": req.input_tokens})).into_response(),
                vec![],
            )
        }
        Err(e) => {
            inner.stats.call("count_tokens", e.status);
            inner.stats.refused("count_tokens", &e);
            e.into_response()
        }
    }
}
