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
use pipeline::dto::AttemptView;
use pipeline::error::ApiError;
use pipeline::jobs::{self, page_limit, Cursor};
use pipeline::ops::dlq::{
    check_replayable, dlq_cursor, preview, replay_delay_s, AuditEntry, DlqFilter, DlqItem, DlqList,
    ReplayAck, ReplayEdit, Replayed, MAX_BULK_REPLAY,
};
use pipeline::status::{Kind, Status};
use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::D1Database;

use crate::config::{now_ms, DB, RESULTS};
use crate::error::AppError;
use crate::identity::Caller;
use crate::jobs::{load_many, mark_enqueue_failed, next_page, num, JobRow, COLUMNS};
use crate::routes::{json_body, AppState};

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
    let limit = page_limit(p.limit.as_deref())?;
    let cursor = p
        .cursor
        .as_deref()
        .filter(|c| !c.is_empty())
        .map(Cursor::decode)
        .transpose()?;
    let db = state.env.d1(DB)?;
    crate::ops::classify(&db).await?;
    let (query, values) = filter.list_sql(COLUMNS, cursor.as_ref(), limit);
    let mut rows: Vec<JobRow> = db
        .prepare(query)
        .bind(&crate::ops::bind_values(&values))?
        .all()
        .await?
        .results()?;
    let next_cursor = next_page(&mut rows, limit, |r| {
        dlq_cursor(r.completed_at.unwrap_or(0), &r.id)
    });
    let items = items(&state, &db, rows).await?;
    let dead = crate::ops::count(&db, pipeline::ops::sql::DEAD_NOW).await?;
    Ok(Json(DlqList {
        items,
        next_cursor,
        dead_lettered: dead,
    })
    .into_response())
}

/// The page's items: each row with its attempt log, audit entries and a preview of its input.
async fn items(
    state: &AppState,
    db: &D1Database,
    rows: Vec<JobRow>,
) -> Result<Vec<DlqItem>, AppError> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let marks: Vec<String> = (1..=rows.len()).map(|i| format!("?{i}")).collect();
    let ids: Vec<JsValue> = rows.iter().map(|r| JsValue::from_str(&r.id)).collect();
    #[derive(Deserialize)]
    struct AttemptRow {
        job_id: String,
        n: f64,
        model: Option<String>,
        started_at: f64,
        ended_at: f64,
        outcome: String,
        error: Option<String>,
    }
    #[derive(Deserialize)]
    struct AuditRow {
        job_id: String,
        at: f64,
        actor: String,
        action: String,
        detail: Option<String>,
    }
    let attempts: Vec<AttemptRow> = db
        .prepare(format!(
            "SELECT job_id, n, model, started_at, ended_at, outcome, error FROM job_attempts \
             WHERE job_id IN ({}) ORDER BY job_id, n",
            marks.join(",")
        ))
        .bind(&ids)?
        .all()
        .await?
        .results()?;
    let audit: Vec<AuditRow> = db
        .prepare(format!(
            "SELECT job_id, at, actor, action, detail FROM job_audit WHERE job_id IN ({}) \
             ORDER BY job_id, at",
            marks.join(",")
        ))
        .bind(&ids)?
        .all()
        .await?
        .results()?;
    let previews = join_all(rows.iter().map(|r| input_preview(state, r))).await;
    let replays: Vec<String> = rows.iter().filter_map(|r| r.replayed_to.clone()).collect();
    let replay_statuses: Vec<(String, Status)> = load_many(db, &replays)
        .await?
        .into_iter()
        .map(|r| (r.id.clone(), r.status()))
        .collect();
    Ok(rows
        .into_iter()
        .zip(previews)
        .map(|(r, preview)| DlqItem {
            attempt_log: attempts
                .iter()
                .filter(|a| a.job_id == r.id)
                .map(|a| AttemptView {
                    n: a.n as u32,
                    model: a.model.clone(),
                    started_at: a.started_at as i64,
                    ended_at: a.ended_at as i64,
                    outcome: a.outcome.clone(),
                    error: a.error.clone(),
                })
                .collect(),
            audit: audit
                .iter()
                .filter(|a| a.job_id == r.id)
                .map(|a| AuditEntry {
                    at: a.at as i64,
                    actor: a.actor.clone(),
                    action: a.action.clone(),
                    detail: a.detail.clone(),
                })
                .collect(),
            preview,
            id: r.id.clone(),
            user_id: r.user_id.clone(),
            kind: r.kind(),
            status: r.status(),
            priority: r.lane(),
            mode: r.mode(),
            model: r.model.clone(),
            attempts: r.attempts.max(0) as u32,
            error: r.error.clone(),
            error_class: r.error_class.clone(),
            created_at: r.created_at,
            completed_at: r.completed_at,
            replay_of: r.replay_of.clone(),
            replay_status: replay_statuses
                .iter()
                .find(|(id, _)| Some(id) == r.replayed_to.as_ref())
                .map(|(_, s)| *s),
            replayed_to: r.replayed_to.clone(),
        })
        .collect())
}

