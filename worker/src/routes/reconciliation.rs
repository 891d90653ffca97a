//! Reconciliation with Anthropic's bill (admins): `GET /api/reconciliation` is the last run
//! (the cron's daily one, or the last `POST`), `POST /api/reconciliation/run?from=&to=` runs one
//! now over the UTC days `from`..=`to` (default the last 7, today included; at most 31).
//! Both need `ANTHROPIC_ADMIN_KEY` (409 `not_configured` without it).

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::error::ApiError;
use pipeline::ops::rollups::DayRange;
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

#[worker::send]
pub async fn get(
    State(state): State<AppState>,
    Caller(caller): Caller,
) -> Result<Response, AppError> {
    caller.require_admin("see the reconciliation")?;
    match crate::reconcile::last(&state).await? {
        Some(run) => Ok(Json(run).into_response()),
        None if state.config.anthropic_admin_key.is_none() => Err(ApiError::new(
            409,
            "not_configured",
            "reconciliation needs an Admin API key: set the ANTHROPIC_ADMIN_KEY secret",
            None,
        )
        .into()),
        None => Err(ApiError::not_found("no reconciliation has run yet").into()),
    }
}

#[worker::send]
pub async fn run(
    State(state): State<AppState>,
    Caller(caller): Caller,
    Query(q): Query<RangeQuery>,
) -> Result<Response, AppError> {
    caller.require_admin("run a reconciliation")?;
    // The rollup outlives retention: any day may be compared.
    let r = DayRange::parse(q.from.as_deref(), q.to.as_deref(), now_ms(), i64::MIN / 2)?;
    let run = crate::reconcile::run(&state, r.from_day, r.to_day).await?;
    Ok(Json(run).into_response())
}
