//! One synchronous call, and what follows from it: the request (shaped for the model it goes
//! to), the budget's reservation (wait in place or defer), the claim, the call, and the
//! settlement — each step as `pipeline` decides it.

use pipeline::answer::{settle_answer, settle_undecodable, End};
use pipeline::anthropic::{CountTokensRequest, MessagesRequest};
use pipeline::budget::{Need, Reserve, Settle};
use pipeline::delivery::{
    after_count_failed, after_grant, defer_delay_s, BudgetStep, CountFailed, BUDGET_SILENT_DEFER_MS,
};
use pipeline::ops::joblog::JobLog;
use pipeline::outcome::{describe, AttemptOutcome, CallOutcome};
use pipeline::pricing::Tier;
use pipeline::retry::{decide, is_overload, is_spend_limit, model_for, Decision};
use pipeline::status::{Lane, Transition};
use wasm_bindgen::JsValue;
use worker::Delay;

use super::handle::Handle;
use crate::alerts::announce_dead_letter;
use crate::anthropic::Answered;
use crate::config::now_ms;
use crate::refusals::{fallback_of, Refused};
use crate::requests::request_of;
use crate::services::AppState;
use crate::store::lifecycle::{Attempt, Scope};
use crate::store::JobRow;

/// Runs one delivered sync job to its end (or puts it back on its lane).
/// A sync call's work outside the Messages call itself, at most: reading its request, counting
/// its tokens, uploading its PDF, settling (what the wall-time plan adds to the call timeout).
const OUTSIDE_THE_CALL_MS: u64 = 60_000;

