//! The prompt-jobs API: `POST /jobs`, `GET /jobs`, `GET /jobs/:id`, `GET /jobs/:id/result`,
//! `POST /jobs/:id/cancel`.

use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::dto::{JobAck, JobList};
use pipeline::error::ApiError;
use pipeline::money::UsdMicros;
use pipeline::prompt;
use pipeline::status::CallPath;
use pipeline::status::{Kind, Lane, Status};
use serde::Deserialize;

use super::admission::{accept, Idem};
use super::common::{job_page, own_job, page};
use super::staged::{enqueue, Committed, Staged};
use crate::blobs::prompt_key;
use crate::config::now_ms;
use crate::error::AppError;
use crate::identity::Caller;
use crate::services::new_id;
use crate::services::AppState;
use crate::store::jobs::{JobFilter, NewJob};
use crate::store::JobRow;

/// 200,000 characters of up to 4 bytes, JSON-escaped, plus the other fields.
const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;

fn accepted(job_id: &str) -> Response {
    (StatusCode::ACCEPTED, Json(JobAck::queued(job_id))).into_response()
}

/// Validates; honours `Idempotency-Key`; then creates the job.
#[worker::send]
pub async fn submit(
    State(state): State<AppState>,
    Caller(caller): Caller,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    let user = caller.user_id.as_str();
    let limits = ("", MAX_BODY_BYTES);
    let need = |i: &prompt::PromptInput| {
        super::admission::worst_case(
            &state,
            &i.request,
            None,
            i.mode,
            i.fallback_model.as_deref(),
        )
    };
    let (input, idem, need) = accept(
        &state,
        user,
        &headers,
        &body,
        limits,
        prompt::parse_input,
        need,
    )
    .await?;
    let record = match idem {
        Idem::Replay(job_id) => return Ok(accepted(&job_id)),
        Idem::Fresh(record) => record,
    };
    crate::models_watch::admit_job(&state, &input.model, input.fallback_model.as_deref()).await?;
    let callback = crate::webhooks::callback(&state, &caller, input.callback_url.as_deref())?;
    let mut input = input;
    let routed =
        crate::routing::at_submission(&state, &input.model, input.deadline_at, now_ms()).await?;
    if let Some((mode, _)) = routed {
        input.mode = mode;
    }
    let job = NewPrompt {
        user,
        input: &input,
        claim: record.as_ref(),
        path: None,
        reserved: need,
        callback,
        routed: routed.map(|r| r.1),
    };
    let id = create_prompt_job(&state, &job).await?;
    let ack = JobAck::queued(&id).warned(&input.model, now_ms(), &input.warnings);
    Ok((StatusCode::ACCEPTED, Json(ack)).into_response())
}

/// A prompt job to create: whose, what it asks, the claim of its idempotency key, which path of
/// `POST /api/claude` makes it (if one does), and the worst case it reserves.
pub struct NewPrompt<'a> {
    pub user: &'a str,
    pub input: &'a prompt::PromptInput,
    pub claim: Option<&'a (String, String)>,
    pub path: Option<CallPath>,
    pub reserved: UsdMicros,
    /// Where its final view is posted when it ends.
    pub callback: Option<pipeline::webhooks::Callback>,
    /// The deadline router's answer (its mode is already the input's).
    pub routed: Option<crate::store::jobs::Routed>,
}

/// Creates a prompt job: the request to R2 (`prompts/<id>`), then the row (and the claim of its
/// idempotency key) in one transaction, then the queue send. Whatever fails before the send
/// leaves nothing behind; a failed send marks the row `enqueue_failed` and answers 503. Answers
/// the job's id — the winner's, when a concurrent request with the same key made the job first.
pub async fn create_prompt_job(state: &AppState, job: &NewPrompt<'_>) -> Result<String, AppError> {
    let (id, made) = store_prompt_job(state, job).await?;
    if made {
        enqueue(state, job.input.priority, &id).await?;
    }
    Ok(id)
}

/// A prompt job's request in R2 and its row (`queued`), not yet sent anywhere. Answers the id
/// and whether this request made it (`false`: a concurrent request with the same key did, and
/// the id is that one's).
pub async fn store_prompt_job(
    state: &AppState,
    job: &NewPrompt<'_>,
) -> Result<(String, bool), AppError> {
    let NewPrompt {
        user, input, claim, ..
    } = *job;
    let now = now_ms();
    let id = new_id()?;
    let request = serde_json::to_vec(&input.request())
        .map_err(|e| ApiError::internal(format!("cannot encode the request: {e}")))?;
    let key = prompt_key(&id);
    let mut staged = Staged::new(state);
    staged.put(&key, request).await?;
    let row = state.store.insert_job(&NewJob {
        id: &id,
        user_id: user,
        kind: Kind::Prompt,
        lane: input.priority,
        mode: input.mode,
        model: &input.model,
        fallback_model: input.fallback_model.as_deref(),
        source: None,
        text: None,
        prompt_key: Some(&key),
        expires_at: input.expires_in_s.map(|s| now + s as i64 * 1000),
        path: job.path,
        reserved: job.reserved,
        callback: job.callback.as_ref(),
        tags: &input.tags,
        routed: job.routed,
        now,
    });
    let (row, staged) = staged.or_abandon(row.map_err(AppError::from)).await?;
    let rows = vec![row];
    let committed = staged
        .commit((user, claim), &id, rows, (now, job.reserved, &input.tags))
        .await?;
    Ok(match committed {
        Committed::Replay(winner) => (winner, false),
        Committed::Made => (id, true),
    })
}