/// The first 200 characters of a job's input: the feedback text, the prompt's last user message
/// (from R2), or the PDF's name.
async fn input_preview(state: &AppState, r: &JobRow) -> String {
    match r.kind() {
        Kind::Feedback => preview(r.input_text.as_deref().unwrap_or_default(), 200),
        Kind::Pdf => preview(r.file_name.as_deref().unwrap_or("(a PDF)"), 200),
        Kind::Prompt => match crate::results::request_of(&state.env, r).await {
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

/// One replay: the new job's row (and, for prompt jobs, its request in R2), the original's
/// guarded `replayed_to`, the audit entries — all or nothing — then the send to the lane.
async fn replay_one(
    state: &AppState,
    actor: &str,
    original: &JobRow,
    edit: &ReplayEdit,
    delay_s: Option<u32>,
) -> Result<Replayed, AppError> {
    check_replayable(original.status(), original.replayed_to.as_deref())?;
    let kind = original.kind();
    edit.check_kind(kind)?;
    let db = state.env.d1(DB)?;
    let bucket = state.env.bucket(RESULTS)?;
    let now = now_ms();
    let id = jobs::new_id(crate::queues::random_bytes()?);
    // Prompt jobs: the request is copied (with the edits) to the new job's own claim-check.
    let (model, prompt_key) = if kind == Kind::Prompt {
        let mut req = crate::results::request_of(&state.env, original).await?;
        if let Some(m) = &edit.model {
            // What the new model refuses is dropped or converted, as for a fallback.
            req = pipeline::shape::conform(req, m);
        }
        if let Some(n) = edit.max_tokens {
            req.max_tokens = n;
        }
        let model = pipeline::models::parse_model(Some(&req.model.clone().into()), now)?;
        pipeline::shape::check(&req, model)
            .map_err(|r| ApiError::bad_request("unsupported_by_model", r.message, Some(r.field)))?;
        let body = serde_json::to_vec(&req)
            .map_err(|e| ApiError::internal(format!("cannot encode the request: {e}")))?;
        let key = format!("prompts/{id}");
        bucket.put(&key, body).execute().await?;
        (model.id.to_owned(), Some(key))
    } else {
        let model = edit
            .model
            .clone()
            .or_else(|| original.model.clone())
            .unwrap_or_else(|| pipeline::models::DEFAULT_MODEL.to_owned());
        // A model retired since the job ran is refused: replay it with a model edit.
        pipeline::models::parse_model(Some(&model.clone().into()), now)?;
        (model, original.prompt_key.clone())
    };
    let detail = if edit.is_empty() {
        format!("replayed as {id}")
    } else {
        format!(
            "replayed as {id} with {}",
            serde_json::to_string(edit).unwrap_or_default()
        )
    };
    let statements = vec![
        db.prepare(
            "UPDATE jobs SET replayed_to = ?2, updated_at = ?3 WHERE id = ?1 \
             AND replayed_to IS NULL AND status IN ('dead_lettered','failed','expired','canceled')",
        )
        .bind(&[original.id.as_str().into(), id.as_str().into(), num(now)])?,
        db.prepare(
            "INSERT INTO jobs (id, user_id, kind, status, lane, mode, model, source, file_name, \
             file_size, input_text, prompt_key, template, replay_of, created_at, updated_at) \
             SELECT ?2, user_id, kind, 'queued', lane, mode, ?3, source, file_name, file_size, \
             input_text, ?4, template, id, ?5, ?5 FROM jobs WHERE id = ?1 AND replayed_to = ?2",
        )
        .bind(&[
            original.id.as_str().into(),
            id.as_str().into(),
            model.as_str().into(),
            prompt_key
                .as_deref()
                .map(JsValue::from_str)
                .unwrap_or(JsValue::NULL),
            num(now),
        ])?,
        db.prepare(
            "INSERT INTO job_audit (job_id, at, actor, action, detail) \
             SELECT ?1, ?3, ?4, 'replay', ?5 FROM jobs WHERE id = ?1 AND replayed_to = ?2",
        )
        .bind(&[
            original.id.as_str().into(),
            id.as_str().into(),
            num(now),
            actor.into(),
            detail.as_str().into(),
        ])?,
        db.prepare(
            "INSERT INTO job_audit (job_id, at, actor, action, detail) \
             SELECT ?2, ?3, ?4, 'created', 'a replay of ' || ?1 FROM jobs \
             WHERE id = ?1 AND replayed_to = ?2",
        )
        .bind(&[
            original.id.as_str().into(),
            id.as_str().into(),
            num(now),
            actor.into(),
        ])?,
    ];
    let own_key = kind == Kind::Prompt;
    let results = match db.batch(statements).await {
        Ok(r) => r,
        Err(e) => {
            if own_key {
                let _ = bucket.delete(format!("prompts/{id}")).await;
            }
            return Err(e.into());
        }
    };
    let claimed = results
        .first()
        .and_then(|r| r.meta().ok().flatten())
        .and_then(|m| m.changes)
        .unwrap_or(0)
        > 0;
    if !claimed {
        // Someone replayed (or it changed) meanwhile: answer what it is now.
        if own_key {
            let _ = bucket.delete(format!("prompts/{id}")).await;
        }
        let now_row = load_many(&db, std::slice::from_ref(&original.id)).await?;
        let row = now_row.first().unwrap_or(original);
        check_replayable(row.status(), row.replayed_to.as_deref())?;
        return Err(ApiError::new(409, "conflict", "the job changed; try again", None).into());
    }
    let lane = original.lane();
    if let Err(e) =
        crate::queues::send_job_after(&state.env, &state.config, lane, &id, delay_s).await
    {
        worker::console_error!("replay {id}: enqueue failed: {e}");
        mark_enqueue_failed(
            &db,
            &id,
            &format!("the replay could not be queued: {e}"),
            now_ms(),
        )
        .await?;
        return Err(ApiError::new(
            503,
            "enqueue_failed",
            format!("the replay {id} was stored but could not be queued; it will not run"),
            None,
        )
        .into());
    }
    Ok(Replayed {
        original: original.id.clone(),
        poll_url: format!("/jobs/{id}"),
        job_id: id,
    })
}

async fn load(db: &D1Database, id: &str) -> Result<JobRow, AppError> {
    let missing = || ApiError::not_found(format!("no job {id}"));
    if !jobs::is_id(id) {
        return Err(missing().into());
    }
    Ok(load_many(db, &[id.to_owned()])
        .await?
        .into_iter()
        .next()
        .ok_or_else(missing)?)
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
    let db = state.env.d1(DB)?;
    let original = load(&db, &id).await?;
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
    let db = state.env.d1(DB)?;
    crate::ops::classify(&db).await?;
    let (query, values) = filter.replay_sql(COLUMNS, MAX_BULK_REPLAY);
    let rows: Vec<JobRow> = db
        .prepare(query)
        .bind(&crate::ops::bind_values(&values))?
        .all()
        .await?
        .results()?;
    let more = rows.len() > MAX_BULK_REPLAY as usize;
    let actor = caller.0.user_id.as_str();
    let mut replayed = Vec::new();
    for (i, row) in rows.iter().take(MAX_BULK_REPLAY as usize).enumerate() {
        let delay = replay_delay_s(i, state.config.replay_per_s);
        match replay_one(&state, actor, row, &ReplayEdit::default(), Some(delay)).await {
            Ok(r) => replayed.push(r),
            // A job replayed meanwhile is skipped; anything else stops the run.
            Err(e) if e.0.status == 409 => {}
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
    let db = state.env.d1(DB)?;
    let row = load(&db, &id).await?;
    if !matches!(row.status.as_str(), "dead_lettered" | "failed") {
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
    db.batch(vec![
        db.prepare(
            "UPDATE jobs SET discarded_at = COALESCE(discarded_at, ?2), updated_at = ?2 WHERE id = ?1",
        )
        .bind(&[id.as_str().into(), num(now)])?,
        db.prepare(
            "INSERT INTO job_audit (job_id, at, actor, action, detail) VALUES (?1, ?2, ?3, 'discard', NULL)",
        )
        .bind(&[id.as_str().into(), num(now), caller.0.user_id.as_str().into()])?,
    ])
    .await?;
    Ok(Json(serde_json::json!({ "id": id, "discarded_at": now })).into_response())
}
