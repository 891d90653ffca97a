//! `POST /api/batches/poll`: runs the batch poller now (admins; everyone in open mode), so the
//! demo does not have to wait for the next cron tick.

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::error::ApiError;

use crate::error::AppError;
use crate::identity::Caller;
use crate::routes::AppState;

#[worker::send]
pub async fn run(
    State(state): State<AppState>,
    Caller(caller): Caller,
) -> Result<Response, AppError> {
    if !caller.is_admin() {
        return Err(ApiError::forbidden("only admins may run the batch poller").into());
    }
    let report = crate::batches::poll(&state.env, &state.config).await?;
    Ok(Json(report).into_response())
}
