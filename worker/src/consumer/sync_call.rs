//! One synchronous call, and what follows from it: the request (shaped for the model it goes
//! to), the budget's reservation (wait in place or defer), the claim, the call, and the
//! settlement — each step as `pipeline` decides it.

use pipeline::answer::{self, settle_answer, settle_undecodable, End};
use pipeline::anthropic::{CountTokensRequest, Message, MessagesRequest, Usage};
use pipeline::budget::{Need, Reserve, Settle};
use pipeline::delivery::{
    after_count_failed, after_grant, defer_delay_s, BudgetStep, CountFailed, Stop,
    BUDGET_SILENT_DEFER_MS,
};
use pipeline::money::UsdMicros;
use pipeline::ops::joblog::JobLog;
use pipeline::outcome::{describe, AttemptOutcome, CallOutcome, Failure};
use pipeline::pricing::Tier;
use pipeline::provider::{Needs, Provider};
use pipeline::retry::{decide, is_overload, is_spend_limit, model_for, Decision};
use pipeline::status::{Kind, Lane, Transition};
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

/// A sync call's work outside the Messages call itself, at most: reading its request, counting
/// its tokens, uploading its PDF, settling (what the wall-time plan adds to the call timeout).
const OUTSIDE_THE_CALL_MS: u64 = 60_000;

/// Runs one delivered sync job to its end (or puts it back on its lane), in four stages:
/// [`prepare`] the request, [`reserve`] its tokens, [`claim_and_call`], [`settle`] — each ends
/// the delivery with a [`Stop`] (carried out by [`stop`]) or hands the next stage its input.
/// The budget's reservation is settled whatever happens after it.
pub async fn run(state: &AppState, msg: Handle, row: JobRow) {
    let prepared = match prepare(state, &row).await {
        Ok(p) => p,
        Err(s) => return stop(state, &msg, &row, s).await,
    };
    let granted = match reserve(state, &row, &prepared).await {
        Ok(r) => r,
        Err(s) => return stop(state, &msg, &row, s).await,
    };
    let mut settlement = Settle::unused(&row.id, &prepared.model);
    let result: worker::Result<()> = async {
        let Some(called) =
            claim_and_call(state, &msg, &row, (&prepared, &granted), &mut settlement).await?
        else {
            return Ok(());
        };
        let settled = settle(state, &msg, &row, (&prepared, &granted), &called).await?;
        record(
            state,
            &row,
            (granted.route, &prepared.model),
            &called,
            settled,
        )
        .await;
        Ok(())
    }
    .await;
    state.budget.settle(&settlement).await;
    if let Err(e) = result {
        // Storage failed around the call: retry; the guarded writes make the rerun safe.
        worker::console_error!("job {}: {e}; retrying", row.id);
        let delay_s = state.config.timing.backoff_s(1, None);
        stop(state, &msg, &row, Stop::Retry { delay_s }).await;
    }
}

/// What [`prepare`] hands on: the request shaped for the model it goes to, its input tokens,
/// and the routes that can serve it (empty: the Anthropic API alone).
struct Prepared {
    request: MessagesRequest,
    model: String,
    input: u64,
    routes: Vec<Provider>,
}

/// Stage 1, before anything is reserved: the call must fit in what is left of this invocation;
/// the request is read and shaped for its model (two overload answers in a row move the job
/// down the fallback chain); a model the API stopped listing fails the job; the input tokens
/// are estimated, or counted by the API.
async fn prepare(state: &AppState, row: &JobRow) -> Result<Prepared, Stop> {
    let (id, timing) = (&row.id, &state.config.timing);
    let worst_ms = u64::from(timing.call_timeout_ms) + OUTSIDE_THE_CALL_MS;
    if !state.meter.call_fits(worst_ms) {
        worker::console_log!(
            "job {id}: a call of up to {worst_ms} ms would not end inside this invocation's \
             planned wall time; delivered again"
        );
        return Err(Stop::DeliverAgain);
    }
    let request = request_of(state, row).await.map_err(|e| {
        worker::console_error!("job {id}: cannot build its request ({e}); retrying");
        Stop::Retry {
            delay_s: timing.backoff_s(1, None),
        }
    })?;
    let model = model_for(
        &request.model,
        row.overloads.max(0) as u32,
        &state.config.model_chain,
    )
    .to_owned();
    // Shaped for the model it goes to (a fallback may refuse what the first model took).
    let request = pipeline::shape::conform(request, &model);
    if let Ok(Some(why)) = crate::models_watch::refusal(state, &model).await {
        return Err(Stop::Fail(Failure::new(why)));
    }
    let input = match pipeline::tokens::estimate_request(&request) {
        Some(n) => n,
        None => counted(state, row, &request).await?,
    };
    let routes = routes_for(state, row, &request);
    Ok(Prepared {
        request,
        model,
        input,
        routes,
    })
}