pub async fn run(state: &AppState, msg: Handle, row: JobRow) {
    let id = row.id.clone();
    let lane = row.lane;
    let timing = &state.config.timing;
    let worst_ms = u64::from(timing.call_timeout_ms) + OUTSIDE_THE_CALL_MS;
    if !state.meter.call_fits(worst_ms) {
        worker::console_log!(
            "job {id}: a call of up to {worst_ms} ms would not end inside this invocation's \
             planned wall time; delivered again"
        );
        msg.deliver_again(state, lane, &id).await;
        return;
    }
    let mut request = match request_of(state, &row).await {
        Ok(r) => r,
        Err(e) => {
            worker::console_error!("job {id}: cannot build its request ({e}); retrying");
            msg.retry(state, timing.backoff_s(1, None)).await;
            return;
        }
    };
    // Two overload answers in a row move the job down the fallback chain.
    let model = model_for(
        &request.model,
        row.overloads.max(0) as u32,
        &state.config.model_chain,
    )
    .to_owned();
    // Shaped for the model it goes to (a fallback may refuse what the first model took).
    request = pipeline::shape::conform(request, &model);
    if no_longer_listed(state, &msg, &id, &model).await {
        return;
    }
    let input = match pipeline::tokens::estimate_request(&request) {
        Some(n) => n,
        None => match count_tokens(state, &row, &request).await {
            Ok(n) => n,
            Err(e)
                if pipeline::anthropic::files::is_missing_file(&e)
                    && pipeline::anthropic::files::reads_a_file(&request) =>
            {
                // Its PDF is gone from the Files API: forgotten, and uploaded by the next try.
                worker::console_error!("job {id}: {}; its PDF is uploaded again", describe(&e));
                let forgot = state.store.forget_files(std::slice::from_ref(&id)).await;
                if let Err(err) = forgot {
                    worker::console_error!("job {id}: {err}");
                }
                msg.retry(state, timing.backoff_s(1, None)).await;
                return;
            }
            Err(e) => {
                match after_count_failed(&e, lane, timing) {
                    CountFailed::Fail(f) => match state.store.fail_sync(&id, &f, now_ms()).await {
                        Ok(_) => msg.ack(),
                        Err(err) => {
                            worker::console_error!("job {id}: {err}; retrying");
                            msg.retry(state, timing.backoff_s(1, None)).await;
                        }
                    },
                    CountFailed::Defer { ms } => {
                        worker::console_error!(
                            "job {id}: count_tokens failed ({}); deferring",
                            describe(&e)
                        );
                        defer(state, &msg, lane, &id, ms).await;
                    }
                }
                return;
            }
        },
    };
    // A reservation first: tokens per minute and a slot of the lane.
    let reservation = Reserve {
        job_id: id.clone(),
        lane,
        model: model.clone(),
        need: Need {
            input,
            output: request.max_tokens as u64,
        },
        ttl_ms: timing.call_timeout_ms as i64 + 30_000,
        user: Some(row.user_id.clone()),
    };
    let (mut waited, mut asks) = (0, 0);
    loop {
        asks += 1;
        match state.budget.reserve(&reservation).await {
            Ok(grant) => match after_grant(&grant, waited, asks) {
                BudgetStep::Go => break,
                BudgetStep::Wait { ms } => {
                    waited += ms;
                    Delay::from(std::time::Duration::from_millis(ms)).await;
                }
                BudgetStep::Defer { ms } => {
                    defer(state, &msg, lane, &id, ms).await;
                    return;
                }
            },
            Err(e) => {
                worker::console_error!("job {id}: no answer from the budget ({e}); deferring");
                defer(state, &msg, lane, &id, BUDGET_SILENT_DEFER_MS).await;
                return;
            }
        }
    }
    let mut settlement = Settle::unused(&id, &model);
    let result: worker::Result<()> = async {
        if !state.store.claim(&id, now_ms()).await? {
            msg.ack();
            return Ok(());
        }
        let attempt = (row.attempts + 1).max(1) as u32;
        if let Some(message) = state.blobs.stored_answer(&id).await? {
            // Answered before a crash; settle from what was stored, never call twice.
            let settled = settle_answer(row.kind, &message, Tier::Standard, now_ms());
            state.store.settle_sync(&id, &settled, now_ms()).await?;
            msg.ack();
            return Ok(());
        }
        if fell_back_before(state, &msg, &row, &model).await? {
            return Ok(());
        }
        let started_at = now_ms();
        let answered = call(state, &row, &request).await;
        settlement = Settle::after_call(&id, &model, &answered.result, answered.reported);
        if matches!(answered.result, Err(CallOutcome::Timeout)) {
            crate::ops::timed_out(state, &model, &reservation.need, row.reserved_micros).await;
        }
        let mut spent = (None, None);
        let fallback = answered
            .result
            .as_ref()
            .ok()
            .and_then(|m| fallback_of(state, &row, &model, m));
        let (label, error) = match &answered.result {
            Ok(message) if fallback.is_some() => {
                let refused = Refused {
                    row: &row,
                    model: &model,
                    message,
                    n: attempt,
                    tier: Tier::Standard,
                    to: fallback.clone().unwrap_or_default(),
                };
                let view = fall_back(state, &msg, &refused).await?;
                spent = (Some(message.usage), Some(view.spend.cost_micros));
                (AttemptOutcome::Refused, Some(view.describe()))
            }
            Ok(message) => {
                state.blobs.store_answer(&id, message).await?;
                let settled = settle_answer(row.kind, message, Tier::Standard, now_ms());
                state.store.settle_sync(&id, &settled, now_ms()).await?;
                msg.ack();
                spent = (settled.usage, settled.cost_micros);
                match settled.end {
                    End::Complete { .. } => (AttemptOutcome::Completed, None),
                    End::Fail(f) => (AttemptOutcome::Failed, Some(f.reason)),
                }
            }
            Err(CallOutcome::Undecodable { reason, raw }) => {
                // Paid for but unreadable: kept in R2, its usage recorded as far as it can be
                // read, failed once.
                state.blobs.store_undecodable(&id, raw, &model).await?;
                let settled = settle_undecodable(&model, reason, raw, now_ms());
                state.store.settle_sync(&id, &settled, now_ms()).await?;
                msg.ack();
                spent = (settled.usage, settled.cost_micros);
                (AttemptOutcome::Failed, Some(reason.clone()))
            }
            Err(failure)
                if pipeline::anthropic::files::is_missing_file(failure)
                    && pipeline::anthropic::files::reads_a_file(&request) =>
            {
                // Its PDF is gone from the Files API (deleted or expired there): forget it, so
                // the next try uploads it again — retried as any transient failure (backoff,
                // the DLQ after the last try).
                state.store.forget_files(std::slice::from_ref(&id)).await?;
                let again = CallOutcome::Network(format!(
                    "{}; the PDF is uploaded again",
                    describe(failure)
                ));
                (
                    apply(state, &msg, &id, lane, &again, attempt).await?,
                    Some(describe(&again)),
                )
            }
            Err(failure) => (
                apply(state, &msg, &id, lane, failure, attempt).await?,
                Some(describe(failure)),
            ),
        };
        let ended_at = now_ms();
        worker::console_log!(
            "{}",
            JobLog {
                model: Some(&model),
                attempt,
                ms: ended_at - started_at,
                error: error.as_deref(),
                ..row.log("job.attempt", label.as_str())
            }
            .with_usage(spent.0.as_ref(), spent.1)
            .line()
        );
        let record = Attempt {
            job_id: &id,
            n: attempt,
            model: Some(&model),
            started_at,
            ended_at,
            outcome: label,
            error: error.as_deref(),
        };
        if let Err(e) = state.store.record_attempt(&record).await {
            // The attempt log is for people; the job itself is already settled.
            worker::console_error!("job {id}: attempt {attempt} not logged: {e}");
        }
        Ok(())
    }
    .await;
    state.budget.settle(&settlement).await;
    if let Err(e) = result {
        // Storage failed around the call: retry; the guarded writes make the rerun safe.
        worker::console_error!("job {id}: {e}; retrying");
        msg.retry(state, timing.backoff_s(1, None)).await;
    }
}

