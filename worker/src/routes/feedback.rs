//! `POST /feedback`, `GET /api/feedback/:id`, `GET /api/feedback`.

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::dto::{FeedbackAck, FeedbackList};
use pipeline::feedback;
use pipeline::status::{Kind, Mode, Status};

use super::admission::{accept, Idem};
use super::common::{job_page, own_job, PageQuery};
use super::staged::{enqueue, Committed, Staged};
use crate::config::now_ms;
use crate::error::AppError;
use crate::identity::Caller;
use crate::services::new_id;
use crate::services::AppState;
use crate::store::jobs::Routed;
use crate::store::jobs::{JobFilter, NewJob};
use crate::store::{JobRow, Statement};
use pipeline::money::UsdMicros;
use pipeline::webhooks::Callback;

/// A feedback body is a few KB at most; anything far larger is refused before it is read.
const MAX_BODY_BYTES: usize = 64 * 1024;

/// Validates; honours `Idempotency-Key` (as `POST /jobs` does); writes the row (`queued`) and
/// the key's record in one transaction, then sends the job to its lane. A failed send turns the
/// row into `enqueue_failed` and answers 503 saying so.
// The Workers runtime is single-threaded and its futures are !Send; axum wants Send handlers.
#[worker::send]
pub async fn submit(
    State(state): State<AppState>,
    Caller(caller): Caller,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    let user = caller.user_id.as_str();
    let limits = ("POST /feedback\n", MAX_BODY_BYTES);
    let need = |i: &feedback::FeedbackInput| worst_case(&state, i);
    let (input, idem, need) = accept(
        &state,
        user,
        &headers,
        &body,
        limits,
        feedback::parse_input,
        need,
    )
    .await?;
    let record = match idem {
        Idem::Replay(id) => return Ok(ack(id, input.mode, None)),
        Idem::Fresh(record) => record,
    };
    crate::models_watch::admit_job(&state, input.model, input.fallback_model).await?;
    let callback = crate::webhooks::callback(&state, &caller, input.callback_url.as_deref())?;
    let now = now_ms();
    let mut input = input;
    let routed = crate::routing::at_submission(&state, input.model, input.deadline_at, now).await?;
    if let Some((mode, _)) = routed {
        input.mode = mode;
    }
    let id = new_id()?;
    let lane = input.mode.default_lane();
    let new = New {
        id: &id,
        user,
        input: &input,
        need,
        callback: callback.as_ref(),
        routed: routed.map(|r| r.1),
        now,
    };
    let committed = Staged::new(&state)
        .commit(
            (user, record.as_ref()),
            &id,
            vec![insert(&state, &new)?],
            (now, need, &input.tags),
        )
        .await?;
    if let Committed::Replay(winner) = committed {
        return Ok(ack(winner, input.mode, None));
    }
    enqueue(&state, lane, &id).await?;
    Ok(ack(id, input.mode, Some(input.model)))
}

/// What a feedback job reserves against the caps at admission: its request's worst case.
fn worst_case(state: &AppState, i: &feedback::FeedbackInput) -> UsdMicros {
    let request = feedback::request(i.model, &i.text);
    super::admission::worst_case(state, &request, None, i.mode, i.fallback_model)
}

/// A feedback job admitted: what its row is written from.
struct New<'a> {
    id: &'a str,
    user: &'a str,
    input: &'a feedback::FeedbackInput,
    need: UsdMicros,
    callback: Option<&'a Callback>,
    routed: Option<Routed>,
    now: i64,
}

/// The job's row, `queued` on its mode's lane.
fn insert(state: &AppState, new: &New<'_>) -> worker::Result<Statement> {
    let input = new.input;
    state.store.insert_job(&NewJob {
        id: new.id,
        user_id: new.user,
        kind: Kind::Feedback,
        lane: input.mode.default_lane(),
        mode: input.mode,
        model: input.model,
        fallback_model: input.fallback_model,
        source: Some(&input.source),
        text: Some(&input.text),
        prompt_key: None,
        expires_at: input.expires_in_s.map(|s| new.now + s as i64 * 1000),
        path: None,
        reserved: new.need,
        callback: new.callback,
        tags: &input.tags,
        routed: new.routed,
        now: new.now,
    })
}

/// The acknowledgement, with the warnings a new job on `model` carries.
fn ack(id: String, mode: Mode, model: Option<&str>) -> Response {
    let ack = FeedbackAck {
        ok: true,
        status: Status::Queued,
        id,
        mode,
        warnings: model
            .map(|m| pipeline::models::job_warnings(m, now_ms()))
            .unwrap_or_default(),
    };
    (StatusCode::ACCEPTED, Json(ack)).into_response()
}

/// One of the caller's feedback jobs; someone else's, or an unknown id, is a 404.
#[worker::send]
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    let row = own_job(&state, &caller, &id, Some(Kind::Feedback)).await?;
    Ok(Json(row.feedback_view(now_ms())).into_response())
}

/// The caller's feedback jobs, newest first, a page at a time.
#[worker::send]
pub async fn list(
    State(state): State<AppState>,
    Caller(caller): Caller,
    Query(q): Query<PageQuery>,
) -> Result<Response, AppError> {
    let filter = JobFilter {
        kind: Some(Kind::Feedback),
        ..JobFilter::default()
    };
    let (items, next_cursor) = job_page(
        &state,
        caller.user_id.as_str(),
        &filter,
        q.parse()?,
        JobRow::feedback_view,
    )
    .await?;
    Ok(Json(FeedbackList { items, next_cursor }).into_response())
}