/// The routes that can serve a job's request, in failover order; empty when the Anthropic API
/// is the only route configured (the budget's breaker then never refuses). A PDF job's request
/// that reads a file can go elsewhere with its PDF inline, if the body fits the route's limit.
fn routes_for(state: &AppState, row: &JobRow, request: &MessagesRequest) -> Vec<Provider> {
    let routes = &state.config.routes.list;
    let Some(model) = pipeline::models::find(&request.model) else {
        return Vec::new();
    };
    if !routes.has_failover() {
        return Vec::new();
    }
    let mut needs = Needs::of(request);
    if row.kind == Kind::Pdf {
        needs.files_api = false;
    }
    // A PDF job goes inline elsewhere: its body as `body_of` will send it.
    let inline = match row.kind {
        Kind::Pdf => crate::requests::pdf_bytes(row),
        _ => 0,
    };
    routes
        .candidates(model, needs)
        .into_iter()
        .filter(|&p| routes.get(p).is_some_and(|r| r.takes_inline(inline)))
        .collect()
}

/// The input tokens of a request that cannot be estimated, counted by the API; a PDF gone from
/// the Files API is forgotten (the next try uploads it again), any other failure as
/// `pipeline::delivery::after_count_failed` decides.
async fn counted(state: &AppState, row: &JobRow, request: &MessagesRequest) -> Result<u64, Stop> {
    let (id, timing) = (&row.id, &state.config.timing);
    let e = match count_tokens(state, row, request).await {
        Ok(n) => return Ok(n),
        Err(e) => e,
    };
    if pipeline::anthropic::files::is_missing_file(&e)
        && pipeline::anthropic::files::reads_a_file(request)
    {
        worker::console_error!("job {id}: {}; its PDF is uploaded again", describe(&e));
        if let Err(err) = state.store.forget_files(&[id.to_string()]).await {
            worker::console_error!("job {id}: {err}");
        }
        return Err(Stop::Retry {
            delay_s: timing.backoff_s(1, None),
        });
    }
    let failover = state.config.routes.list.has_failover();
    match after_count_failed(&e, row.lane, timing, failover) {
        CountFailed::WorstCase => {
            worker::console_log!(
                "job {id}: count_tokens failed ({}); reserving its worst case",
                describe(&e)
            );
            Ok(pipeline::tokens::worst_input_tokens(request, None))
        }
        CountFailed::Defer { ms } => {
            worker::console_error!(
                "job {id}: count_tokens failed ({}); deferring",
                describe(&e)
            );
            Err(Stop::Defer { ms })
        }
        CountFailed::Fail(f) => Err(Stop::Fail(f)),
    }
}

/// What stage 2 hands on: the reservation, and the route it was granted on.
struct Granted {
    reservation: Reserve,
    route: Provider,
    /// The call is its route's half-open breaker's probe.
    probe: bool,
}

