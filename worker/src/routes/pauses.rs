//! Pause and resume (admins): `GET /api/pauses`, `PUT /api/pauses` (`{"scope","value",
//! "reason"?}`: a lane, a model or a user), `DELETE /api/pauses/{scope}/{value}`. Resuming
//! releases the first slice of held jobs to their lanes at once; the cron releases the rest.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::error::ApiError;
use pipeline::pause::{parse_request, Pause, PauseList, Resumed, Scope};

use super::admission::json_body;
use crate::config::now_ms;
use crate::error::AppError;
use crate::identity::Caller;
use crate::services::AppState;

#[worker::send]
pub async fn list(State(state): State<AppState>, caller: Caller) -> Result<Response, AppError> {
    caller.0.require_admin("see the pauses")?;
    let items = state.store.pauses().await?;
    Ok(Json(PauseList { items }).into_response())
}

#[worker::send]
pub async fn pause(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    caller.0.require_admin("pause work")?;
    json_body(&headers, &body, 4 * 1024)?;
    let r = parse_request(&body)?;
    let p = Pause {
        scope: r.scope,
        value: r.value,
        reason: r.reason,
        paused_by: caller.0.user_id.as_str().to_owned(),
        paused_at: now_ms(),
    };
    state.store.pause(&p).await?;
    let stored = state
        .store
        .pauses()
        .await?
        .into_iter()
        .find(|x| x.scope == p.scope && x.value == p.value)
        .unwrap_or(p);
    Ok(Json(stored).into_response())
}

#[worker::send]
pub async fn resume(
    State(state): State<AppState>,
    caller: Caller,
    Path((scope, value)): Path<(String, String)>,
) -> Result<Response, AppError> {
    caller.0.require_admin("resume work")?;
    let scope = Scope::parse(&scope).ok_or_else(|| {
        ApiError::bad_request(
            "invalid_field",
            "scope must be \"lane\", \"model\" or \"user\"",
            Some("scope"),
        )
    })?;
    let resumed =
        state.store.resume(scope, &value).await?.ok_or_else(|| {
            ApiError::not_found(format!("no pause of {} {value}", scope.as_str()))
        })?;
    let released = crate::pauses::release(&state, now_ms()).await?;
    Ok(Json(Resumed { resumed, released }).into_response())
}
