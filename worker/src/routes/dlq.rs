//! DLQ triage (admins): `GET /api/dlq` lists dead-lettered (and failed) jobs with filters,
//! `POST /api/dlq/:id/replay` replays one (optionally with another model or max_tokens),
//! `POST /api/dlq/replay` replays all that match a filter (paced), `POST /api/dlq/:id/discard`
//! takes one off the list. A replay is a new job (`replay_of` = the original) through the normal
//! producer path; the original keeps its history, records its one replay and an audit entry.

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures_util::future::join_all;
use pipeline::dto::{AttemptView, Discarded};
use pipeline::error::ApiError;
use pipeline::money::UsdMicros;
use pipeline::ops::dlq::AuditEntry;
use pipeline::ops::dlq::{
    check_replayable, dlq_cursor, preview, replay_delay_s, DlqFilter, DlqItem, DlqList, ReplayAck,
    ReplayEdit, Replayed, MAX_BULK_REPLAY,
};
use pipeline::status::{Kind, Status};
use serde::Deserialize;

use super::admission::json_body;
use super::common::{enqueue_failed, next_page, page};
use super::staged::Staged;
use crate::blobs::prompt_key;
use crate::config::now_ms;
use crate::error::AppError;
use crate::identity::Caller;
use crate::requests::request_of;
use crate::services::new_id;
use crate::services::AppState;
use crate::store::lifecycle::attempts_of;
use crate::store::ops::{audit_of, dlq_page_of, Replay};
use crate::store::{JobRow, StoreError};

#[derive(Deserialize)]
pub struct ListParams {
    status: Option<String>,
    error_class: Option<String>,
    user: Option<String>,
    model: Option<String>,
    from: Option<String>,
    to: Option<String>,
    cursor: Option<String>,
    limit: Option<String>,
}

fn epoch(raw: Option<&str>, field: &str) -> Result<Option<i64>, ApiError> {
    match raw.filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(s) => s
            .parse::<i64>()
            .ok()
            .filter(|n| *n >= 0)
            .map(Some)
            .ok_or_else(|| {
                ApiError::bad_request(
                    "invalid_time",
                    format!("{field} must be a time in epoch milliseconds"),
                    Some(field),
                )
            }),
    }
}

fn nonempty(s: &Option<String>) -> Option<String> {
    s.clone().filter(|s| !s.is_empty())
}

#[worker::send]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Query(p): Query<ListParams>,
) -> Result<Response, AppError> {
    caller.0.require_admin("triage dead letters")?;
    let filter = DlqFilter {
        status: nonempty(&p.status),
        error_class: nonempty(&p.error_class),
        user: nonempty(&p.user),
        model: nonempty(&p.model),
        from: epoch(p.from.as_deref(), "from")?,
        to: epoch(p.to.as_deref(), "to")?,
    };
    filter.validate()?;
    let (limit, cursor) = page(
        p.cursor.as_deref().filter(|c| !c.is_empty()),
        p.limit.as_deref(),
    )?;
    let read = || async {
        dlq_page_of(
            &state
                .store
                .batch(state.store.dlq_page(&filter, cursor.as_ref(), limit)?)
                .await?,
        )
    };
    let (unclassified, rows, dead) = read().await?;
    // Failures stored before classes were recorded get theirs first (rare), and the page is
    // read again: a class filter may match them now.
    let (mut rows, dead) = if unclassified.is_empty() {
        (rows, dead)
    } else {
        state.store.classify_these(&unclassified).await?;
        let (_, rows, dead) = read().await?;
        (rows, dead)
    };
    let next_cursor = next_page(&mut rows, limit, |r| {
        dlq_cursor(r.completed_at.unwrap_or(0), &r.id)
    });
    let items = items(&state, rows).await?;
    Ok(Json(DlqList {
        items,
        next_cursor,
        dead_lettered: dead,
    })
    .into_response())
}

