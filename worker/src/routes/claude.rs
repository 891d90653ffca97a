//! `POST /api/claude {prompt}`: the rollout path. Users inside `QUEUE_ROLLOUT_PERCENT` go through
//! the queue (a high-priority prompt job) and wait a bounded time for the result, else get a 202
//! with the poll URL; everyone else is called directly. Both paths record the call as a prompt job
//! (`path`), so each is counted in usage, caps and metrics, and `GET /api/rollout` compares them.
//! The percent is read on every request (`Config::rollout_percent`: a var, or a secret that can
//! change without a redeploy).

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::answer::{settle_answer, settle_undecodable, End};
use pipeline::anthropic::{Message, StopReason};
use pipeline::budget::{Need, Reserve, Settle};
use pipeline::dto::{ClaudeAnswer, JobAck};
use pipeline::error::ApiError;
use pipeline::money::UsdMicros;
use pipeline::outcome::{describe, CallOutcome};
use pipeline::outcome::{AttemptOutcome, ErrorClass, Failure};
use pipeline::pricing::Tier;
use pipeline::provider::Provider;
use pipeline::status::CallPath;
use pipeline::status::{Kind, Lane, Mode, Status};
use pipeline::{prompt, rollout};
use worker::Delay;

use super::admission::require_json;
use super::jobs::{create_prompt_job, store_prompt_job, NewPrompt};
use crate::config::now_ms;
use crate::error::AppError;
use crate::identity::Caller;
use crate::services::AppState;
use crate::store::lifecycle::{Attempt, Scope};
use crate::store::JobRow;

#[worker::send]
pub async fn call(
    State(state): State<AppState>,
    Caller(caller): Caller,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    require_json(&headers)?;
    let mut input = prompt::parse_input(&body, now_ms())?;
    if input.deadline_at.is_some() {
        return Err(pipeline::error::ApiError::bad_request(
            "invalid_field",
            "POST /api/claude answers in its response: a deadline is for POST /jobs",
            Some("deadline_s"),
        )
        .into());
    }
    // The interactive path: always the high lane, always a synchronous call.
    input.priority = Lane::High;
    input.mode = Mode::Sync;
    let user = caller.user_id.as_str();
    let need = admit(&state, user, &input).await?;
    let mut job = NewPrompt {
        user,
        input: &input,
        claim: None,
        path: Some(CallPath::Direct),
        reserved: need,
        // The call answers in its response: no webhook.
        callback: None,
        routed: None,
    };
    if !rollout::in_rollout(user, state.config.rollout_percent) {
        return direct(&state, &job).await;
    }
    job.path = Some(CallPath::Queue);
    let id = create_prompt_job(&state, &job).await?;
    wait_for(&state, &id, user).await
}

/// Admission, as for any sync prompt job: the model still listed, the user's rate and cap, the
/// worst case reserved. Answers the reservation.
async fn admit(
    state: &AppState,
    user: &str,
    input: &prompt::PromptInput,
) -> Result<UsdMicros, AppError> {
    crate::models_watch::admit_job(state, &input.model, input.fallback_model.as_deref()).await?;
    let need = super::admission::worst_case(
        state,
        &input.request,
        None,
        Mode::Sync,
        input.fallback_model.as_deref(),
    );
    super::admission::limit(state, user, 1).await?;
    super::admission::admit(state, user, need).await?;
    Ok(need)
}

/// The queue path's bounded wait: the answer once the job completes, an error once it ends
/// otherwise, else a 202 with the poll URL.
async fn wait_for(state: &AppState, id: &str, user: &str) -> Result<Response, AppError> {
    let deadline = now_ms() + state.config.rollout_wait_ms as i64;
    while now_ms() < deadline {
        Delay::from(Duration::from_millis(250)).await;
        let Some(row) = state
            .store
            .job_for_user(id, user, Some(Kind::Prompt))
            .await?
        else {
            break;
        };
        match row.status {
            Status::Completed => return completed(state, id, &row).await,
            s if s.is_terminal() => {
                return Err(ApiError::new(
                    502,
                    "job_failed",
                    format!("the job {id} ended {s}: {}", row.error.unwrap_or_default()),
                    None,
                )
                .into())
            }
            _ => {}
        }
    }
    Ok((StatusCode::ACCEPTED, Json(JobAck::queued(id))).into_response())
}

