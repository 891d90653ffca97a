//! `POST /api/batches/poll`: runs the batch machinery now — flush due accumulations, resolve
//! flushes of unknown outcome, poll open batches — (admins; everyone in open mode), so the demo
//! and the tests do not have to wait for the next cron tick.

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::dto::BatchMachinery;
use pipeline::envelope::costs;
use pipeline::error::ApiError;

use crate::error::AppError;
use crate::identity::Caller;
use crate::message_batches::{flush, poll};
use crate::services::AppState;

#[worker::send]
pub async fn run(
    State(state): State<AppState>,
    Caller(caller): Caller,
) -> Result<Response, AppError> {
    batch_machinery(&state, &caller, false).await
}

/// `POST /api/batches/flush`: the same, but every waiting batch-mode job is flushed now, due or
/// not (an operator's "send what is waiting").
#[worker::send]
pub async fn flush(
    State(state): State<AppState>,
    Caller(caller): Caller,
) -> Result<Response, AppError> {
    batch_machinery(&state, &caller, true).await
}

async fn batch_machinery(
    state: &AppState,
    caller: &pipeline::identity::Identity,
    force: bool,
) -> Result<Response, AppError> {
    if !caller.is_admin() {
        return Err(ApiError::forbidden("only admins may run the batch machinery").into());
    }
    // The flushes may take half of the request's room; the poll then takes all that is left
    // (`pipeline::envelope`): with nothing due, the poll has nearly the whole request.
    let mut for_flush = state.meter.shares(costs::CALLER_RESERVE, &[1, 1])[0];
    let flushed = flush::flush_due(state, force, &mut for_flush).await;
    let recovered = flush::recover(state).await?;
    let mut for_poll = state.meter.share(costs::CALLER_RESERVE);
    let report = poll::poll(state, &mut for_poll).await?;
    Ok(Json(BatchMachinery {
        flush: flushed,
        recovery: recovered,
        poll: report,
    })
    .into_response())
}
