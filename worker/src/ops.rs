//! The operator's effects: the cron's metrics row and DLQ alert, the alerts' webhook, and the
//! producers' daily-budget check. The decisions are `pipeline::ops`; the queries are the store's.

use pipeline::budget::BudgetView;
use pipeline::clock::day_of;
use pipeline::money::UsdMicros;
use pipeline::ops::budgets::{check_caps, explain_refusal, soft_reached};
use pipeline::ops::metrics::{dlq_crossing, window_ms, BudgetCharge, Metrics, MetricsInput};
use serde::Serialize;

use crate::config::now_ms;
use crate::error::AppError;
use crate::services::AppState;
use crate::store::ops::{CronReads, CronWrites};
use crate::store::Statement;

/// The most ended jobs one metrics row reads (its percentiles are over these).
const MAX_ENDED: i64 = 20_000;

/// The statements of the cron's metrics row and DLQ alert, to run in the cron's one round trip
/// of reads (their results are read by [`CronReads::of`]).
pub fn cron_reads(state: &AppState, at: i64) -> worker::Result<Vec<Statement>> {
    state.store.cron_reads(at, MAX_ENDED)
}

/// The writes of the metrics row at `at`, from the cron's reads and the budget object's state
/// (the row, failure classes, the DLQ alert's state and `beat`, the cron's heartbeat: name,
/// detail), and the dead-letter count to announce when it has just crossed the alert threshold.
pub fn metrics_row(
    state: &AppState,
    at: i64,
    reads: &CronReads,
    budget: worker::Result<BudgetView>,
    beat: (&str, &str),
) -> worker::Result<(Vec<Statement>, Option<u64>)> {
    let budget = match budget {
        Ok(view) => view
            .classes
            .iter()
            .map(|c| BudgetCharge {
                class: c.class.clone(),
                requests: c.requests.charged,
                input_tokens: c.input_tokens.charged,
                output_tokens: c.output_tokens.charged,
                rpm: c.requests.limit,
                itpm: c.input_tokens.limit,
                otpm: c.output_tokens.limit,
            })
            .collect(),
        Err(e) => {
            worker::console_error!("metrics: the budget did not answer: {e}");
            Vec::new()
        }
    };
    let metrics = Metrics::compute(&MetricsInput {
        at,
        window_ms: window_ms(at, reads.previous.as_ref().map(|p| p.at)),
        ended: &reads.ended,
        pending: &reads.pending,
        dead_letters_now: reads.dead_now,
        budget: &budget,
        previous: reads.previous.as_ref(),
        slo: state.config.timing.slo(),
    });
    let (above, fire) = dlq_crossing(
        reads.dlq_above,
        reads.dead_now,
        state.config.dlq_alert_threshold,
    );
    let mut totals = reads.totals.clone();
    totals.add(&reads.ended, reads.previous.as_ref().map(|p| p.at));
    let writes = state.store.cron_writes(&CronWrites {
        metrics: &metrics,
        unclassified: &reads.unclassified,
        dlq_above: (above != reads.dlq_above).then_some(above),
        beat,
        totals: &totals,
    })?;
    Ok((writes, fire.then_some(reads.dead_now)))
}

/// Calls the webhook about dead letters that have just crossed the alert threshold (after the
/// cron's writes recorded the crossing).
pub async fn dlq_alert(state: &AppState, at: i64, dead_now: u64) -> worker::Result<()> {
    let threshold = state.config.dlq_alert_threshold;
    let payload = DlqThreshold {
        event: "dlq.threshold",
        dead_lettered: dead_now,
        threshold,
        text: format!(
            "claude-pipeline: {dead_now} jobs are dead-lettered (alert threshold {threshold})."
        ),
    };
    raise(state, &format!("dlq:{at}"), "dlq_threshold", &payload).await?;
    if state.config.dlq_alert_pauses {
        crate::pauses::pause_for_alert(state, dead_now, at).await?;
    }
    Ok(())
}