/// The page's items: each row with its attempt log, audit entries and a preview of its input.
async fn items(state: &AppState, rows: Vec<JobRow>) -> Result<Vec<DlqItem>, AppError> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<String> = rows.iter().map(|r| r.id.to_string()).collect();
    let replays: Vec<String> = rows.iter().filter_map(|r| r.replayed_to.clone()).collect();
    // One round trip for the page's attempts, audit entries and replays, beside the previews.
    let mut statements = vec![
        state.store.attempts_statement(&ids)?,
        state.store.audit_statement(&ids)?,
    ];
    if !replays.is_empty() {
        statements.push(state.store.jobs_statement(&replays)?);
    }
    let (found, previews) = futures_util::join!(
        state.store.batch(statements),
        join_all(rows.iter().map(|r| input_preview(state, r)))
    );
    let found = found?;
    let related = Related {
        attempts: attempts_of(&found[0])?,
        audit: audit_of(&found[1])?,
        replays: match found.get(2) {
            Some(r) => r
                .results::<JobRow>()?
                .into_iter()
                .map(|r| (r.id.into(), r.status))
                .collect(),
            None => Vec::new(),
        },
    };
    Ok(rows
        .into_iter()
        .zip(previews)
        .map(|(r, preview)| related.item(r, preview))
        .collect())
}

/// What a page's rows have beside them: attempts and audit entries by job, and the status of
/// each replay.
struct Related {
    attempts: Vec<(String, AttemptView)>,
    audit: Vec<(String, AuditEntry)>,
    replays: Vec<(String, Status)>,
}

impl Related {
    /// One row's item.
    fn item(&self, r: JobRow, preview: String) -> DlqItem {
        let of = |job: &String| r.id == *job;
        DlqItem {
            attempt_log: self
                .attempts
                .iter()
                .filter(|(job, _)| of(job))
                .map(|(_, a)| a.clone())
                .collect(),
            audit: self
                .audit
                .iter()
                .filter(|(job, _)| of(job))
                .map(|(_, a)| a.clone())
                .collect(),
            preview,
            replay_status: self
                .replays
                .iter()
                .find(|(id, _)| Some(id) == r.replayed_to.as_ref())
                .map(|(_, s)| *s),
            user_id: r.user_id.to_string(),
            kind: r.kind,
            status: r.status,
            priority: r.lane,
            mode: r.mode,
            model: r.model.as_deref().map(str::to_owned),
            attempts: r.attempts.max(0) as u32,
            error: r.error.clone(),
            error_class: r.error_class,
            created_at: r.created_at,
            completed_at: r.completed_at,
            replay_of: r.replay_of.clone(),
            replayed_to: r.replayed_to.clone(),
            id: r.id.into(),
        }
    }
}

/// The first 200 characters of a job's input: the feedback text, the prompt's last user message
/// (from R2), or the PDF's name.
async fn input_preview(state: &AppState, r: &JobRow) -> String {
    match r.kind {
        Kind::Feedback => preview(r.input_text.as_deref().unwrap_or_default(), 200),
        Kind::Pdf => preview(r.file_name.as_deref().unwrap_or("(a PDF)"), 200),
        Kind::Prompt => match request_of(state, r).await {
            Ok(req) => {
                let text = req
                    .messages
                    .last()
                    .map(|m| m.content.text())
                    .unwrap_or_default();
                preview(&text, 200)
            }
            Err(_) => "(the prompt is no longer stored)".into(),
        },
    }
}

