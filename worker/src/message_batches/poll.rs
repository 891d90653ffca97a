//! The batch mode's poller (run by the cron, and on demand): for every Anthropic batch that
//! still has submitted jobs, retrieve it; once ended, read its JSONL results and settle every
//! affected row in one transaction. Guarded updates make it safe to run twice or concurrently.

use pipeline::answer::{settle_answer, End};
use pipeline::anthropic::{parse_results, BatchResult};
use pipeline::batching::{
    after_missing, bill_after_cancel, line_outcome, lost_batch_job, Missing, Outcome,
};
use pipeline::dto::PollReport;
use pipeline::ops::failures::Failure;
use pipeline::pricing::Tier;
use pipeline::retry::{describe, CallOutcome};
use pipeline::status::Transition;

use crate::config::now_ms;
use crate::services::AppState;
use crate::store::lifecycle::Scope;
use crate::store::Statement;

pub async fn poll(state: &AppState) -> worker::Result<PollReport> {
    let mut report = PollReport::default();
    for batch_id in state.store.open_batches().await? {
        report.batches_checked += 1;
        let batch = match state.anthropic.retrieve_batch(&batch_id).await {
            Ok(b) => b,
            Err(CallOutcome::Http { status: 404, .. }) => {
                missing(state, &batch_id, &mut report).await?;
                continue;
            }
            Err(e) => {
                report.errors.push(format!("{batch_id}: {}", describe(&e)));
                continue;
            }
        };
        if !batch.ended() {
            continue;
        }
        let Some(url) = batch.results_url.as_deref() else {
            report
                .errors
                .push(format!("{batch_id}: ended without a results_url"));
            continue;
        };
        let jsonl = match state.anthropic.batch_results(url).await {
            Ok(t) => t,
            Err(e) => {
                report
                    .errors
                    .push(format!("{batch_id} results: {}", describe(&e)));
                continue;
            }
        };
        report.batches_ended += 1;
        settle_batch(state, &batch_id, &jsonl, &mut report).await?;
    }
    Ok(report)
}

/// A batch the API answers 404 for (`pipeline::batching::after_missing`): noted the first time,
/// waited for `BATCH_LOST_AFTER_S`, then given up — its jobs go back to the accumulation for a
/// new batch (or are dead-lettered after their last try), the ones canceled inside it stop
/// waiting for a bill that cannot be read, and the loss is counted as possible unrecorded spend.
async fn missing(state: &AppState, batch_id: &str, report: &mut PollReport) -> worker::Result<()> {
    let store = &state.store;
    let key = format!("batch_missing:{batch_id}");
    let now = now_ms();
    let first = store.last_beat(&key).await?.map(|b| b.at as i64);
    let grace_ms = state.config.batch_lost_after_s as i64 * 1000;
    match after_missing(first, now, grace_ms) {
        Missing::FirstSeen => {
            store.beat(&key, now, "404").await?;
            report.errors.push(format!(
                "{batch_id}: unknown to the API (404); its jobs are released if it stays unknown for {} s",
                state.config.batch_lost_after_s
            ));
        }
        Missing::Waiting { since_ms } => report.errors.push(format!(
            "{batch_id}: unknown to the API (404) for {} s",
            since_ms / 1000
        )),
        Missing::GiveUp => {
            let rows = store.in_batch(batch_id).await?;
            let canceled = store.awaiting_bill(batch_id).await?;
            let mut statements = Vec::with_capacity(rows.len() + canceled.len());
            let mut dead = Vec::new();
            for row in &rows {
                let outcome = lost_batch_job(batch_id, row.batch_tries.max(0) as u32);
                let done = Done { batch_id, now };
                statements.push(carry_out(state, &row.id, outcome, done, report, &mut dead)?);
            }
            for row in &canceled {
                statements.push(store.record_bill(&row.id, batch_id, None, None)?);
            }
            if !statements.is_empty() {
                store.batch(statements).await?;
            }
            use pipeline::ops::metrics::Unrecorded;
            store.count(Unrecorded::LOST_BATCHES, now).await?;
            store
                .count_by(Unrecorded::LOST_BATCH_JOBS, rows.len() as u64, now)
                .await?;
            report.batches_lost += 1;
            report.errors.push(format!(
                "{batch_id}: given up after {} s unknown to the API; {} jobs released",
                state.config.batch_lost_after_s,
                rows.len()
            ));
            for id in dead {
                crate::consumer::announce_dead_letter(state, &id).await;
            }
        }
    }
    Ok(())
}

