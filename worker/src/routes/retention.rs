//! `GET /api/retention` (admins): what is kept and for how long, and what the last cron run
//! removed. `POST /api/retention/run` (admins) runs one slice now.

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::retention::{Removed, RetentionView};

use crate::error::AppError;
use crate::identity::Caller;
use crate::services::AppState;

#[worker::send]
pub async fn get(
    State(state): State<AppState>,
    Caller(caller): Caller,
) -> Result<Response, AppError> {
    caller.require_admin("see retention")?;
    let last = state.store.last_beat(crate::retention::BEAT).await?;
    Ok(Json(RetentionView {
        policy: state.config.retention,
        last_run_at: last.as_ref().map(|b| b.at as i64),
        last_run: last.and_then(|b| b.detail),
    })
    .into_response())
}

#[worker::send]
pub async fn run(
    State(state): State<AppState>,
    Caller(caller): Caller,
) -> Result<Response, AppError> {
    caller.require_admin("run retention")?;
    let removed: Removed = crate::retention::run(&state).await?;
    Ok(Json(removed).into_response())
}
