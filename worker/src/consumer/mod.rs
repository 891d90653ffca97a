//! Queue consumers. Each message is acked or retried on its own — returning an error from
//! `queue()` would make the runtime retry the whole batch — and a bad message never fails its
//! batch. What to do with each job is `pipeline::delivery` and `pipeline::retry`; this module
//! carries it out.
//!
//! # Layout
//! - this file: which consumer a batch is for, and what each delivered job becomes.
//! - [`sync_call`]: one synchronous call, from the budget's reservation to the settlement.
//! - [`dead_letters`]: the DLQ consumer and the dead-letter webhook.

mod dead_letters;
mod sync_call;

use futures_util::stream::{self, StreamExt};
use pipeline::delivery::{on_delivery, Delivery};
use pipeline::dto::QueueMessage;
use pipeline::status::Kind;
use serde_json::Value;
use worker::{Message, MessageBatch, MessageExt, QueueRetryOptionsBuilder};

pub use dead_letters::announce_dead_letter;

use crate::config::now_ms;
use crate::services::AppState;
use crate::store::JobRow;

/// Synchronous calls in flight at once within one queue batch.
const SYNC_CONCURRENCY: usize = 5;

/// Which consumer a batch belongs to, from its queue name (`…-high`, `…-bulk`, `…-dlq`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    High,
    Bulk,
    DeadLetters,
}

impl Role {
    fn of(queue: &str) -> Role {
        if queue.ends_with("-dlq") {
            Role::DeadLetters
        } else if queue.ends_with("-bulk") {
            Role::Bulk
        } else {
            Role::High
        }
    }

    fn heartbeat(self) -> &'static str {
        match self {
            Role::High => "queue_high",
            Role::Bulk => "queue_bulk",
            Role::DeadLetters => "queue_dlq",
        }
    }
}

pub async fn handle_batch(batch: MessageBatch<Value>, state: Result<AppState, String>) {
    let queue = batch.queue();
    let role = Role::of(&queue);
    let state = match state {
        Ok(s) => s,
        Err(e) => {
            worker::console_error!("queue {queue}: configuration error, retrying the batch: {e}");
            batch.retry_all();
            return;
        }
    };
    let messages = match batch.messages() {
        Ok(m) => m,
        Err(e) => {
            worker::console_error!("queue {queue}: cannot read the batch: {e}");
            batch.retry_all();
            return;
        }
    };
    let mut work = Vec::new();
    for msg in messages {
        match serde_json::from_value::<QueueMessage>(msg.body().clone()) {
            Ok(QueueMessage::Ping { sent_at }) => {
                // The detail is the ping's send time: health reports it, so a caller can tell
                // that *its* ping went through the queue, not an earlier one.
                let beat = state
                    .store
                    .beat(role.heartbeat(), now_ms(), &sent_at.to_string())
                    .await;
                match beat {
                    Ok(()) => msg.ack(),
                    Err(e) => {
                        worker::console_error!("queue heartbeat failed: {e}");
                        msg.retry();
                    }
                }
            }
            Ok(QueueMessage::Job { id }) => work.push((msg, id)),
            Err(e) => {
                // A message we cannot read will never become readable: ack it and say so.
                worker::console_error!("queue {queue}: unreadable message acked: {e}");
                msg.ack();
            }
        }
    }
    if work.is_empty() {
        return;
    }
    if role == Role::DeadLetters {
        for (msg, id) in work {
            dead_letters::dead_letter(&state, &id).await;
            // Always acked: a dead letter that throws would only loop.
            msg.ack();
        }
        return;
    }
    run_jobs(&state, work).await;
}

/// Loads the rows and does with each what `pipeline::delivery` decides: skip what must not run
/// again, expire what is stale, call Claude for sync jobs (one call each, in parallel), and add
/// batch jobs to the accumulation (then flush if one is due).
async fn run_jobs(state: &AppState, work: Vec<(Message<Value>, String)>) {
    let ids: Vec<String> = work.iter().map(|(_, id)| id.clone()).collect();
    let rows = match state.store.jobs(&ids).await {
        Ok(r) => r,
        Err(e) => {
            worker::console_error!("loading {} jobs failed, retrying them: {e}", ids.len());
            for (msg, _) in work {
                msg.retry();
            }
            return;
        }
    };
    let mut calls = Vec::new();
    let mut batch_mode = false;
    for (msg, id) in work {
        let Some(row) = rows.iter().find(|r| r.id == id).cloned() else {
            // The row is written before the send, so this is an orphan: count it, drop it.
            worker::console_error!("orphan queue message for job {id}: no row; acked");
            let _ = state.store.count("orphan_messages", now_ms()).await;
            msg.ack();
            continue;
        };
        match on_delivery(row.status, row.expires_at, row.mode, now_ms()) {
            Delivery::Skip => msg.ack(),
            Delivery::Expire => match state.store.expire(&id, now_ms()).await {
                Ok(()) => msg.ack(),
                Err(e) => {
                    worker::console_error!("expiring {id} failed: {e}");
                    msg.retry();
                }
            },
            Delivery::Call => calls.push((msg, row)),
            Delivery::Accumulate => {
                // Batch-mode jobs wait in D1 for a flush (by size here, by age in the cron too).
                batch_mode = true;
                match state.store.accumulate(&row.id, now_ms()).await {
                    Ok(()) => msg.ack(),
                    Err(e) => {
                        worker::console_error!("job {}: cannot join the accumulation: {e}", row.id);
                        retry_after(&msg, state.config.timing.backoff_s(1, None));
                    }
                }
            }
        }
    }
    // A PDF call holds the document several times over (bytes, base64, the request): one at a
    // time per invocation keeps a batch of 20 MB files inside the isolate's memory.
    let (pdfs, others): (Vec<(Message<Value>, JobRow)>, Vec<_>) =
        calls.into_iter().partition(|(_, r)| r.kind == Kind::Pdf);
    let small = stream::iter(others).for_each_concurrent(SYNC_CONCURRENCY, |(msg, row)| {
        sync_call::run(state, msg, row)
    });
    let large =
        stream::iter(pdfs).for_each_concurrent(1, |(msg, row)| sync_call::run(state, msg, row));
    futures_util::future::join(small, large).await;
    if batch_mode {
        crate::message_batches::flush::flush_due(state, false).await;
    }
}

/// Retries the message after `delay_s` (counting a retry).
fn retry_after(msg: &Message<Value>, delay_s: u32) {
    msg.retry_with_options(
        &QueueRetryOptionsBuilder::new()
            .with_delay_seconds(delay_s)
            .build(),
    );
}
