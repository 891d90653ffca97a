//! `GET /api/rollout?hours=48` (admins): the two paths of `POST /api/claude` side by side over
//! the last `hours` (1 to 720, default 48 — the seed's observation window): calls, p50 / p95
//! latency, failure rate and cost per call, with the rollout percent in force.

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::error::ApiError;
use serde::Deserialize;

use crate::config::now_ms;
use crate::error::AppError;
use crate::identity::Caller;
use crate::services::AppState;

/// The seed's rollout compares the paths for 48 hours before each step.
const DEFAULT_HOURS: i64 = 48;
const MAX_HOURS: i64 = 720;

#[derive(Debug, Deserialize)]
pub struct RolloutQuery {
    hours: Option<String>,
}

#[worker::send]
pub async fn get(
    State(state): State<AppState>,
    Caller(caller): Caller,
    Query(q): Query<RolloutQuery>,
) -> Result<Response, AppError> {
    caller.require_admin("see the rollout")?;
    let hours = match q.hours.as_deref().map(str::trim) {
        None | Some("") => DEFAULT_HOURS,
        Some(h) => h
            .parse::<i64>()
            .ok()
            .filter(|h| (1..=MAX_HOURS).contains(h))
            .ok_or_else(|| {
                ApiError::bad_request(
                    "invalid_field",
                    format!("hours must be a whole number from 1 to {MAX_HOURS}"),
                    Some("hours"),
                )
            })?,
    };
    let to = now_ms() + 1;
    let from = to - hours * 3_600_000;
    let calls = state.store.rollout_calls(from, to).await?;
    Ok(Json(pipeline::rollout::report(
        &calls,
        from,
        to,
        state.config.rollout_percent,
    ))
    .into_response())
}
