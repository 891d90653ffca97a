//! The scheduled handler. It runs every minute in production (and is triggered by the dev tooling
//! and the tests locally): flush due bulk accumulations and poll open batches, resolve flushes
//! of unknown outcome, rescue deadline jobs whose batch runs late (`crate::routing`), reconcile
//! stuck rows, write the metrics row (with the heartbeat) and
//! raise the DLQ alert, and apply retention (a bounded slice). An idle run is two D1 round
//! trips — one batch of every read and first write, one transaction of the rest — and one call
//! to the budget object beside the first.

use worker::ScheduledEvent;

use pipeline::envelope::costs;
use pipeline::status::Lane;

use crate::config::now_ms;
use crate::message_batches::{flush, poll};
use crate::services::AppState;
use crate::store::batch_results::open_batches_of;
use crate::store::flushes::{waiting_of, Stranded};
use crate::store::group;
use crate::store::jobs::reconciled;
use crate::store::ops::CronReads;
use crate::store::pauses::Held;
use crate::store::Statement;
use pipeline::pause::Pause;
use worker::D1Result;

pub async fn run(event: &ScheduledEvent, state: Result<AppState, String>) {
    let state = match state {
        Ok(s) => s,
        Err(e) => {
            worker::console_error!("cron: configuration error: {e}");
            return;
        }
    };
    let detail = format!("cron {}", event.cron());
    let started = now_ms();
    if let Err(e) = minute(&state, &detail).await {
        worker::console_error!("cron: {e}");
    }
    if state.config.d1_stats {
        // Local stacks only (the clock stands still inside a deployed invocation).
        worker::console_log!("cron timing: {} ms", now_ms() - started);
    }
}

/// One run. Everything it reads, and its first writes, go to D1 in one round trip (with the
/// budget object's state beside it): the waiting count, the open batches and the stranded
/// flushes, the metrics row's figures and the DLQ alert's state, the reconciler's expiry and
/// take-back, retention's walk and small deletes. Then, side by side (their round trips to D1,
/// R2, the queues and the API overlap): the flush (then, if it created a batch, a poll of every
/// open batch; else of those read), the recovery of flushes of unknown outcome, the
/// re-enqueues, and retention's deletes when any is due; then one transaction for the metrics
/// row, the heartbeats and the reports. None of these touches what another decides on: the
/// flush takes accumulated jobs, the recovery only flushes stranded for longer than a call can
/// last, the reconciler only jobs not accumulated, retention only finished ones.
async fn minute(state: &AppState, beat: &str) -> worker::Result<()> {
    let now = now_ms();
    let (found, budget) = futures_util::join!(read(state, now), state.budget.state());
    let found = found?;
    let (writes, alert) =
        crate::ops::metrics_row(state, now, &found.reads, budget, ("cron", beat))?;
    let (expired, stuck) = (found.expired, &found.stuck);
    let ((), (), (), (), (), (), (), unsent, removed) = futures_util::join!(
        flush_then_poll(state, found.waiting, found.open),
        recover(state, found.stranded),
        release(state, &found.pauses, &found.held, now),
        deliver_webhooks(state),
        crate::routing::rescue(state, found.due, now),
        crate::reconcile::daily(state, now),
        crate::models_watch::daily(state, now),
        resend(state, stuck),
        crate::retention::settle(state, now, &found.retention)
    );
    let writes = record(state, now, writes, (expired, stuck.len(), unsent), removed)?;
    state.store.batch(writes).await?;
    if let Some(dead_now) = alert {
        crate::alerts::dlq_alert(state, now, dead_now).await?;
    }
    Ok(())
}

/// What a run reads (and first writes) in its one round trip to D1.
struct Found {
    /// Jobs waiting for a flush, and the oldest's accumulation time.
    waiting: (u32, Option<i64>),
    open: Vec<String>,
    stranded: Vec<Stranded>,
    /// Batches whose deadline jobs are due a rescue (`crate::routing`).
    due: Vec<String>,
    reads: CronReads,
    /// The reconciler's expired count and the stuck rows it took back.
    expired: usize,
    stuck: Vec<(String, Lane)>,
    pauses: Vec<Pause>,
    held: Vec<Held>,
    /// Retention's walk and small deletes (`crate::retention::settle`).
    retention: Vec<Vec<D1Result>>,
}

