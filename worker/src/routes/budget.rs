//! `GET /api/budget` (admins): what the BUDGET Durable Object holds — every model class's
//! requests / input-token / output-token buckets (limit, remaining, debt, charged), pauses after
//! 429s, calls in flight per lane — and the count of spend-limit alerts (429s without
//! retry-after).

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;

use pipeline::dto::{BudgetAlerts, BudgetReport, LanesInFlight};

use crate::error::AppError;
use crate::identity::Caller;
use crate::services::AppState;

#[worker::send]
pub async fn get(
    State(state): State<AppState>,
    Caller(caller): Caller,
) -> Result<Response, AppError> {
    caller.require_admin("see the budget")?;
    let budget = state.budget.state().await?;
    let spend_limit_429s = state.store.counter("alert_spend_limit").await?;
    Ok(Json(BudgetReport {
        enforce: budget.enforce,
        configured: budget.configured,
        lanes: LanesInFlight {
            high: budget.high,
            bulk: budget.bulk,
        },
        classes: budget.classes,
        reservations: budget.reservations,
        granted: budget.granted,
        refused: budget.refused,
        rate_limited: budget.rate_limited,
        alerts: BudgetAlerts { spend_limit_429s },
    })
    .into_response())
}
