//! `POST /api/claude {prompt}`: the rollout path. Users inside `QUEUE_ROLLOUT_PERCENT` go through
//! the queue (a high-priority prompt job) and wait a bounded time for the result, else get a 202
//! with the poll URL; everyone else is called directly. The percent is read on every request
//! (`Config::rollout_percent`: a var, or a secret that can change without a redeploy).

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::answer::{judge, Verdict};
use pipeline::budget::{Need, Reserve, Settle};
use pipeline::dto::{ClaudeAnswer, JobAck};
use pipeline::error::ApiError;
use pipeline::pricing::{cost_micros, Tier};
use pipeline::retry::CallOutcome;
use pipeline::status::{Kind, Lane, Mode, Status};
use pipeline::{prompt, rollout};
use worker::Delay;

use crate::config::now_ms;
use crate::error::AppError;
use crate::identity::Caller;
use crate::routes::jobs::create_prompt_job;
use crate::routes::{require_json, AppState};
use crate::services::new_id;

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
    let user = caller.user_id.as_str();
    crate::ops::admit(&state, user).await?;
    if !rollout::in_rollout(user, state.config.rollout_percent) {
        return direct(&state, &input).await;
    }
    let id = create_prompt_job(&state, user, &input, None).await?;
    let deadline = now_ms() + state.config.rollout_wait_ms as i64;
    while now_ms() < deadline {
        Delay::from(Duration::from_millis(250)).await;
        let Some(row) = state
            .store
            .job_for_user(&id, user, Some(Kind::Prompt))
            .await?
        else {
            break;
        };
        match row.status {
            Status::Completed => {
                let text = state
                    .blobs
                    .get(&crate::blobs::result_key(&id))
                    .await?
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .ok_or_else(|| {
                        ApiError::internal("the result of this completed job is missing")
                    })?;
                let view = row.job_view(now_ms());
                return Ok(Json(ClaudeAnswer {
                    path: "queue".into(),
                    job_id: Some(id),
                    text,
                    model: view.model,
                    input_tokens: view.spend.input_tokens,
                    output_tokens: view.spend.output_tokens,
                    cost_micros: Some(view.spend.cost_micros),
                })
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
    // An id for the call, so the simulator's billing can count it like any other.
    let call_id = format!("direct-{}", new_id()?);
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
    let grant = state.budget.reserve(&reservation).await?;
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
    let answered = state.anthropic.messages(&request, &call_id).await;
    let settlement = Settle::after_call(
        &call_id,
        &request.model,
        &answered.result,
        answered.reported,
    );
    state.budget.settle(&settlement).await;
    match answered.result {
        Ok(message) => match judge(&message) {
            // A paid answer with nothing to use (a refusal, thinking only): the queue path
            // would fail its job with the same reason.
            Verdict::Unusable(reason) => {
                Err(ApiError::new(502, "unusable_answer", reason, None).into())
            }
            Verdict::Usable => Ok(Json(ClaudeAnswer {
                path: "direct".into(),
                job_id: None,
                text: message.text(),
                cost_micros: cost_micros(&message.model, &message.usage, Tier::Standard, now_ms()),
                input_tokens: message.usage.input_tokens.into(),
                output_tokens: message.usage.output_tokens.into(),
                model: message.model,
            })
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