/// One replay: the new job's row (and, for prompt jobs, its request in R2, staged), the
/// original's guarded `replayed_to`, the audit entries — all or nothing — then the send to the
/// lane. The edit rules are `pipeline::ops::dlq`'s.
pub(super) async fn replay_one(
    state: &AppState,
    actor: &str,
    original: &JobRow,
    edit: &ReplayEdit,
    delay_s: Option<u32>,
) -> Result<Replayed, AppError> {
    check_replayable(original.status, original.replayed_to.as_deref())?;
    edit.check_kind(original.kind)?;
    let now = now_ms();
    let id = new_id()?;
    let mut staged = Staged::new(state);
    let (model, key, reserved) = replay_request(state, original, edit, &id, &mut staged).await?;
    let detail = match edit.is_empty() {
        true => format!("replayed as {id}"),
        false => format!(
            "replayed as {id} with {}",
            serde_json::to_string(edit).unwrap_or_default()
        ),
    };
    let replay = Replay {
        original: &original.id,
        id: &id,
        model: &model,
        prompt_key: key.as_deref(),
        actor,
        detail: &detail,
        reserved,
        now,
    };
    match state.store.replay(&replay).await {
        Ok(true) => {}
        Ok(false) => {
            // Someone replayed (or it changed) meanwhile: answer what it is now.
            staged.abandon().await;
            let now_row = state.store.job(&original.id).await?;
            let row = now_row.as_ref().unwrap_or(original);
            check_replayable(row.status, row.replayed_to.as_deref())?;
            return Err(ApiError::new(409, "conflict", "the job changed; try again", None).into());
        }
        Err(e) => {
            staged.abandon().await;
            return Err(refused_replay(state, original, reserved, e).await);
        }
    }
    if let Err(e) = state.lanes.send_after(original.lane, &id, delay_s).await {
        return Err(enqueue_failed(state, &id, "replay", e).await);
    }
    Ok(Replayed {
        original: original.id.to_string(),
        poll_url: format!("/jobs/{id}"),
        job_id: id,
    })
}

/// What the replay `id` runs: its model, its request's key and its worst case, admitted under
/// the user's caps. A prompt job's request is copied with the edits to its own key (staged);
/// a feedback or PDF job keeps the original's input.
async fn replay_request(
    state: &AppState,
    original: &JobRow,
    edit: &ReplayEdit,
    id: &str,
    staged: &mut Staged<'_>,
) -> Result<(String, Option<String>, UsdMicros), AppError> {
    let now = now_ms();
    if original.kind != Kind::Prompt {
        let model = edit.model_for(original.model.as_deref());
        // A model retired since the job ran is refused: replay it with a model edit.
        pipeline::models::parse_model(Some(&model.clone().into()), now)?;
        let reserved = unprompted_worst_case(state, original, &model).await?;
        super::admission::admit(state, &original.user_id, reserved).await?;
        return Ok((model, original.prompt_key.clone(), reserved));
    }
    let req = edit.apply(request_of(state, original).await?);
    let model = pipeline::models::parse_model(Some(&req.model.clone().into()), now)?;
    pipeline::shape::check(&req, model)
        .map_err(|r| ApiError::bad_request("unsupported_by_model", r.message, Some(r.field)))?;
    let body = serde_json::to_vec(&req)
        .map_err(|e| ApiError::internal(format!("cannot encode the request: {e}")))?;
    let reserved = super::admission::worst_case(state, &req, None, original.mode, None);
    super::admission::admit(state, &original.user_id, reserved).await?;
    let key = prompt_key(id);
    staged.put(&key, body).await?;
    Ok((model.id.to_owned(), Some(key), reserved))
}

/// The answer to a replay the database refused: a 429 naming the cap it would have crossed,
/// else the platform's error.
async fn refused_replay(
    state: &AppState,
    original: &JobRow,
    reserved: UsdMicros,
    e: StoreError,
) -> AppError {
    match e {
        StoreError::BudgetExceeded => {
            super::admission::refused(state, &original.user_id, reserved).await
        }
        StoreError::TagCapExceeded => {
            super::admission::tag_refused(state, &original.tags, reserved).await
        }
        other => worker::Error::from(other).into(),
    }
}