/// Stage 2: a reservation of the tokens per minute and a slot of the lane, on the first route
/// whose breaker lets the call through, waited for in place while the budget says it is
/// short, else the job is put back on its lane.
async fn reserve(state: &AppState, row: &JobRow, prepared: &Prepared) -> Result<Granted, Stop> {
    let timing = &state.config.timing;
    let reservation = Reserve {
        job_id: row.id.to_string(),
        lane: row.lane,
        model: prepared.model.clone(),
        need: Need {
            input: prepared.input,
            output: prepared.request.max_tokens as u64,
        },
        ttl_ms: timing.call_timeout_ms as i64 + 30_000,
        user: Some(row.user_id.to_string()),
        routes: prepared.routes.clone(),
    };
    let (mut waited, mut asks) = (0, 0);
    loop {
        asks += 1;
        let grant = state.budget.reserve(&reservation).await.map_err(|e| {
            worker::console_error!("job {}: no answer from the budget ({e}); deferring", row.id);
            Stop::Defer {
                ms: BUDGET_SILENT_DEFER_MS,
            }
        })?;
        match after_grant(&grant, waited, asks) {
            BudgetStep::Go => {
                return Ok(Granted {
                    route: grant.route,
                    probe: grant.probe,
                    reservation,
                })
            }
            BudgetStep::Wait { ms } => {
                waited += ms;
                Delay::from(std::time::Duration::from_millis(ms)).await;
            }
            BudgetStep::Defer { ms } => return Err(Stop::Defer { ms }),
        }
    }
}

/// Carries out how a stage ended the delivery.
async fn stop(state: &AppState, msg: &Handle, row: &JobRow, how: Stop) {
    let (id, lane) = (&row.id, row.lane);
    match how {
        Stop::DeliverAgain => msg.deliver_again(state, lane, id).await,
        Stop::Retry { delay_s } => msg.retry(state, delay_s).await,
        Stop::Defer { ms } => defer(state, msg, lane, id, ms).await,
        Stop::Fail(f) => match state.store.fail_sync(id, &f, now_ms()).await {
            Ok(_) => msg.ack(),
            Err(err) => {
                worker::console_error!("job {id}: {err}; retrying");
                msg.retry(state, state.config.timing.backoff_s(1, None))
                    .await;
            }
        },
        Stop::Done => {}
    }
}

/// What stage 3 hands on: the answer and when the call was made.
struct Called {
    result: Result<pipeline::anthropic::Message, CallOutcome>,
    attempt: u32,
    started_at: i64,
}

/// Stage 3: the job is claimed (a job already running or ended is not called again); an
/// answer stored before a crash, or a refusal whose fallback was not yet written, settles it
/// without a call; else Claude is called once. `None`: the delivery is over.
async fn claim_and_call(
    state: &AppState,
    msg: &Handle,
    row: &JobRow,
    (prepared, granted): (&Prepared, &Granted),
    settlement: &mut Settle,
) -> worker::Result<Option<Called>> {
    let reservation = &granted.reservation;
    let (id, model) = (&row.id, &prepared.model);
    if !state.store.claim(id, now_ms()).await? {
        msg.ack();
        return Ok(None);
    }
    if let Some(message) = state.blobs.stored_answer(id).await? {
        // Answered before a crash; settle from what was stored, never call twice.
        let settled = settle_answer(row.kind, &message, Tier::Standard, now_ms());
        state.store.settle_sync(id, &settled, now_ms()).await?;
        msg.ack();
        return Ok(None);
    }
    if fell_back_before(state, msg, row, model).await? {
        return Ok(None);
    }
    let started_at = now_ms();
    let Answered { result, reported } = call(state, row, granted.route, &prepared.request).await;
    *settlement = Settle::after_call(id, (granted.route, model), &result, reported);
    if matches!(result, Err(CallOutcome::Timeout)) {
        crate::ops::timed_out(state, model, &reservation.need, row.reserved_micros).await;
    }
    let attempt = (row.attempts + 1).max(1) as u32;
    Ok(Some(Called {
        result,
        attempt,
        started_at,
    }))
}

/// What stage 4 leaves for the attempt log: the outcome, the error, and what was spent.
struct Settled {
    outcome: AttemptOutcome,
    error: Option<String>,
    spent: (Option<Usage>, Option<UsdMicros>),
}