/// The run's one round trip: every read and first write, grouped (`Store::rounds`).
async fn read(state: &AppState, now: i64) -> worker::Result<Found> {
    let before = now - state.config.timing.reconcile_after_s as i64 * 1000;
    let store = &state.store;
    let mut groups = vec![
        vec![
            store.waiting_statement()?,
            store.open_batches_statement()?,
            store.stranded_statement(flush::stranded_before(state, now))?,
            store.due_batches_statement(now)?,
        ],
        crate::ops::cron_reads(state, now)?,
        store.reconcile(before, now, STUCK_PER_RUN)?,
        vec![store.pauses_statement()?, store.held_statement()?],
    ];
    groups.extend(crate::retention::statements(state, now)?);
    let mut found = store.rounds(groups).await?;
    let part = |i: usize| group(&found, i, "cron");
    let batches = part(0)?;
    let (expired, stuck) = reconciled(part(2)?)?;
    let paused = part(3)?;
    let read = Found {
        waiting: waiting_of(&batches[..1])?,
        open: open_batches_of(&batches[1..2])?,
        stranded: match batches.get(2) {
            Some(r) => r.results()?,
            None => Vec::new(),
        },
        due: match batches.get(3) {
            Some(r) => crate::store::routing::due_batches_of(r)?,
            None => Vec::new(),
        },
        reads: CronReads::of(part(1)?)?,
        expired,
        stuck,
        pauses: crate::store::pauses::pauses_of(&paused[..1])?,
        held: crate::store::pauses::held_of(&paused[1])?,
        retention: Vec::new(),
    };
    Ok(Found {
        retention: found.split_off(4.min(found.len())),
        ..read
    })
}

/// The flush, then the poll: the flush may take half of what the run's bookkeeping leaves when
/// batches are open too; the poll then has what the flush left (`pipeline::envelope`). A batch
/// created just now is polled in this run too.
async fn flush_then_poll(state: &AppState, waiting: (u32, Option<i64>), open: Vec<String>) {
    let weights = [u64::from(waiting.0 > 0), u64::from(!open.is_empty())];
    let mut for_flush = state.meter.shares(costs::CRON_RESERVE, &weights)[0];
    let flushed = flush::flush_due_from(state, false, Some(waiting), &mut for_flush).await;
    let mut for_poll = state.meter.share(costs::CRON_RESERVE);
    let polled = if flushed.batches_created > 0 {
        poll::poll(state, &mut for_poll).await
    } else {
        poll::poll_these(state, open, &mut for_poll).await
    };
    match polled {
        Ok(report) if !report.errors.is_empty() => {
            worker::console_error!("batch poll: {:?}", report.errors)
        }
        Ok(_) => {}
        Err(e) => worker::console_error!("batch poll failed: {e}"),
    }
}

/// The recovery of flushes of unknown outcome (`crate::message_batches::flush::recover`).
async fn recover(state: &AppState, stranded: Vec<Stranded>) {
    if let Err(e) = flush::recover_these(state, stranded).await {
        worker::console_error!("flush recovery failed: {e}");
    }
}

/// The webhook deliveries that are due.
async fn deliver_webhooks(state: &AppState) {
    match crate::webhooks::deliver_due(state).await {
        Ok(0) => {}
        Ok(n) => worker::console_log!("webhooks: {n} delivered"),
        Err(e) => worker::console_error!("webhook deliveries failed: {e}"),
    }
}

/// The held jobs whose pause has lifted go back to their lane.
async fn release(state: &AppState, pauses: &[Pause], held: &[Held], now: i64) {
    match crate::pauses::release_these(state, pauses, held, now).await {
        Ok(0) => {}
        Ok(n) => worker::console_log!("pauses: {n} held jobs released"),
        Err(e) => worker::console_error!("releasing held jobs failed: {e}"),
    }
}

/// The run's last writes, beside the metrics row's: the reconciler's heartbeat (`reconciled`:
/// expired, taken back, not sent) and retention's report.
fn record(
    state: &AppState,
    now: i64,
    mut writes: Vec<Statement>,
    (expired, stuck, unsent): (usize, usize, usize),
    removed: worker::Result<pipeline::retention::Removed>,
) -> worker::Result<Vec<Statement>> {
    if expired > 0 || stuck > 0 {
        worker::console_log!(
            "reconcile: {expired} expired, {} re-enqueued, {unsent} not sent",
            stuck - unsent
        );
        let detail = (stuck - unsent).to_string();
        writes.push(state.store.beat_statement("reconciled", now, &detail)?);
    }
    match removed {
        Ok(removed) => writes.push(crate::retention::report(state, now, &removed)?),
        Err(e) => worker::console_error!("retention failed: {e}"),
    }
    Ok(writes)
}

/// The most stuck rows one run takes back (one `sendBatch` per lane).
const STUCK_PER_RUN: u32 = 100;

/// Re-enqueues rows the reconciler took back (their message was lost to a restart, or the
/// Worker died mid-call; the guarded writes make a second delivery harmless): one `sendBatch`
/// per lane. Answers how many could not be sent (they stay `queued` and are taken again after
/// the window).
async fn resend(state: &AppState, stuck: &[(String, Lane)]) -> usize {
    let ids = |lane: Lane| -> Vec<String> {
        stuck
            .iter()
            .filter(|(_, l)| *l == lane)
            .map(|(id, _)| id.clone())
            .collect()
    };
    let (high, bulk) = (ids(Lane::High), ids(Lane::Bulk));
    let (unsent_high, unsent_bulk) = futures_util::join!(
        state.lanes.send_many(Lane::High, &high),
        state.lanes.send_many(Lane::Bulk, &bulk)
    );
    unsent_high.len() + unsent_bulk.len()
}
