//! `POST /feedback`, `GET /api/feedback/:id`, `GET /api/feedback`.

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::dto::{FeedbackAck, FeedbackList};
use pipeline::error::ApiError;
use pipeline::jobs::{self, Cursor};
use pipeline::status::{Kind, Status};
use pipeline::{feedback, prompt};
use serde::Deserialize;

use crate::config::{now_ms, DB};
use crate::error::AppError;
use crate::identity::Caller;
use crate::jobs::{
    get_for_user, idempotency_stmt, insert_feedback_stmt, job_cursor, list_jobs,
    mark_enqueue_failed, next_page, JobFilter, NewFeedback,
};
use crate::queues;
use crate::routes::{idempotency, idempotency_key, json_body, AppState, Idem};

/// A feedback body is a few KB at most; anything far larger is refused before it is read.
const MAX_BODY_BYTES: usize = 64 * 1024;

/// Validates; honours `Idempotency-Key` (as `POST /jobs` does); writes the row (`queued`) and
/// the key's record in one `db.batch()`, then sends the job to its lane. A failed send turns the
/// row into `enqueue_failed` and answers 503 saying so.
// The Workers runtime is single-threaded and its futures are !Send; axum wants Send handlers.
#[worker::send]
pub async fn submit(
    State(state): State<AppState>,
    Caller(caller): Caller,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    json_body(&headers, &body, MAX_BODY_BYTES)?;
    let key = idempotency_key(&headers)?;
    let input = feedback::parse_input(&body, now_ms())?;
    let user = caller.user_id.as_str();
    crate::ops::admit(&state.env, &state.config, user).await?;
    let db = state.env.d1(DB)?;
    let now = now_ms();
    // Keys are per user across producers: the path is part of the hash, so a key first used on
    // `/jobs` never replays as feedback.
    let hash = prompt::body_hash(&[b"POST /feedback\n".as_slice(), &body].concat());
    let record = match idempotency(&db, user, key, hash, now).await? {
        Idem::Replay(id) => return Ok(ack(id, input.mode)),
        Idem::Fresh(record) => record,
    };
    let id = jobs::new_id(queues::random_bytes()?);
    let lane = input.mode.default_lane();
    let mut statements = vec![insert_feedback_stmt(
        &db,
        &NewFeedback {
            id: &id,
            user_id: user,
            mode: input.mode,
            lane,
            model: input.model,
            source: &input.source,
            text: &input.text,
            now,
        },
    )?];
    if let Some((k, h)) = &record {
        statements.push(idempotency_stmt(&db, user, k, h, &id, now)?);
    }
    db.batch(statements).await?;
    let sent = queues::send_job(&state.env, &state.config, lane, &id).await;
    if let Err(e) = sent {
        worker::console_error!("enqueue of {id} failed: {e}");
        let reason = format!("the job could not be queued: {e}");
        mark_enqueue_failed(&db, &id, &reason, now_ms()).await?;
        let mut err = ApiError::new(
            503,
            "enqueue_failed",
            "the job was stored but could not be queued; it will not run — please submit again",
            None,
        );
        err.body.error = format!("{} (id {id})", err.body.error);
        return Err(err.into());
    }
    Ok(ack(id, input.mode))
}

fn ack(id: String, mode: pipeline::status::Mode) -> Response {
    let ack = FeedbackAck {
        ok: true,
        status: Status::Queued,
        id,
        mode,
    };
    (StatusCode::ACCEPTED, Json(ack)).into_response()
}

/// One of the caller's feedback jobs; someone else's, or an unknown id, is a 404.
#[worker::send]
pub async fn get(
    State(state): State<AppState>,
    Caller(caller): Caller,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    let missing = || ApiError::not_found(format!("no feedback job {id}"));
    if !jobs::is_id(&id) {
        return Err(missing().into());
    }
    let db = state.env.d1(DB)?;
    let row = get_for_user(&db, &id, caller.user_id.as_str(), Some(Kind::Feedback))
        .await?
        .ok_or_else(missing)?;
    Ok(Json(row.feedback_view(now_ms())).into_response())
}

#[derive(Debug, Deserialize)]
pub struct ListQuery {
    cursor: Option<String>,
    limit: Option<String>,
}

/// The caller's feedback jobs, newest first, a page at a time.
#[worker::send]
pub async fn list(
    State(state): State<AppState>,
    Caller(caller): Caller,
    Query(q): Query<ListQuery>,
) -> Result<Response, AppError> {
    let limit = jobs::page_limit(q.limit.as_deref())?;
    let cursor = q.cursor.as_deref().map(Cursor::decode).transpose()?;
    let db = state.env.d1(DB)?;
    let filter = JobFilter {
        kind: Some(Kind::Feedback),
        ..JobFilter::default()
    };
    let mut rows = list_jobs(
        &db,
        caller.user_id.as_str(),
        &filter,
        cursor.as_ref(),
        limit,
    )
    .await?;
    let next_cursor = next_page(&mut rows, limit, job_cursor);
    let now = now_ms();
    let list = FeedbackList {
        items: rows.iter().map(|r| r.feedback_view(now)).collect(),
        next_cursor,
    };
    Ok(Json(list).into_response())
}
