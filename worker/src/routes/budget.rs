//! `GET /api/budget` (admins): what the BUDGET Durable Object holds — every model class's
//! requests / input-token / output-token buckets (limit, remaining, debt, charged), pauses after
//! 429s, calls in flight per lane — and the count of spend-limit alerts (429s without
//! retry-after).

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;

use crate::error::AppError;
use crate::identity::Caller;
use crate::routes::AppState;

#[worker::send]
pub async fn get(
    State(state): State<AppState>,
    Caller(caller): Caller,
) -> Result<Response, AppError> {
    caller.require_admin("see the budget")?;
    let budget = crate::lanes::state(&state.env).await?;
    let db = state.env.d1(crate::config::DB)?;
    let spend_limit = crate::db::last_beat(&db, "alert_spend_limit")
        .await?
        .and_then(|b| b.detail)
        .and_then(|d| d.parse::<u64>().ok())
        .unwrap_or(0);
    Ok(Json(serde_json::json!({
        "enforce": budget.enforce,
        "configured": budget.configured,
        "classes": budget.classes,
        "lanes": { "high": budget.high, "bulk": budget.bulk },
        "reservations": budget.reservations,
        "granted": budget.granted,
        "refused": budget.refused,
        "rate_limited": budget.rate_limited,
        "alerts": { "spend_limit_429s": spend_limit },
    }))
    .into_response())
}
