//! `GET /api/budget` (admins): what the BUDGET Durable Object holds — for now, the calls in flight
//! per lane against their limits.

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
    Ok(Json(serde_json::json!({ "lanes": lanes })).into_response())
}