/// A model the API stopped listing fails the job before any call (`crate::models_watch`);
/// answers whether it did (the message is then acked, or retried if the row cannot be written).
async fn no_longer_listed(state: &AppState, msg: &Handle, id: &str, model: &str) -> bool {
    let Ok(Some(why)) = crate::models_watch::refusal(state, model).await else {
        return false;
    };
    let failed = pipeline::outcome::Failure::new(why);
    match state.store.fail_sync(id, &failed, now_ms()).await {
        Ok(()) => msg.ack(),
        Err(e) => {
            worker::console_error!("job {id}: {e}; retrying");
            msg.retry(state, state.config.timing.backoff_s(1, None))
                .await;
        }
    }
    true
}

/// A refusal stored before a crash, its fallback not yet written: the job moves from what was
/// stored, without a second call. Answers whether it did.
async fn fell_back_before(
    state: &AppState,
    msg: &Handle,
    row: &JobRow,
    model: &str,
) -> worker::Result<bool> {
    if row.attempts == 0 || row.refusal.is_some() {
        return Ok(false);
    }
    let Some(message) = state.blobs.stored_refusal(&row.id).await? else {
        return Ok(false);
    };
    let Some(to) = fallback_of(state, row, model, &message) else {
        return Ok(false);
    };
    let refused = Refused {
        row,
        model,
        message: &message,
        n: row.attempts as u32,
        tier: Tier::Standard,
        to,
    };
    fall_back(state, msg, &refused).await?;
    Ok(true)
}

