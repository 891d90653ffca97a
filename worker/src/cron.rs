//! The scheduled handler. It runs every minute in production (and is triggered by the dev tooling
//! and the tests locally): heartbeat, flush due bulk accumulations, resolve flushes of unknown
//! outcome, poll open batches, reconcile stuck rows, write the metrics row and raise the DLQ alert,
//! then apply retention (a bounded slice).

use worker::ScheduledEvent;

use crate::config::now_ms;
use crate::message_batches::{flush, poll};
use crate::services::AppState;

pub async fn run(event: &ScheduledEvent, state: Result<AppState, String>) {
    let state = match state {
        Ok(s) => s,
        Err(e) => {
            worker::console_error!("cron: configuration error: {e}");
            return;
        }
    };
    let detail = format!("cron {}", event.cron());
    if let Err(e) = state.store.beat("cron", now_ms(), &detail).await {
        worker::console_error!("cron heartbeat failed: {e}");
    }
    // Three independent chains, side by side (their round trips to D1, R2 and the API
    // overlap): the Message Batches (flush, recovery, poll), the reconciler, and the operator's
    // side (metrics row and DLQ alert, then retention). None touches what another decides on:
    // the flush takes accumulated jobs, the reconciler only jobs not accumulated, retention only
    // finished ones.
    let batches = async {
        flush::flush_due(&state, false).await;
        if let Err(e) = flush::recover(&state).await {
            worker::console_error!("flush recovery failed: {e}");
        }
        match poll::poll(&state).await {
            Ok(report) if !report.errors.is_empty() => {
                worker::console_error!("batch poll: {:?}", report.errors)
            }
            Ok(_) => {}
            Err(e) => worker::console_error!("batch poll failed: {e}"),
        }
    };
    let reconciler = async {
        if let Err(e) = reconcile(&state).await {
            worker::console_error!("reconcile failed: {e}");
        }
    };
    let operator = async {
        if let Err(e) = crate::ops::cron(&state).await {
            worker::console_error!("metrics failed: {e}");
        }
        if let Err(e) = crate::retention::run(&state).await {
            worker::console_error!("retention failed: {e}");
        }
    };
    futures_util::join!(batches, reconciler, operator);
}

/// Expires stale queued jobs, and re-enqueues rows stuck in `queued` or `running` past
/// `RECONCILE_AFTER_S` (their message was lost to a restart, or the Worker died mid-call): the
/// guarded writes make a second delivery harmless.
async fn reconcile(state: &AppState) -> worker::Result<()> {
    let now = now_ms();
    let expired = state.store.expire_stale(now).await?;
    let before = now - state.config.timing.reconcile_after_s as i64 * 1000;
    let stuck = state.store.take_stuck(before, now, 100).await?;
    for (id, lane) in &stuck {
        if let Err(e) = state.lanes.send(*lane, id).await {
            worker::console_error!("reconcile: re-enqueue of {id} failed: {e}");
        }
    }
    if expired > 0 || !stuck.is_empty() {
        worker::console_log!(
            "reconcile: {} expired, {} re-enqueued",
            expired,
            stuck.len()
        );
        state
            .store
            .beat("reconciled", now, &stuck.len().to_string())
            .await?;
    }
    Ok(())
}