/// The worst case of replaying a feedback or PDF job on `model` (prompt jobs reserve their
/// edited request's): a feedback request rebuilt from its text, or a PDF's pages read from its
/// stored file.
async fn unprompted_worst_case(
    state: &AppState,
    original: &JobRow,
    model: &str,
) -> Result<UsdMicros, AppError> {
    let (req, pages) = match original.kind {
        Kind::Pdf => {
            let template = pipeline::pdf::Template::parse(original.template.as_deref())?;
            let pages = match original.prompt_key.as_deref() {
                Some(key) => state.blobs.pdf_pages(key).await?,
                None => None,
            };
            (
                pipeline::pdf::request(model, template, String::new()),
                pages,
            )
        }
        _ => (
            pipeline::feedback::request(model, original.input_text.as_deref().unwrap_or("")),
            None,
        ),
    };
    Ok(super::admission::worst_case(
        state,
        &req,
        pages,
        original.mode,
        None,
    ))
}

async fn load(state: &AppState, id: &str) -> Result<JobRow, AppError> {
    let missing = || ApiError::not_found(format!("no job {id}"));
    let id = pipeline::jobs::JobId::parse(id).ok_or_else(missing)?;
    Ok(state.store.job(id.as_str()).await?.ok_or_else(missing)?)
}
fn optional_json(headers: &HeaderMap, body: &[u8]) -> Result<(), AppError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(());
    }
    json_body(headers, body, 4 * 1024)
}

#[worker::send]
pub async fn replay(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    caller.0.require_admin("triage dead letters")?;
    optional_json(&headers, &body)?;
    let edit = ReplayEdit::parse(&body, now_ms())?;
    let original = load(&state, &id).await?;
    let replayed = replay_one(&state, caller.0.user_id.as_str(), &original, &edit, None).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(ReplayAck {
            replayed: vec![replayed],
            more: false,
        }),
    )
        .into_response())
}

/// Replays up to 100 matching jobs, oldest first, delivered at `DLQ_REPLAY_PER_S` per second.
#[worker::send]
pub async fn replay_all(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    caller.0.require_admin("triage dead letters")?;
    optional_json(&headers, &body)?;
    let filter: DlqFilter = if body.iter().all(u8::is_ascii_whitespace) {
        DlqFilter::default()
    } else {
        let obj = pipeline::error::json_object(&body)?;
        serde_json::from_value(serde_json::Value::Object(obj)).map_err(|e| {
            ApiError::bad_request(
                "invalid_filter",
                format!("the filter is invalid: {e}"),
                None,
            )
        })?
    };
    filter.validate()?;
    state.store.classify_legacy().await?;
    let rows = state.store.dlq_to_replay(&filter, MAX_BULK_REPLAY).await?;
    let more = rows.len() > MAX_BULK_REPLAY as usize;
    let actor = caller.0.user_id.as_str();
    let mut replayed = Vec::new();
    for (i, row) in rows.iter().take(MAX_BULK_REPLAY as usize).enumerate() {
        let delay = replay_delay_s(i, state.config.replay_per_s);
        match replay_one(&state, actor, row, &ReplayEdit::default(), Some(delay)).await {
            Ok(r) => replayed.push(r),
            // A job replayed meanwhile is skipped, and so is one its user's caps have no room
            // for (it stays in the triage list); anything else stops the run.
            Err(e) if e.0.status == 409 => {}
            Err(e) if e.0.status == 429 => {
                worker::console_log!("replay of {} skipped: {}", row.id, e.0.body.error);
            }
            Err(e) => return Err(e),
        }
    }
    Ok((StatusCode::ACCEPTED, Json(ReplayAck { replayed, more })).into_response())
}

#[worker::send]
pub async fn discard(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    caller.0.require_admin("triage dead letters")?;
    let row = load(&state, &id).await?;
    if !matches!(row.status, Status::DeadLettered | Status::Failed) {
        return Err(ApiError::new(
            409,
            "not_dead",
            format!(
                "only dead-lettered or failed jobs can be discarded; this one is {}",
                row.status
            ),
            None,
        )
        .into());
    }
    let now = now_ms();
    state
        .store
        .discard(&id, caller.0.user_id.as_str(), now)
        .await?;
    Ok(Json(Discarded {
        id,
        discarded_at: now,
    })
    .into_response())
}
