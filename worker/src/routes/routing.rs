//! `GET /api/routing?days=N` (admins): the deadline router's figures over the last N days
//! (default 7, at most 90): how deadline jobs were routed, the deadlines met or missed, and the
//! money the batch path saved (`pipeline::routing::RoutingReport`).

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::error::ApiError;
use pipeline::money::UsdMicros;
use pipeline::routing::RoutingReport;
use serde::Deserialize;

use crate::config::now_ms;
use crate::error::AppError;
use crate::identity::Caller;
use crate::services::AppState;

#[derive(Debug, Deserialize)]
pub struct DaysQuery {
    days: Option<String>,
}

const DAY_MS: i64 = 86_400_000;

#[worker::send]
pub async fn get(
    State(state): State<AppState>,
    Caller(caller): Caller,
    Query(q): Query<DaysQuery>,
) -> Result<Response, AppError> {
    caller.require_admin("see the deadline routing figures")?;
    let days = match q.days.as_deref() {
        None => 7,
        Some(d) => d
            .parse::<u32>()
            .ok()
            .filter(|d| (1..=90).contains(d))
            .ok_or_else(|| {
                ApiError::bad_request(
                    "invalid_field",
                    "days must be a whole number from 1 to 90",
                    Some("days"),
                )
            })?,
    };
    let row = state
        .store
        .routing_summary(now_ms() - i64::from(days) * DAY_MS)
        .await?;
    let n = |v: i64| v.max(0) as u64;
    let policy = crate::routing::policy(&state);
    Ok(Json(RoutingReport {
        days,
        jobs: n(row.jobs),
        by_batch: n(row.by_batch),
        by_sync: n(row.by_sync),
        moved: n(row.moved),
        met: n(row.met),
        missed: n(row.missed),
        cost_micros: row.cost_micros,
        saved_micros: UsdMicros::new(row.batch_cost_micros.micros()),
        sync_s: policy.sync_ms / 1000,
        rescue_s: policy.rescue_ms / 1000,
        margin_s: policy.margin_ms / 1000,
        default_batch_s: policy.default_batch_ms / 1000,
    })
    .into_response())
}