/// A queued call's answer, from R2.
async fn completed(state: &AppState, id: &str, row: &JobRow) -> Result<Response, AppError> {
    let text = state
        .blobs
        .get(&crate::blobs::result_key(id))
        .await?
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .ok_or_else(|| ApiError::internal("the result of this completed job is missing"))?;
    let view = row.job_view(now_ms());
    Ok(Json(ClaudeAnswer {
        path: CallPath::Queue,
        job_id: Some(id.to_owned()),
        text,
        model: view.model,
        input_tokens: view.spend.input_tokens,
        output_tokens: view.spend.output_tokens,
        cost_micros: Some(view.spend.cost_micros),
    })
    .into_response())
}

/// Outside the rollout: one Messages call from the request, no queue — recorded as a prompt job
/// (`path: direct`) like any other: its row, its request and answer in R2, its attempt, usage and
/// cost, so that the daily cap, the usage views, the metrics and the rollout view all count it.
async fn direct(state: &AppState, job: &NewPrompt<'_>) -> Result<Response, AppError> {
    let input = job.input;
    let (id, _) = store_prompt_job(state, job).await?;
    if !state.store.claim(&id, now_ms()).await? {
        return Err(ApiError::internal(format!("the call's job {id} could not be claimed")).into());
    }
    let request = input.request();
    let reservation = reserve(state, &id, &request, job.user).await?;
    let started_at = now_ms();
    let answered = state.anthropic.messages(&request, &id).await;
    // The direct path's call is the Anthropic API's (it waits for one answer, in the request).
    let settlement = Settle::after_call(
        &id,
        (Provider::Anthropic, &request.model),
        &answered.result,
        answered.reported,
    );
    if matches!(answered.result, Err(CallOutcome::Timeout)) {
        crate::ops::timed_out(state, &request.model, &reservation.need, job.reserved).await;
    }
    let refused = match &answered.result {
        Ok(message) => refused_to_queue(state, &id, &request.model, message).await?,
        Err(_) => None,
    };
    let answer = match &refused {
        Some(_) => Ok((StatusCode::ACCEPTED, Json(JobAck::queued(&id))).into_response()),
        None => settle_call(state, &id, &request.model, answered.result).await,
    };
    state.budget.settle(&settlement).await;
    let (outcome, error) = match (&answer, refused) {
        (_, Some(why)) => (AttemptOutcome::Refused, Some(why)),
        (Ok(_), None) => (AttemptOutcome::Completed, None),
        (Err(e), None) => (AttemptOutcome::Failed, Some(e.0.body.error.clone())),
    };
    let attempt = Attempt {
        job_id: &id,
        n: 1,
        model: Some(&request.model),
        started_at,
        ended_at: now_ms(),
        outcome,
        error: error.as_deref(),
        route: Provider::Anthropic,
    };
    if let Err(e) = state.store.record_attempt(&attempt).await {
        // The attempt log is for people; the job itself is already settled.
        worker::console_error!("call {id}: its attempt was not logged: {e}");
    }
    answer
}

/// The direct path spends the same provider limits: it reserves like a consumer, and a refusal
/// is a 429 the caller can retry (its job failed, not sent), not a call that would draw one.
async fn reserve(
    state: &AppState,
    id: &str,
    request: &pipeline::anthropic::MessagesRequest,
    user: &str,
) -> Result<Reserve, AppError> {
    let reservation = Reserve {
        job_id: id.to_owned(),
        lane: Lane::High,
        model: request.model.clone(),
        need: Need {
            input: pipeline::tokens::estimate_request(request).unwrap_or(0),
            output: request.max_tokens as u64,
        },
        ttl_ms: state.config.timing.call_timeout_ms as i64 + 30_000,
        user: Some(user.to_owned()),
        routes: Vec::new(),
    };
    let grant = state.budget.reserve(&reservation).await?;
    if grant.granted {
        return Ok(reservation);
    }
    let refusal = ApiError::new(
        429,
        "rate_limited",
        format!(
            "the provider's rate limits are in use ({}); retry in {} s",
            grant.limited_by.unwrap_or_default(),
            grant.retry_after_ms.div_ceil(1000)
        ),
        None,
    );
    let not_sent = Failure {
        reason: format!("not sent: {}", refusal.body.error),
        class: ErrorClass::RateLimited,
    };
    state.store.fail_sync(id, &not_sent, now_ms()).await?;
    Err(refusal.into())
}

