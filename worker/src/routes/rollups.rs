//! The usage rollup's admin commands: `GET /api/usage/rollups?from=&to=` compares the rollup
//! with a scan of the range's jobs; `POST /api/usage/rollups/rebuild?from=&to=` replaces the
//! range's rollup with that scan (the one-off backfill, or a repair). Both cover at most 31 UTC
//! days (default the last 7), none before retention's horizon.

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::ops::rollups::{compare, DayRange, Rebuilt};
use serde::Deserialize;

use crate::config::now_ms;
use crate::error::AppError;
use crate::identity::Caller;
use crate::services::AppState;

#[derive(Debug, Deserialize)]
pub struct RangeQuery {
    from: Option<String>,
    to: Option<String>,
}

fn range(state: &AppState, q: &RangeQuery) -> Result<DayRange, AppError> {
    let now = now_ms();
    Ok(DayRange::parse(
        q.from.as_deref(),
        q.to.as_deref(),
        now,
        state.config.retention.oldest_whole_day(now),
    )?)
}

#[worker::send]
pub async fn check(
    State(state): State<AppState>,
    Caller(caller): Caller,
    Query(q): Query<RangeQuery>,
) -> Result<Response, AppError> {
    caller.require_admin("check the usage rollup")?;
    let r = range(&state, &q)?;
    let rollup = state.store.rollup_rows(r).await?;
    let scan = state.store.rollup_scan(r).await?;
    Ok(Json(compare(r, &rollup, &scan)).into_response())
}

#[worker::send]
pub async fn rebuild(
    State(state): State<AppState>,
    Caller(caller): Caller,
    Query(q): Query<RangeQuery>,
) -> Result<Response, AppError> {
    caller.require_admin("rebuild the usage rollup")?;
    let r = range(&state, &q)?;
    let groups = state.store.rebuild_rollup(r).await?;
    let day = |d: i64| pipeline::clock::day_of(d * pipeline::clock::DAY_MS);
    Ok(Json(Rebuilt {
        from: day(r.from_day),
        to: day(r.to_day - 1),
        groups,
    })
    .into_response())
}
