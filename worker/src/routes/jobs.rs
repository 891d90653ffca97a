//! The prompt-jobs API: `POST /jobs`, `GET /jobs`, `GET /jobs/:id`, `GET /jobs/:id/result`,
//! `POST /jobs/:id/cancel`.

use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::dto::{JobAck, JobList};
use pipeline::error::ApiError;
use pipeline::jobs::{self, Cursor};
use pipeline::prompt;
use pipeline::status::{Kind, Lane, Status};
use serde::Deserialize;

use crate::anthropic::Anthropic;
use crate::config::{now_ms, DB, RESULTS};
use crate::error::AppError;
use crate::identity::Caller;
use crate::jobs::{
    attempts, cancel as cancel_row, get_for_user, idempotency_stmt, insert_prompt_stmt, job_cursor,
    list_jobs, live_in_batch, mark_enqueue_failed, next_page, JobFilter, JobRow,
};
use crate::queues;
use crate::routes::{idempotency, idempotency_key, json_body, AppState, Idem};

/// 200,000 characters of up to 4 bytes, JSON-escaped, plus the other fields.
const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;

fn accepted(job_id: &str) -> Response {
    (StatusCode::ACCEPTED, Json(JobAck::queued(job_id))).into_response()
}

/// Validates; honours `Idempotency-Key`; puts the request in R2 (`prompts/<id>`), then the row
/// and the idempotency record in one `db.batch()`, then sends the job to its lane. Whatever
/// fails before the send leaves nothing behind; a failed send marks the row `enqueue_failed`.
#[worker::send]
pub async fn submit(
    State(state): State<AppState>,
    Caller(caller): Caller,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    json_body(&headers, &body, MAX_BODY_BYTES)?;
    let key = idempotency_key(&headers)?;
    let input = prompt::parse_input(&body, now_ms())?;
    let user = caller.user_id.as_str();
    crate::ops::admit(&state.env, &state.config, user).await?;
    let db = state.env.d1(DB)?;
    let record = match idempotency(&db, user, key, prompt::body_hash(&body), now_ms()).await? {
        Idem::Replay(job_id) => return Ok(accepted(&job_id)),
        Idem::Fresh(record) => record,
    };
    let record = record.as_ref().map(|(k, h)| (k.as_str(), h.as_str()));
    let id = create_prompt_job(&state, user, &input, record).await?;
    Ok(accepted(&id))
}

/// Creates a prompt job: the request to R2 (`prompts/<id>`), then the row (and the idempotency
/// record) in one `db.batch()`, then the queue send. Whatever fails before the send leaves
/// nothing behind; a failed send marks the row `enqueue_failed` and answers 503.
pub async fn create_prompt_job(
    state: &AppState,
    user: &str,
    input: &prompt::PromptInput,
    idempotency: Option<(&str, &str)>,
) -> Result<String, AppError> {
    let db = state.env.d1(DB)?;
    let now = now_ms();
    let id = jobs::new_id(queues::random_bytes()?);
    let request = serde_json::to_vec(&input.request())
        .map_err(|e| ApiError::internal(format!("cannot encode the request: {e}")))?;
    let bucket = state.env.bucket(RESULTS)?;
    let prompt_key = format!("prompts/{id}");
    bucket.put(&prompt_key, request).execute().await?;
    let expires_at = input.expires_in_s.map(|s| now + s as i64 * 1000);
    let mut statements = vec![insert_prompt_stmt(
        &db,
        &id,
        user,
        input.priority,
        input.mode,
        &input.model,
        expires_at,
        now,
    )?];
    if let Some((k, hash)) = idempotency {
        statements.push(idempotency_stmt(&db, user, k, hash, &id, now)?);
    }
    if let Err(e) = db.batch(statements).await {
        // No row, so the request object must not stay either.
        let _ = bucket.delete(&prompt_key).await;
        return Err(e.into());
    }
    if let Err(e) = queues::send_job(&state.env, &state.config, input.priority, &id).await {
        worker::console_error!("enqueue of {id} failed: {e}");
        mark_enqueue_failed(
            &db,
            &id,
            &format!("the job could not be queued: {e}"),
            now_ms(),
        )
        .await?;
        return Err(ApiError::new(
            503,
            "enqueue_failed",
            format!("the job {id} was stored but could not be queued; it will not run"),
            None,
        )
        .into());
    }
    Ok(id)
}

/// The result text of a completed job.
pub async fn result_text(state: &AppState, id: &str) -> Result<String, AppError> {
    let object = state
        .env
        .bucket(RESULTS)?
        .get(format!("results/{id}"))
        .execute()
        .await?
        .ok_or_else(|| ApiError::internal("the result of this completed job is missing"))?;
    Ok(object
        .body()
        .ok_or_else(|| ApiError::internal("the result of this completed job has no body"))?
        .text()
        .await?)
}

