//! Incident tools (admins; `pipeline::ops::bulk`): `POST /api/ops/bulk` cancels, expires,
//! replays or pauses every job a filter matches — a dry run by default, at most one slice per
//! request (the answer's `remaining` says whether to send it again), one audit row each —
//! and `GET /api/ops/bulk` lists the audit, newest first.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::ops::bulk::{
    pause_scope, Action, BulkAudit, BulkAuditList, BulkReport, BulkRequest, Plan,
};
use pipeline::ops::dlq::{replay_delay_s, ReplayEdit};
use pipeline::pause::Pause;
use pipeline::status::Transition;

use super::admission::json_body;
use super::dlq::replay_one;
use crate::config::now_ms;
use crate::error::AppError;
use crate::identity::Caller;
use crate::services::{new_id, AppState};

/// How many audit entries `GET /api/ops/bulk` lists.
const AUDIT_PAGE: u32 = 100;

#[worker::send]
pub async fn act(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    caller.0.require_admin("act on jobs in bulk")?;
    json_body(&headers, &body, 8 * 1024)?;
    let actor = caller.0.user_id.as_str();
    let plan = BulkRequest::parse(&body, actor)?;
    let matched = state.store.bulk_count(&plan.filter).await?;
    let (acted, replayed) = match plan.dry_run {
        true => (0, Vec::new()),
        false => carry_out(&state, actor, &plan).await?,
    };
    let audit = BulkAudit {
        id: new_id()?,
        at: now_ms(),
        actor: actor.to_owned(),
        action: plan.action,
        dry_run: plan.dry_run,
        matched,
        acted,
        reason: plan.reason.clone(),
        filter: plan.filter.clone(),
    };
    state.store.record_bulk(&audit).await?;
    worker::console_log!(
        "bulk {} by {actor}: matched {matched}, acted on {acted}{}",
        plan.action.as_str(),
        if plan.dry_run { " (dry run)" } else { "" }
    );
    Ok(Json(BulkReport {
        action: plan.action,
        dry_run: plan.dry_run,
        matched,
        acted,
        remaining: matched.saturating_sub(acted),
        filter: plan.filter,
        audit_id: audit.id,
        replayed,
    })
    .into_response())
}

/// Acts on one slice; answers how many jobs it acted on, and a replay's new jobs.
async fn carry_out(
    state: &AppState,
    actor: &str,
    plan: &Plan,
) -> Result<(u64, Vec<String>), AppError> {
    let (f, slice, now) = (&plan.filter, plan.action.slice(), now_ms());
    let end = |t: Transition| state.store.bulk_end(f, (t, &plan.reason), now, slice);
    Ok(match plan.action {
        Action::Cancel => (end(Transition::Cancel).await? as u64, Vec::new()),
        Action::Expire => (end(Transition::ExpireStale).await? as u64, Vec::new()),
        Action::Pause => {
            let (scope, value) = pause_scope(f)?;
            let held = state.store.bulk_count(f).await?;
            let p = Pause {
                scope,
                value,
                reason: Some(plan.reason.clone()),
                paused_by: actor.to_owned(),
                paused_at: now,
            };
            state.store.pause(&p).await?;
            (held, Vec::new())
        }
        Action::Replay => replay(state, actor, plan).await?,
    })
}

/// Replays one slice, delivered at `DLQ_REPLAY_PER_S` per second; a job replayed meanwhile, or
/// one its user's caps have no room for, is skipped (it stays in the filter's reach).
async fn replay(
    state: &AppState,
    actor: &str,
    plan: &Plan,
) -> Result<(u64, Vec<String>), AppError> {
    let rows = state
        .store
        .bulk_rows(&plan.filter, plan.action.slice())
        .await?;
    let mut replayed = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let delay = replay_delay_s(i, state.config.replay_per_s);
        match replay_one(state, actor, row, &ReplayEdit::default(), Some(delay)).await {
            Ok(r) => replayed.push(r.job_id),
            Err(e) if matches!(e.0.status, 409 | 429) => {
                worker::console_log!("bulk replay of {} skipped: {}", row.id, e.0.body.error);
            }
            Err(e) => return Err(e),
        }
    }
    Ok((replayed.len() as u64, replayed))
}

#[worker::send]
pub async fn audit(State(state): State<AppState>, caller: Caller) -> Result<Response, AppError> {
    caller.0.require_admin("see the bulk actions")?;
    let items = state.store.bulk_audits(AUDIT_PAGE).await?;
    Ok(Json(BulkAuditList { items }).into_response())
}