/// Moves a refused job to its fallback model (the refused answer kept, the row written) and
/// sends it to its lane again; answers the refused attempt as kept.
async fn fall_back(
    state: &AppState,
    msg: &Handle,
    refused: &Refused<'_>,
) -> worker::Result<pipeline::dto::RefusalView> {
    let now = now_ms();
    let moved = refused.keep(state, Scope::Sync, now).await?;
    state.store.run_one(moved).await?;
    let view = refused.view(now);
    worker::console_log!("job {}: {}", refused.row.id, view.describe());
    msg.deliver_again(state, refused.row.lane, &refused.row.id)
        .await;
    Ok(view)
}

/// Puts a job back on its lane after `after_ms` without counting a retry: a fresh message is
/// sent with a delivery delay, then this one is acked (or retried if the send fails).
async fn defer(state: &AppState, msg: &Handle, lane: Lane, id: &str, after_ms: u64) {
    let delay_s = defer_delay_s(after_ms);
    match state.lanes.send_after(lane, id, Some(delay_s)).await {
        Ok(()) => msg.ack(),
        Err(e) => {
            worker::console_error!("job {id}: deferral failed ({e}); retrying instead");
            msg.retry(state, delay_s).await;
        }
    }
}

/// Carries out `pipeline::retry::decide` for a failed call; answers what became of the job,
/// for the attempt log.
async fn apply(
    state: &AppState,
    msg: &Handle,
    id: &str,
    lane: Lane,
    failure: &CallOutcome,
    attempt: u32,
) -> worker::Result<AttemptOutcome> {
    if is_spend_limit(failure) {
        worker::console_error!(
            "ALERT job {id}: 429 without retry-after — a spend limit, not a rate limit"
        );
        state.store.count("alert_spend_limit", now_ms()).await?;
    }
    Ok(match decide(failure, attempt, lane, &state.config.timing) {
        Decision::Ack => {
            msg.ack();
            AttemptOutcome::Completed
        }
        Decision::Fail(f) => {
            state.store.fail_sync(id, &f, now_ms()).await?;
            msg.ack();
            AttemptOutcome::Failed
        }
        Decision::Retry { delay_s, reason } => {
            // The backoff is kept on the row too: another message of the job (a fairer job's
            // message ran it, see `pipeline::fair`) must not call it early.
            let now = now_ms();
            let run_after = now + delay_s as i64 * 1000;
            state
                .store
                .requeue(id, &reason, is_overload(failure), (now, run_after))
                .await?;
            msg.retry(state, delay_s).await;
            AttemptOutcome::Retry
        }
        Decision::DeadLetter(f) => {
            let mark =
                state
                    .store
                    .dead_letter(Transition::DeadLetter, id, &f, now_ms(), Scope::Sync)?;
            state.store.run_one(mark).await?;
            announce_dead_letter(state, id).await;
            msg.ack();
            AttemptOutcome::DeadLettered
        }
    })
}

/// The body a job's request is sent with (its PDF put in where it goes inline); nothing sent
/// when it cannot be assembled.
async fn body(
    state: &AppState,
    row: &JobRow,
    json: serde_json::Result<String>,
) -> Result<JsValue, CallOutcome> {
    let json = json.map_err(|e| CallOutcome::Network(format!("cannot encode the request: {e}")))?;
    crate::requests::body_of(state, row, json)
        .await
        .map_err(|e| CallOutcome::Network(format!("cannot read the request's PDF: {e}")))
}

/// `count_tokens` for a job's request.
async fn count_tokens(
    state: &AppState,
    row: &JobRow,
    request: &MessagesRequest,
) -> Result<u64, CallOutcome> {
    let json = serde_json::to_string(&CountTokensRequest::from(request));
    state
        .anthropic
        .count_tokens_body(body(state, row, json).await?)
        .await
}

/// The Messages call of a job's request.
async fn call(state: &AppState, row: &JobRow, request: &MessagesRequest) -> Answered {
    match body(state, row, serde_json::to_string(request)).await {
        Ok(b) => state.anthropic.messages_body(b, &row.id).await,
        Err(e) => Answered {
            result: Err(e),
            reported: Vec::new(),
        },
    }
}