async fn own_job(state: &AppState, caller: &Caller, id: &str) -> Result<JobRow, AppError> {
    let missing = || ApiError::not_found(format!("no job {id}"));
    if !jobs::is_id(id) {
        return Err(missing().into());
    }
    let db = state.env.d1(DB)?;
    Ok(get_for_user(&db, id, caller.0.user_id.as_str(), None)
        .await?
        .ok_or_else(missing)?)
}

/// One of the caller's jobs; someone else's, or an unknown id, is a 404.
#[worker::send]
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    let row = own_job(&state, &caller, &id).await?;
    let mut view = row.job_view(now_ms());
    view.attempt_log = attempts(&state.env.d1(DB)?, &id).await?;
    Ok(Json(view).into_response())
}

/// The result text of a completed job, streamed from R2 — or, for a job that failed after a
/// paid call (a refusal, a thinking-only or unreadable answer), the raw answer that was kept.
#[worker::send]
pub async fn result(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    let row = own_job(&state, &caller, &id).await?;
    let status = row.status();
    if !row.has_result() {
        return Err(ApiError::new(
            409,
            "not_completed",
            format!("the job is {status}; its result exists once it is completed"),
            None,
        )
        .into());
    }
    let object = state
        .env
        .bucket(RESULTS)?
        .get(format!("results/{id}"))
        .execute()
        .await?
        .ok_or_else(|| ApiError::internal("the result of this completed job is missing"))?;
    // A failed job's kept answer is the Message JSON the API sent (`format: message`).
    let content_type = match object.custom_metadata()?.get("format").map(String::as_str) {
        Some("message") => "application/json",
        _ => "text/plain; charset=utf-8",
    };
    let stream = match object
        .body()
        .ok_or_else(|| ApiError::internal("the result of this completed job has no body"))?
        .response_body()?
    {
        worker::ResponseBody::Stream(s) => s,
        _ => {
            return Err(
                ApiError::internal("the result of this completed job is not a stream").into(),
            )
        }
    };
    // The R2 object's own ReadableStream, handed to the response without buffering it.
    let body = Body::new(worker::Body::new(stream));
    Ok(([("content-type", content_type)], body).into_response())
}

#[derive(Debug, Deserialize)]
pub struct ListQuery {
    status: Option<String>,
    priority: Option<String>,
    kind: Option<String>,
    cursor: Option<String>,
    limit: Option<String>,
}

/// The caller's jobs of every kind, newest first, filtered by status, priority and kind.
#[worker::send]
pub async fn list(
    State(state): State<AppState>,
    Caller(caller): Caller,
    Query(q): Query<ListQuery>,
) -> Result<Response, AppError> {
    let bad = |field: &str, what: &str| {
        ApiError::bad_request(
            "invalid_filter",
            format!("{field} must be {what}"),
            Some(field),
        )
    };
    let filter = JobFilter {
        status: match q.status.as_deref() {
            None => None,
            Some(s) => Some(Status::parse(s).ok_or_else(|| bad("status", "a job status"))?),
        },
        priority: match q.priority.as_deref() {
            None => None,
            Some("high") => Some(Lane::High),
            Some("bulk") => Some(Lane::Bulk),
            Some(_) => return Err(bad("priority", "high or bulk").into()),
        },
        kind: match q.kind.as_deref() {
            None => None,
            Some(k) => Some(
                Kind::ALL
                    .into_iter()
                    .find(|x| x.as_str() == k)
                    .ok_or_else(|| bad("kind", "feedback, prompt or pdf"))?,
            ),
        },
    };
    let limit = jobs::page_limit(q.limit.as_deref())?;
    let cursor = q.cursor.as_deref().map(Cursor::decode).transpose()?;
    let db = state.env.d1(DB)?;
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
    let list = JobList {
        items: rows.iter().map(|r| r.job_view(now)).collect(),
        next_cursor,
    };
    Ok(Json(list).into_response())
}

/// Cancels a job that has not run: queued (it will never be sent to Claude), or waiting inside a
/// Message Batch (its result will be ignored; when it was the batch's last live job, the batch is
/// canceled so that what has not run is not billed). A job running or finished is a 409.
#[worker::send]
pub async fn cancel(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    let row = own_job(&state, &caller, &id).await?;
    let db = state.env.d1(DB)?;
    if !cancel_row(&db, &row.id, now_ms()).await? {
        let status = own_job(&state, &caller, &id).await?.status();
        return Err(ApiError::new(
            409,
            "not_cancelable",
            format!("the job is {status}; only a queued or batched job can be canceled"),
            None,
        )
        .into());
    }
    // The last live job of an Anthropic batch takes the batch with it: what has not run yet
    // is not billed.
    if let Some(batch) = row.anthropic_batch_id.as_deref() {
        if row.status() == Status::Submitted && live_in_batch(&db, batch).await? == 0 {
            if let Err(e) = Anthropic::new(&state.config).cancel_batch(batch).await {
                worker::console_error!(
                    "canceling batch {batch}: {}",
                    pipeline::retry::describe(&e)
                );
            }
        }
    }
    let row = own_job(&state, &caller, &id).await?;
    Ok(Json(row.job_view(now_ms())).into_response())
}