/// The webhook's message when the dead letters cross the alert threshold.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DlqThreshold {
    event: &'static str,
    dead_lettered: u64,
    threshold: u64,
    text: String,
}

/// The webhook's message when a user passes their soft daily threshold.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SoftThreshold<'a> {
    event: &'static str,
    user_id: &'a str,
    day: &'a str,
    spent_micros: UsdMicros,
    soft_micros: Option<UsdMicros>,
    text: String,
}

/// A reconciliation line past the threshold: one alert per day and model (`raise` keeps it
/// once), posted to the webhook.
pub async fn reconciliation_alert(
    state: &AppState,
    line: &pipeline::ops::reconcile::ReconLine,
) -> worker::Result<bool> {
    #[derive(Serialize)]
    struct Flagged<'a> {
        event: &'static str,
        day: &'a str,
        model: &'a str,
        ours_micros: u64,
        billed_micros: u64,
        diff_micros: i64,
        text: String,
    }
    let payload = Flagged {
        event: "reconciliation.flagged",
        day: &line.day,
        model: &line.model,
        ours_micros: line.ours_micros,
        billed_micros: line.billed_micros,
        diff_micros: line.diff_micros,
        text: format!(
            "claude-pipeline: Anthropic billed ${} for {} on {}, our own figures say ${}.",
            UsdMicros(line.billed_micros).dollars(),
            line.model,
            line.day,
            UsdMicros(line.ours_micros).dollars()
        ),
    };
    let key = format!("recon:{}:{}", line.day, line.model);
    raise(state, &key, "reconciliation", &payload).await
}

/// Records an alert under `key` (once: a second raise of the same key does nothing) and calls
/// the webhook with `payload` (best effort).
async fn raise<T: Serialize>(
    state: &AppState,
    key: &str,
    kind: &str,
    payload: &T,
) -> worker::Result<bool> {
    let detail =
        serde_json::to_string(payload).map_err(|e| worker::Error::RustError(e.to_string()))?;
    if !state
        .store
        .record_alert(key, now_ms(), kind, &detail)
        .await?
    {
        return Ok(false);
    }
    worker::console_log!("ALERT {kind}: {detail}");
    if let Some(url) = state.config.notify_webhook_url.as_deref() {
        if let Err(e) = crate::anthropic::post_json(&state.meter, url, payload).await {
            worker::console_error!("alert {key}: webhook failed: {e}");
        }
    }
    Ok(true)
}

/// The producers' check before anything is stored: the request's worst case (`need`) must fit
/// under the user's caps with what is already committed (429 `budget_exceeded` otherwise); the
/// soft threshold raises its alert (once per user and day). The database repeats the check
/// atomically when the job is inserted ([`refused`] explains its refusal); this one spares the
/// writes of a request that cannot fit.
pub async fn admit(state: &AppState, user: &str, need: UsdMicros) -> Result<(), AppError> {
    let now = now_ms();
    let Some(budget) = state.store.budget_if_set(user, now).await? else {
        return Ok(());
    };
    if budget.is_unlimited() {
        return Ok(());
    }
    if soft_reached(budget.spent_today_micros, budget.soft_micros) {
        let day = day_of(now);
        let spent = budget.spent_today_micros.dollars();
        let payload = SoftThreshold {
            event: "usage.soft_threshold",
            user_id: user,
            day: &day,
            spent_micros: budget.spent_today_micros,
            soft_micros: budget.soft_micros,
            text: format!(
                "claude-pipeline: {user} has spent ${spent} today, past the soft threshold."
            ),
        };
        let key = format!("soft:{user}:{day}");
        if let Err(e) = raise(state, &key, "soft_budget", &payload).await {
            worker::console_error!("soft budget alert for {user}: {e}");
        }
    }
    check_caps(&budget, need).map_err(|r| AppError(r.into_error()))
}

