//! What the handlers share: a caller's own job, list pages and their cursors, and the answer
//! to a job whose queue send failed.

use pipeline::error::ApiError;
use pipeline::jobs::{Cursor, JobId};
use pipeline::status::Kind;

use crate::error::AppError;
use crate::identity::Caller;
use crate::services::AppState;
use crate::store::JobRow;

/// One of the caller's jobs (of this kind, if given): someone else's, an unknown id or one that
/// is not even an id is a 404 — the same answer, so ids cannot be probed.
pub async fn own_job(
    state: &AppState,
    caller: &Caller,
    id: &str,
    kind: Option<Kind>,
) -> Result<JobRow, AppError> {
    let what = match kind {
        Some(Kind::Feedback) => "feedback job",
        _ => "job",
    };
    let missing = || ApiError::not_found(format!("no {what} {id}"));
    let id = JobId::parse(id).ok_or_else(missing)?;
    Ok(state
        .store
        .job_for_user(id.as_str(), caller.0.user_id.as_str(), kind)
        .await?
        .ok_or_else(missing)?)
}

/// One page of the caller's jobs matching `filter`, newest first, each as `view` shows it at
/// this instant, with the cursor of the next page when there is one.
pub async fn job_page<V>(
    state: &AppState,
    user: &str,
    filter: &crate::store::jobs::JobFilter,
    (limit, cursor): (u32, Option<Cursor>),
    view: impl Fn(&JobRow, i64) -> V,
) -> Result<(Vec<V>, Option<String>), AppError> {
    let mut rows = state
        .store
        .list_jobs(user, filter, cursor.as_ref(), limit)
        .await?;
    let next_cursor = next_page(&mut rows, limit, crate::store::row::job_cursor);
    let now = crate::config::now_ms();
    Ok((rows.iter().map(|r| view(r, now)).collect(), next_cursor))
}

/// A job was stored but its queue send failed: the row says `enqueue_failed` (it will never
/// run) and the caller hears a 503 naming it, to submit again.
pub async fn enqueue_failed(state: &AppState, id: &str, what: &str, e: worker::Error) -> AppError {
    worker::console_error!("enqueue of {what} {id} failed: {e}");
    let reason = format!("the {what} could not be queued: {e}");
    if let Err(e) = state
        .store
        .mark_enqueue_failed(id, &reason, crate::config::now_ms())
        .await
    {
        return e.into();
    }
    ApiError::new(
        503,
        "enqueue_failed",
        format!("the {what} {id} was stored but could not be queued; it will not run — please submit again"),
        None,
    )
    .into()
}

/// A list page's `cursor` and `limit` as the client sent them, checked (400 naming the field
/// when malformed).
pub fn page(cursor: Option<&str>, limit: Option<&str>) -> Result<(u32, Option<Cursor>), AppError> {
    let limit = pipeline::jobs::page_limit(limit)?;
    let cursor = cursor.map(Cursor::decode).transpose()?;
    Ok((limit, cursor))
}

/// The query of a list without filters (`GET /api/feedback`, `GET /batches`).
#[derive(Debug, serde::Deserialize)]
pub struct PageQuery {
    cursor: Option<String>,
    limit: Option<String>,
}

impl PageQuery {
    pub fn parse(&self) -> Result<(u32, Option<Cursor>), AppError> {
        page(self.cursor.as_deref(), self.limit.as_deref())
    }
}

/// Cuts a list read with one row more than `limit` back to `limit` rows, and answers the cursor
/// of the next page (`cursor_of` its last row) when there is one.
pub fn next_page<T>(
    rows: &mut Vec<T>,
    limit: u32,
    cursor_of: impl Fn(&T) -> Cursor,
) -> Option<String> {
    if rows.len() <= limit as usize {
        return None;
    }
    rows.truncate(limit as usize);
    rows.last().map(|r| cursor_of(r).encode())
}