/// A refused answer with a fallback (`pipeline::refusal`): the job moves to its fallback model
/// and to the high lane's queue, and the caller polls it (202) — the refused attempt kept and
/// billed as for a queued job. Answers the attempt log's line, or `None` for any other answer.
async fn refused_to_queue(
    state: &AppState,
    id: &str,
    model: &str,
    message: &Message,
) -> Result<Option<String>, AppError> {
    if message.stop_reason != Some(StopReason::Refusal) {
        return Ok(None);
    }
    let Some(row) = state.store.job(id).await? else {
        return Ok(None);
    };
    let Some(to) = crate::refusals::fallback_of(state, &row, model, message) else {
        return Ok(None);
    };
    let refused = crate::refusals::Refused {
        row: &row,
        model,
        message,
        n: 1,
        tier: Tier::Standard,
        to,
    };
    let now = now_ms();
    let moved = refused.keep(state, Scope::Sync, now).await?;
    state.store.run_one(moved).await?;
    if let Err(e) = state.lanes.send_after(Lane::High, id, None).await {
        // The reconciler sends a queued job whose message was lost.
        worker::console_error!("call {id}: its fallback could not be queued yet: {e}");
    }
    Ok(Some(refused.view(now).describe()))
}

/// Settles a direct call's outcome on its job, as a consumer would settle one attempt (the
/// answer kept in R2, usage and cost on the row) — but never retried: the caller hears the
/// failure and decides.
async fn settle_call(
    state: &AppState,
    id: &str,
    model: &str,
    result: Result<Message, CallOutcome>,
) -> Result<Response, AppError> {
    match result {
        Ok(message) => {
            state.blobs.store_answer(id, &message).await?;
            let settled = settle_answer(Kind::Prompt, &message, Tier::Standard, now_ms());
            state.store.settle_sync(id, &settled, now_ms()).await?;
            match settled.end {
                // A paid answer with nothing to use (a refusal, thinking only): the queue path
                // fails its job with the same reason.
                End::Fail(f) => Err(ApiError::new(502, "unusable_answer", f.reason, None).into()),
                End::Complete { .. } => Ok(Json(ClaudeAnswer {
                    path: CallPath::Direct,
                    job_id: Some(id.to_owned()),
                    text: message.text(),
                    cost_micros: settled.cost_micros,
                    input_tokens: message.usage.input_tokens.into(),
                    output_tokens: message.usage.output_tokens.into(),
                    model: message.model,
                })
                .into_response()),
            }
        }
        Err(CallOutcome::Undecodable { reason, raw }) => {
            // Paid for but unreadable: kept in R2, its usage recorded as far as it can be read.
            state.blobs.store_undecodable(id, &raw, model).await?;
            let settled = settle_undecodable(model, &reason, &raw, now_ms());
            state.store.settle_sync(id, &settled, now_ms()).await?;
            Err(ApiError::new(502, "unusable_answer", reason, None).into())
        }
        Err(failure) => {
            let failed = Failure::of_outcome(&failure);
            state.store.fail_sync(id, &failed, now_ms()).await?;
            Err(match failure {
                CallOutcome::Http {
                    status, message, ..
                } => {
                    let (code, http) = if status == 429 {
                        ("rate_limited", 429)
                    } else {
                        ("upstream_error", 502)
                    };
                    ApiError::new(
                        http,
                        code,
                        format!("Anthropic API {status}: {message}"),
                        None,
                    )
                }
                other => ApiError::new(502, "upstream_error", describe(&other), None),
            }
            .into())
        }
    }
}