/// One of the caller's jobs with its attempt log; someone else's, or an unknown id, is a 404.
#[worker::send]
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    let row = own_job(&state, &caller, &id, None).await?;
    let mut view = row.job_view(now_ms());
    view.attempt_log = state
        .store
        .attempts(&[row.id.to_string()])
        .await?
        .into_iter()
        .map(|(_, a)| a)
        .collect();
    if row.callback_url.is_some() {
        view.webhook = state.store.webhook_view(&row.id).await?;
    }
    Ok(Json(view).into_response())
}

/// `POST /api/webhooks/{job_id}/resend` (admins): the job's webhook once more, now — the same
/// `webhook-id` and body, signed anew; answers the job's webhook with this attempt.
#[worker::send]
pub async fn resend_webhook(
    State(state): State<AppState>,
    Caller(caller): Caller,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    caller.require_admin("re-send webhooks")?;
    crate::webhooks::resend(&state, &id).await?;
    let view = state.store.webhook_view(&id).await?;
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
    let row = own_job(&state, &caller, &id, None).await?;
    if !row.has_result() {
        return Err(ApiError::new(
            409,
            "not_completed",
            format!(
                "the job is {}; its result exists once it is completed",
                row.status
            ),
            None,
        )
        .into());
    }
    let Some(stored) = state.blobs.result(&id).await? else {
        // Retention removes the objects of jobs finished more than RETAIN_BLOBS_DAYS ago.
        let horizon = state.config.retention.horizons(now_ms()).blobs_before;
        return Err(match row.completed_at.filter(|at| *at < horizon) {
            Some(_) => ApiError::new(
                410,
                "result_expired",
                format!(
                    "results are kept for {} days after a job ends; this one is gone",
                    state.config.retention.blobs_days
                ),
                None,
            ),
            None => ApiError::internal("the result of this completed job is missing"),
        }
        .into());
    };
    Ok((
        [("content-type", stored.content_type)],
        Body::new(stored.body),
    )
        .into_response())
}

#[derive(Debug, Deserialize)]
pub struct ListQuery {
    status: Option<String>,
    priority: Option<String>,
    kind: Option<String>,
    tag: Option<String>,
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
        status: q
            .status
            .as_deref()
            .map(|s| {
                s.parse::<Status>()
                    .map_err(|_| bad("status", "a job status"))
            })
            .transpose()?,
        priority: q
            .priority
            .as_deref()
            .map(|p| {
                p.parse::<Lane>()
                    .map_err(|_| bad("priority", "high or bulk"))
            })
            .transpose()?,
        kind: q
            .kind
            .as_deref()
            .map(|k| {
                k.parse::<Kind>()
                    .map_err(|_| bad("kind", "feedback, prompt or pdf"))
            })
            .transpose()?,
        tag: q
            .tag
            .as_deref()
            .map(pipeline::tags::parse_filter)
            .transpose()?,
    };
    let page = page(q.cursor.as_deref(), q.limit.as_deref())?;
    let (items, next_cursor) = job_page(
        &state,
        caller.user_id.as_str(),
        &filter,
        page,
        JobRow::job_view,
    )
    .await?;
    Ok(Json(JobList { items, next_cursor }).into_response())
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
    let row = own_job(&state, &caller, &id, None).await?;
    if !state.store.cancel_job(&row.id, now_ms()).await? {
        let status = own_job(&state, &caller, &id, None).await?.status;
        return Err(ApiError::new(
            409,
            "not_cancelable",
            format!("the job is {status}; only a queued or batched job can be canceled"),
            None,
        )
        .into());
    }
    if let Some(batch) = row.anthropic_batch_id.as_deref() {
        if row.status == Status::Submitted {
            cancel_batch_if_empty(&state, batch).await?;
        }
    }
    let row = own_job(&state, &caller, &id, None).await?;
    Ok(Json(row.job_view(now_ms())).into_response())
}

/// The last live job of an Anthropic batch takes the batch with it: what has not run yet is not
/// billed.
pub async fn cancel_batch_if_empty(state: &AppState, batch: &str) -> Result<(), AppError> {
    if state.store.live_in_batch(batch).await? == 0 {
        if let Err(e) = state.anthropic.cancel_batch(batch).await {
            worker::console_error!(
                "canceling batch {batch}: {}",
                pipeline::outcome::describe(&e)
            );
        }
    }
    Ok(())
}
