//! `POST /api/claude {prompt}`: the rollout path. Users inside `QUEUE_ROLLOUT_PERCENT` go through
//! the queue (a high-priority prompt job) and wait a bounded time for the result, else get a 202
//! with the poll URL; everyone else is called directly. The percent is read on every request
//! (a var, or a secret that can change without a redeploy).

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::answer::{judge, Verdict};
use pipeline::budget::{Need, Reserve, Settle};
use pipeline::dto::JobAck;
use pipeline::error::ApiError;
use pipeline::pricing::{cost_micros, Tier};
use pipeline::retry::CallOutcome;
use pipeline::status::{Kind, Lane, Mode, Status};
use pipeline::{jobs as ids, prompt, rollout};
use serde_json::json;
use worker::Delay;

use crate::anthropic::Anthropic;
use crate::config::{now_ms, DB};
use crate::error::AppError;
use crate::identity::Caller;
use crate::jobs::get_for_user;
use crate::routes::jobs::{create_prompt_job, result_text};
use crate::routes::{require_json, AppState};
use crate::{lanes, queues};

/// Var (or secret) naming the share of users, 0–100, whose calls take the queue path.
const QUEUE_ROLLOUT_PERCENT: &str = "QUEUE_ROLLOUT_PERCENT";
/// How long the queue path waits for its job before answering 202 (var `ROLLOUT_WAIT_MS`).
const DEFAULT_WAIT_MS: u64 = 25_000;

#[worker::send]
pub async fn call(
    State(state): State<AppState>,
    Caller(caller): Caller,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    require_json(&headers)?;
    let mut input = prompt::parse_input(&body, now_ms())?;
    // The interactive path: always the high lane, always a synchronous call.
    input.priority = Lane::High;
    input.mode = Mode::Sync;
    let env = &state.env;
    let text_of = |name: &str| {
        env.var(name)
            .ok()
            .map(|v| v.to_string())
            .or_else(|| env.secret(name).ok().map(|s| s.to_string()))
    };
    let percent = rollout::parse_percent(text_of(QUEUE_ROLLOUT_PERCENT).as_deref());
    let user = caller.user_id.as_str();
    crate::ops::admit(&state.env, &state.config, user).await?;
    if !rollout::in_rollout(user, percent) {
        return direct(&state, &input).await;
    }
    let id = create_prompt_job(&state, user, &input, None).await?;
    let wait_ms = text_of("ROLLOUT_WAIT_MS")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(DEFAULT_WAIT_MS);
    let deadline = now_ms() + wait_ms as i64;
    let db = env.d1(DB)?;
    while now_ms() < deadline {
        Delay::from(Duration::from_millis(250)).await;
        let Some(row) = get_for_user(&db, &id, user, Some(Kind::Prompt)).await? else {
            break;
        };
        match row.status() {
            Status::Completed => {
                let text = result_text(&state, &id).await?;
                let view = row.job_view(now_ms());
                return Ok(Json(json!({
                    "path": "queue",
                    "jobId": id,
                    "text": text,
                    "model": view.model,
                    "input_tokens": view.input_tokens,
                    "output_tokens": view.output_tokens,
                    "cost_micros": view.cost_micros,
                }))
                .into_response());
            }
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
    Ok((StatusCode::ACCEPTED, Json(JobAck::queued(&id))).into_response())
}

/// Outside the rollout: one Messages call, no job, no queue.
async fn direct(state: &AppState, input: &prompt::PromptInput) -> Result<Response, AppError> {
    let api = Anthropic::new(&state.config);
    // An id for the call, so the simulator's billing can count it like any other.
    let call_id = format!("direct-{}", ids::new_id(queues::random_bytes()?));
    let request = input.request();
    // The direct path spends the same provider limits: it reserves like a consumer, and a
    // refusal is a 429 the caller can retry, not a call that would draw one.
    let reservation = Reserve {
        job_id: call_id.clone(),
        lane: Lane::High,
        model: request.model.clone(),
        need: Need {
            input: pipeline::tokens::estimate_request(&request).unwrap_or(0),
            output: request.max_tokens as u64,
        },
        ttl_ms: state.config.timing.call_timeout_ms as i64 + 30_000,
    };
    let grant = lanes::reserve(&state.env, &reservation).await?;
    if !grant.granted {
        return Err(ApiError::new(
            429,
            "rate_limited",
            format!(
                "the provider's rate limits are in use ({}); retry in {} s",
                grant.limited_by.unwrap_or_default(),
                grant.retry_after_ms.div_ceil(1000)
            ),
            None,
        )
        .into());
    }
    let answered = api.messages(&request, &call_id).await;
    let settlement = Settle::after_call(
        &call_id,
        &request.model,
        &answered.result,
        answered.reported,
    );
    lanes::settle(&state.env, &settlement).await;
    match answered.result {
        Ok(message) => match judge(&message) {
            // A paid answer with nothing to use (a refusal, thinking only): the queue path
            // would fail its job with the same reason.
            Verdict::Unusable(reason) => {
                Err(ApiError::new(502, "unusable_answer", reason, None).into())
            }
            Verdict::Usable => Ok(Json(json!({
                "path": "direct",
                "jobId": null,
                "text": message.text(),
                "model": message.model,
                "input_tokens": message.usage.input_tokens,
                "output_tokens": message.usage.output_tokens,
                "cost_micros": cost_micros(&message.model, &message.usage, Tier::Standard, now_ms()),
            }))
            .into_response()),
        },
        Err(CallOutcome::Http {
            status, message, ..
        }) => {
            let (code, http) = if status == 429 {
                ("rate_limited", 429)
            } else {
                ("upstream_error", 502)
            };
            Err(ApiError::new(
                http,
                code,
                format!("Anthropic API {status}: {message}"),
                None,
            )
            .into())
        }
        Err(other) => Err(ApiError::new(
            502,
            "upstream_error",
            pipeline::retry::describe(&other),
            None,
        )
        .into()),
    }
}
