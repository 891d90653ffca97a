//! `GET /api/budget` (admins): what the BUDGET Durable Object holds — for now, the calls in flight
//! per lane against their limits — and the count of spend-limit alerts (429s without
//! retry-after).

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::error::ApiError;

use crate::error::AppError;
use crate::identity::Caller;
use crate::routes::AppState;

#[worker::send]
pub async fn get(
    State(state): State<AppState>,
    Caller(caller): Caller,
) -> Result<Response, AppError> {
    if !caller.is_admin() {
        return Err(ApiError::forbidden("only admins may see the budget").into());
    }
    let lanes = crate::lanes::state(&state.env).await?;
    let db = state.env.d1(crate::config::DB)?;
    let spend_limit = crate::db::last_beat(&db, "alert_spend_limit")
        .await?
        .and_then(|b| b.detail)
        .and_then(|d| d.parse::<u64>().ok())
        .unwrap_or(0);
    Ok(Json(serde_json::json!({
        "lanes": lanes,
        "alerts": { "spend_limit_429s": spend_limit },
    }))
    .into_response())
}