/// Stage 4: what the answer makes of the job — a refusal moves it to its fallback model, an
/// answer settles it (kept in R2 first), an unreadable answer fails it once (paid for, kept),
/// a failure is retried, failed or dead-lettered as `pipeline::retry::decide` says.
async fn settle(
    state: &AppState,
    msg: &Handle,
    row: &JobRow,
    (prepared, granted): (&Prepared, &Granted),
    called: &Called,
) -> worker::Result<Settled> {
    let (id, model, route) = (&row.id, &prepared.model, granted.route);
    let message = match &called.result {
        Ok(message) => message,
        Err(CallOutcome::Undecodable { reason, raw }) => {
            return undecodable(state, msg, (id, route), model, (reason, raw)).await;
        }
        Err(failure) => {
            if let Some(why) = the_routes_fault(state, id, granted, failure).await? {
                return release(state, msg, row, why).await;
            }
            let again = missing_file(state, row, &prepared.request, failure).await?;
            let failure = again.as_ref().unwrap_or(failure);
            let outcome = apply(state, msg, id, row.lane, failure, called.attempt).await?;
            return Ok(Settled {
                outcome,
                error: Some(describe(failure)),
                spent: (None, None),
            });
        }
    };
    if let Some(to) = fallback_of(state, row, model, message) {
        let refused = Refused {
            row,
            model,
            message,
            n: called.attempt,
            tier: Tier::Standard,
            to,
        };
        let view = fall_back(state, msg, &refused).await?;
        let spent = (Some(message.usage), Some(view.spend.cost_micros));
        return Ok(Settled {
            outcome: AttemptOutcome::Refused,
            error: Some(view.describe()),
            spent,
        });
    }
    answered(state, msg, (row, route), message).await
}

/// A failure that is the route's, not the job's: a route besides the Anthropic API refused
/// our credentials (a bad or expired key, signature or token — a configuration error, which
/// operators hear of; its breaker opened at once, so no storm of calls follows), or a breaker's
/// probe found its route still unwell. `None` for any other failure.
async fn the_routes_fault(
    state: &AppState,
    id: &str,
    granted: &Granted,
    failure: &CallOutcome,
) -> worker::Result<Option<String>> {
    let route = granted.route;
    if pipeline::provider::refuses_credentials(route, failure) {
        let why = format!(
            "{} refused our credentials (configuration error): {}",
            route.display_name(),
            describe(failure)
        );
        worker::console_error!("ALERT job {id}: {why}");
        state
            .store
            .count("alert_route_credentials", now_ms())
            .await?;
        return Ok(Some(why));
    }
    let unwell = pipeline::provider::signal(route, failure) == pipeline::breaker::Signal::Unwell;
    Ok((granted.probe && unwell).then(|| {
        format!(
            "the probe of {} found it still unwell: {}",
            route.display_name(),
            describe(failure)
        )
    }))
}

/// The job goes back to waiting without spending its attempt (`Store::release_unspent`), to be
/// reserved again in a moment — on the next route, its failed one's breaker now open.
async fn release(
    state: &AppState,
    msg: &Handle,
    row: &JobRow,
    why: String,
) -> worker::Result<Settled> {
    let now = now_ms();
    state
        .store
        .release_unspent(&row.id, &why, (now, now + ROUTE_FAULT_DEFER_MS as i64))
        .await?;
    defer(state, msg, row.lane, &row.id, ROUTE_FAULT_DEFER_MS).await;
    Ok(Settled {
        outcome: AttemptOutcome::Retry,
        error: Some(why),
        spent: (None, None),
    })
}

/// How long a job whose call failed for its route's sake waits before it is reserved again.
const ROUTE_FAULT_DEFER_MS: u64 = 1_000;