/// What a job of `req` on `mode` reserves against its user's caps: its worst case at the
/// dearest model of the configured fallback chain it may move to — and, when a refusal may
/// move it to a fallback model (`fallback`, the job's own, else the operator's for its model),
/// the worst case of that second attempt besides.
pub fn worst_case(
    state: &AppState,
    req: &pipeline::anthropic::MessagesRequest,
    document_pages: Option<u32>,
    mode: pipeline::status::Mode,
    fallback: Option<&str>,
) -> UsdMicros {
    let worst = |req: &pipeline::anthropic::MessagesRequest| {
        pipeline::ops::budgets::worst_case(
            req,
            document_pages,
            mode,
            &state.config.model_chain,
            now_ms(),
        )
    };
    let first = worst(req);
    let fallback = fallback.or_else(|| state.config.refusal_fallbacks.for_model(&req.model));
    match fallback {
        Some(model) => {
            let second = pipeline::shape::conform(req.clone(), model);
            first + worst(&second)
        }
        None => first,
    }
}

/// The per-user limits on the producers (`Config::user_limits`): a request that would make
/// `adding` jobs is refused with a 429 and a `retry-after` when the user has too many waiting or
/// made too many in the last minute.
pub async fn limit(state: &AppState, user: &str, adding: u64) -> Result<(), AppError> {
    let l = state.config.user_limits;
    if l.max_queued == 0 && l.max_per_min == 0 {
        return Ok(());
    }
    let (queued, recent) = state.store.user_load(user, now_ms() - 60_000).await?;
    Ok(pipeline::ops::budgets::check_user_limits(
        &l, queued, recent, adding,
    )?)
}

/// A call abandoned at our timeout: the API finishes and bills it, and we never see what it
/// cost. Counted, with its worst case, as possible unrecorded spend (the Dashboard shows both):
/// the larger of the job's admission worst case (`reserved`) and its rate-limit reservation
/// priced at `model`.
pub async fn timed_out(
    state: &AppState,
    model: &str,
    need: &pipeline::budget::Need,
    reserved: UsdMicros,
) {
    let usage = pipeline::anthropic::Usage {
        input_tokens: need.input.min(u32::MAX as u64) as u32,
        output_tokens: need.output.min(u32::MAX as u64) as u32,
        ..Default::default()
    };
    let priced =
        pipeline::pricing::cost_micros(model, &usage, pipeline::pricing::Tier::Standard, now_ms())
            .unwrap_or_default();
    let worst = priced.max(reserved);
    let now = now_ms();
    use pipeline::ops::metrics::Unrecorded;
    let counted = async {
        state.store.count(Unrecorded::TIMED_OUT_CALLS, now).await?;
        state
            .store
            .count_by(Unrecorded::TIMED_OUT_WORST, worst.0, now)
            .await
    }
    .await;
    if let Err(e) = counted {
        worker::console_error!("a timed-out call was not counted: {e}");
    }
}

/// The 429 for a write that the database refused because it would cross a cap
/// (`store::is_budget_abort`): a concurrent request committed first.
/// The 429 of a job the database refused for one of its `tags`' daily caps: the first tag whose
/// cap `need` no longer fits under.
pub async fn tag_refused(state: &AppState, tags: &[String], need: UsdMicros) -> AppError {
    match state.store.tag_budgets(Some(tags), now_ms()).await {
        Ok(views) => {
            let tight = views
                .iter()
                .find(|v| v.left_micros.0 < need.0)
                .or(views.first());
            match tight {
                Some(v) => AppError(v.refusal(need)),
                None => AppError(pipeline::error::ApiError::new(
                    429,
                    "tag_budget_exceeded",
                    "a tag of this job has reached its daily cap",
                    Some("tags"),
                )),
            }
        }
        Err(e) => e.into(),
    }
}

pub async fn refused(state: &AppState, user: &str, need: UsdMicros) -> AppError {
    match state.store.budget(user, now_ms()).await {
        Ok(b) => AppError(explain_refusal(&b, need).into_error()),
        Err(e) => e.into(),
    }
}
