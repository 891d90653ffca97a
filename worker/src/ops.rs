//! The operator's figures: the cron's metrics row and the count of spend a timed-out call may
//! have left unrecorded. The decisions are `pipeline::ops`; the queries are the store's; the
//! alerts are `crate::alerts`, the producers' caps `crate::routes::admission`.

use pipeline::budget::BudgetView;
use pipeline::money::UsdMicros;
use pipeline::ops::metrics::{dlq_crossing, window_ms, BudgetCharge, Metrics, MetricsInput};

use crate::config::now_ms;
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
            .count_by(Unrecorded::TIMED_OUT_WORST, worst.micros(), now)
            .await
    }
    .await;
    if let Err(e) = counted {
        worker::console_error!("a timed-out call was not counted: {e}");
    }
}