/// An answer that could not be read fails its job once: paid for, and kept in R2 as it came.
async fn undecodable(
    state: &AppState,
    msg: &Handle,
    (id, route): (&str, Provider),
    model: &str,
    (reason, raw): (&str, &str),
) -> worker::Result<Settled> {
    state.blobs.store_undecodable(id, raw, model).await?;
    let settled = on_route(
        state,
        route,
        settle_undecodable(model, reason, raw, now_ms()),
    );
    state.store.settle_sync(id, &settled, now_ms()).await?;
    msg.ack();
    Ok(Settled {
        outcome: AttemptOutcome::Failed,
        error: Some(reason.to_string()),
        spent: (settled.usage, settled.cost_micros),
    })
}

/// An answer settles its job, kept in R2 first (`pipeline::answer::settle_answer`).
async fn answered(
    state: &AppState,
    msg: &Handle,
    (row, route): (&JobRow, Provider),
    message: &Message,
) -> worker::Result<Settled> {
    state.blobs.store_answer(&row.id, message).await?;
    let settled = settle_answer(row.kind, message, Tier::Standard, now_ms());
    let settled = on_route(state, route, settled);
    state.store.settle_sync(&row.id, &settled, now_ms()).await?;
    msg.ack();
    let (outcome, error) = match settled.end {
        End::Complete { .. } => (AttemptOutcome::Completed, None),
        End::Fail(f) => (AttemptOutcome::Failed, Some(f.reason)),
    };
    Ok(Settled {
        outcome,
        error,
        spent: (settled.usage, settled.cost_micros),
    })
}

/// A settlement priced and recorded on the route that answered.
fn on_route(state: &AppState, route: Provider, settled: answer::Settled) -> answer::Settled {
    match state.config.routes.list.get(route) {
        Some(r) => r.settled(settled),
        None => settled,
    }
}

/// A call refused because its PDF is gone from the Files API (deleted or expired there): the
/// file is forgotten, so the next try uploads it again, and the failure is retried as any
/// transient one (backoff, the DLQ after the last try). `None` for any other failure.
async fn missing_file(
    state: &AppState,
    row: &JobRow,
    request: &MessagesRequest,
    failure: &CallOutcome,
) -> worker::Result<Option<CallOutcome>> {
    if !(pipeline::anthropic::files::is_missing_file(failure)
        && pipeline::anthropic::files::reads_a_file(request))
    {
        return Ok(None);
    }
    state.store.forget_files(&[row.id.to_string()]).await?;
    Ok(Some(CallOutcome::Network(format!(
        "{}; the PDF is uploaded again",
        describe(failure)
    ))))
}

/// The attempt's log line and its row in the attempt log (for people: a failure to write it is
/// logged, the job itself is already settled).
async fn record(
    state: &AppState,
    row: &JobRow,
    (route, model): (Provider, &str),
    called: &Called,
    settled: Settled,
) {
    let (id, attempt) = (&row.id, called.attempt);
    let ended_at = now_ms();
    let line = JobLog {
        model: Some(model),
        attempt,
        ms: ended_at - called.started_at,
        error: settled.error.as_deref(),
        ..row.log("job.attempt", settled.outcome.as_str())
    };
    let (usage, cost) = settled.spent;
    worker::console_log!("{}", line.with_usage(usage.as_ref(), cost).line());
    let entry = Attempt {
        job_id: id,
        n: attempt,
        model: Some(model),
        started_at: called.started_at,
        ended_at,
        outcome: settled.outcome,
        error: settled.error.as_deref(),
        route,
    };
    if let Err(e) = state.store.record_attempt(&entry).await {
        worker::console_error!("job {id}: attempt {attempt} not logged: {e}");
    }
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

/// The Messages call of a job's request, on the route it was granted.
async fn call(
    state: &AppState,
    row: &JobRow,
    route: Provider,
    request: &MessagesRequest,
) -> Answered {
    if let Some(elsewhere) = state
        .config
        .routes
        .list
        .get(route)
        .filter(|r| r.provider() != Provider::Anthropic)
    {
        return crate::providers::messages_on(state, elsewhere, row, request).await;
    }
    match body(state, row, serde_json::to_string(request)).await {
        Ok(b) => state.anthropic.messages_body(b, &row.id).await,
        Err(e) => Answered {
            result: Err(e),
            reported: Vec::new(),
        },
    }
}
