//! What one delivered job becomes, as `pipeline::delivery` decides: held while a pause holds
//! it, acked when it must not run again, sent back to its lane until its time, expired when
//! stale, added to the accumulation in batch mode — or handed back to be called.

use pipeline::delivery::{defer_delay_s, on_delivery, Delivery};
use pipeline::ops::joblog::JobLog;
use pipeline::pause::{holding, Pause};
use serde_json::Value;
use worker::{Message, MessageExt};

use super::handle::retry_after;
use crate::config::now_ms;
use crate::services::AppState;
use crate::store::JobRow;

/// What became of a delivered job.
pub enum Delivered {
    /// A sync job to call, with its message.
    Call(Message<Value>, Box<JobRow>),
    /// A batch-mode job that joined the accumulation (a flush may be due).
    Accumulated,
    /// Its message was acked or retried; nothing more to do.
    Done,
}

/// Carries out what `pipeline::delivery` decides for `row`. A paused lane, model or user keeps
/// the job queued, held, without a retry spent.
pub async fn deliver(
    state: &AppState,
    msg: Message<Value>,
    row: JobRow,
    pauses: &[Pause],
) -> Delivered {
    let delivery = on_delivery(
        row.status,
        row.expires_at,
        row.run_after,
        row.mode,
        now_ms(),
    );
    let runs = matches!(
        delivery,
        Delivery::Call | Delivery::Accumulate | Delivery::NotYet { .. }
    );
    let lane = row.lane.as_str();
    if let Some(p) = runs
        .then(|| holding(pauses, lane, row.model.as_deref(), &row.user_id))
        .flatten()
    {
        hold(state, msg, &row, p).await;
        return Delivered::Done;
    }
    match delivery {
        Delivery::Skip => msg.ack(),
        Delivery::NotYet { ms } => not_yet(state, msg, &row, ms).await,
        Delivery::Expire => expire(state, msg, &row).await,
        Delivery::Call => return Delivered::Call(msg, Box::new(row)),
        Delivery::Accumulate => {
            accumulate(state, msg, &row).await;
            return Delivered::Accumulated;
        }
    }
    Delivered::Done
}

/// A message whose job has no row: the row is written before the send, so this is an orphan —
/// counted and dropped.
pub async fn orphan(state: &AppState, msg: Message<Value>, id: &str) {
    worker::console_error!("orphan queue message for job {id}: no row; acked");
    let _ = state.store.count("orphan_messages", now_ms()).await;
    msg.ack();
}

/// Holds a paused job: it waits in D1 for its pause to lift.
async fn hold(state: &AppState, msg: Message<Value>, row: &JobRow, p: &Pause) {
    match state.store.hold(&row.id, now_ms()).await {
        Ok(_) => {
            let why = format!("{} {} is paused", p.scope.as_str(), p.value);
            let log = JobLog {
                error: Some(&why),
                ..row.log("job.held", "held")
            };
            worker::console_log!("{}", log.line());
            msg.ack()
        }
        Err(e) => {
            worker::console_error!("holding {} failed: {e}", row.id);
            retry_after(&msg, state.config.timing.backoff_s(1, None));
        }
    }
}

/// A job not due yet goes back to its lane with a delay.
async fn not_yet(state: &AppState, msg: Message<Value>, row: &JobRow, ms: u64) {
    let delay = defer_delay_s(ms);
    match state.lanes.send_after(row.lane, &row.id, Some(delay)).await {
        Ok(()) => msg.ack(),
        Err(_) => retry_after(&msg, delay),
    }
}

/// A stale job expires.
async fn expire(state: &AppState, msg: Message<Value>, row: &JobRow) {
    match state.store.expire(&row.id, now_ms()).await {
        Ok(()) => {
            let log = JobLog {
                ms: now_ms() - row.created_at,
                ..row.log("job.expired", "expired")
            };
            worker::console_log!("{}", log.line());
            msg.ack()
        }
        Err(e) => {
            worker::console_error!("expiring {} failed: {e}", row.id);
            msg.retry();
        }
    }
}

/// A batch-mode job waits in D1 for a flush (by size at the end of this batch, by age in the
/// cron too).
async fn accumulate(state: &AppState, msg: Message<Value>, row: &JobRow) {
    match state.store.accumulate(&row.id, now_ms()).await {
        Ok(()) => msg.ack(),
        Err(e) => {
            worker::console_error!("job {}: cannot join the accumulation: {e}", row.id);
            retry_after(&msg, state.config.timing.backoff_s(1, None));
        }
    }
}