/// Where and when a batch job's [`Outcome`] is carried out.
#[derive(Clone, Copy)]
struct Done<'a> {
    batch_id: &'a str,
    now: i64,
}

/// The statement that carries out `outcome` for the submitted job `id` of a batch, counted in
/// `report`; a dead-lettered job's id joins `dead`, to be announced once the batch is written.
fn carry_out(
    state: &AppState,
    id: &str,
    outcome: Outcome,
    Done { batch_id, now }: Done<'_>,
    report: &mut PollReport,
    dead: &mut Vec<String>,
) -> worker::Result<Statement> {
    let store = &state.store;
    let scope = Scope::InBatch(batch_id);
    Ok(match outcome {
        Outcome::Fail(reason) => {
            report.jobs_failed += 1;
            store.fail(id, &Failure::new(reason), None, now, scope)?
        }
        Outcome::Resubmit(reason) => {
            report.jobs_resubmitted += 1;
            store.resubmit(id, batch_id, &reason, now)?
        }
        Outcome::DeadLetter(reason) => {
            report.jobs_dead_lettered += 1;
            dead.push(id.to_owned());
            store.dead_letter(
                Transition::DeadLetter,
                id,
                &Failure::new(reason),
                now,
                scope,
            )?
        }
        Outcome::Canceled => {
            report.jobs_canceled += 1;
            store.cancel_in_batch(
                id,
                batch_id,
                "the batch was canceled before this request ran",
                now,
            )?
        }
    })
}

/// Settles the submitted jobs of one ended batch from its results, in one transaction.
async fn settle_batch(
    state: &AppState,
    batch_id: &str,
    jsonl: &str,
    report: &mut PollReport,
) -> worker::Result<()> {
    let store = &state.store;
    let rows = store.in_batch(batch_id).await?;
    let canceled = store.awaiting_bill(batch_id).await?;
    let now = now_ms();
    let scope = Scope::InBatch(batch_id);
    let mut statements = Vec::with_capacity(rows.len());
    let mut seen = std::collections::HashSet::new();
    let mut dead = Vec::new();
    for line in parse_results(jsonl) {
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                report.errors.push(format!("{batch_id}: {e}"));
                continue;
            }
        };
        if canceled.iter().any(|r| r.id == line.custom_id) {
            let bill = bill_after_cancel(&line.result, now);
            if bill.is_some() {
                report.canceled_billed += 1;
            }
            let (usage, cost) = (bill.map(|b| b.0), bill.and_then(|b| b.1));
            statements.push(store.record_bill(&line.custom_id, batch_id, usage.as_ref(), cost)?);
            continue;
        }
        let Some(row) = rows.iter().find(|r| r.id == line.custom_id) else {
            continue; // settled already, or not ours
        };
        seen.insert(row.id.clone());
        if let BatchResult::Succeeded { message } = &line.result {
            state.blobs.store_answer(&row.id, message).await?;
            let settled = settle_answer(row.kind, message, Tier::Batch, now);
            statements.push(store.settle(&row.id, &settled, now, scope)?);
            match settled.end {
                End::Complete { .. } => report.jobs_completed += 1,
                End::Fail(_) => report.jobs_failed += 1,
            }
            continue;
        }
        let tries = row.batch_tries.max(0) as u32;
        if let Some(outcome) = line_outcome(&line.result, tries) {
            let done = Done { batch_id, now };
            statements.push(carry_out(state, &row.id, outcome, done, report, &mut dead)?);
        }
    }
    // A canceled job without a line billed nothing: it stops waiting (for those recorded
    // above, the guard on the mark makes this a no-op).
    for row in &canceled {
        statements.push(store.record_bill(&row.id, batch_id, None, None)?);
    }
    for row in rows.iter().filter(|r| !seen.contains(&r.id)) {
        let missing = Failure::new("the job is missing from its batch's results");
        statements.push(store.fail(&row.id, &missing, None, now, scope)?);
        report.jobs_failed += 1;
    }
    if !statements.is_empty() {
        store.batch(statements).await?;
    }
    for id in dead {
        crate::consumer::announce_dead_letter(state, &id).await;
    }
    Ok(())
}
