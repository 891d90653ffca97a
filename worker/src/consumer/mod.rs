//! Queue consumers. Each message is acked or retried on its own — returning an error from
//! `queue()` would make the runtime retry the whole batch — and a bad message never fails its
//! batch. What to do with each job is `pipeline::delivery` and `pipeline::retry`; this module
//! carries it out.
//!
//! # Layout
//! - this file: which consumer a batch is for, and which new job each message runs (fair
//!   shares, `pipeline::fair`).
//! - [`deliver`]: what one delivered job becomes (`pipeline::delivery`), carried out.
//! - [`handle`]: what a job's run answers to (its queue message, or only its lane).
//! - [`sync_call`]: one synchronous call, from the budget's reservation to the settlement.
//! - [`dead_letters`]: the DLQ consumer and the dead-letter webhook.

mod dead_letters;
mod deliver;
mod handle;
mod sync_call;

use deliver::Delivered;
use handle::Handle;

use futures_util::stream::{self, StreamExt};
use pipeline::dto::QueueMessage;
use pipeline::envelope::{costs, Cost};
use pipeline::status::Kind;
use serde_json::Value;
use worker::{Message, MessageBatch, MessageExt};

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
    state.meter.delivered(messages.len() as u64);
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

/// Loads the rows and does with each what `pipeline::delivery` decides ([`deliver`]): skip
/// what must not run again, expire what is stale, call Claude for sync jobs (one call each, in
/// parallel), and add batch jobs to the accumulation (then flush if one is due).
async fn run_jobs(state: &AppState, work: Vec<(Message<Value>, String)>) {
    let ids: Vec<String> = work.iter().map(|(_, id)| id.clone()).collect();
    let (rows, pauses) = futures_util::join!(state.store.jobs(&ids), state.store.pauses());
    let pauses = pauses.unwrap_or_else(|e| {
        worker::console_error!("reading the pauses failed ({e}); running as if none");
        Vec::new()
    });
    let rows = match rows {
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
            deliver::orphan(state, msg, &id).await;
            continue;
        };
        match deliver::deliver(state, msg, row, &pauses).await {
            Delivered::Call(msg, row) => calls.push((msg, *row)),
            Delivered::Accumulated => batch_mode = true,
            Delivered::Done => {}
        }
    }
    call_all(state, calls).await;
    if batch_mode {
        let mut share = state.meter.share(costs::CALLER_RESERVE);
        crate::message_batches::flush::flush_due(state, false, &mut share).await;
    }
}

/// Makes the sync calls that fit the invocation, PDFs one at a time (a PDF call holds the
/// document several times over — bytes, base64, the request — so one at a time keeps a batch of
/// 20 MB files inside the isolate's memory), the others by fair shares, in parallel.
async fn call_all(state: &AppState, calls: Vec<(Message<Value>, JobRow)>) {
    let calls = calls_that_fit(state, calls).await;
    let (pdfs, others): (Vec<(Message<Value>, JobRow)>, Vec<_>) =
        calls.into_iter().partition(|(_, r)| r.kind == Kind::Pdf);
    let others = fair_shares(state, others).await;
    let small = stream::iter(others).for_each_concurrent(SYNC_CONCURRENCY, |(msg, row)| {
        sync_call::run(state, msg, row)
    });
    let large = stream::iter(pdfs).for_each_concurrent(1, |(msg, row)| {
        sync_call::run(state, Handle::Message(msg), row)
    });
    futures_util::future::join(small, large).await;
}

/// The sync calls this invocation's subrequests and D1 queries can carry
/// (`pipeline::envelope::calls_that_fit`); the others go back to their lane, no retry spent,
/// for a later invocation.
async fn calls_that_fit(
    state: &AppState,
    calls: Vec<(Message<Value>, JobRow)>,
) -> Vec<(Message<Value>, JobRow)> {
    let room = state.meter.share(costs::CALLER_RESERVE).left();
    let each: Vec<Cost> = calls
        .iter()
        .map(|(_, row)| call_cost(row, state.config.files_api))
        .collect();
    let runs = pipeline::envelope::calls_that_fit(room, &each);
    let mut now = Vec::with_capacity(calls.len());
    for ((msg, row), run) in calls.into_iter().zip(runs) {
        if run {
            now.push((msg, row));
        } else {
            worker::console_log!(
                "job {}: past this invocation's share of subrequests; delivered again",
                row.id
            );
            Handle::Message(msg)
                .deliver_again(state, row.lane, &row.id)
                .await;
        }
    }
    now
}

/// What one sync call asks of the platform at most (`pipeline::envelope::costs`).
fn call_cost(row: &JobRow, files_api: bool) -> Cost {
    let pdf = match row.kind {
        Kind::Pdf => costs::sync_pdf(files_api, row.file_id.is_some()),
        _ => Cost::default(),
    };
    costs::SYNC_CALL + pdf
}

/// The lane's fair-shares plan for the `delivered` new jobs, with the rows of the jobs it takes
/// in their place.
async fn fair_plan(
    state: &AppState,
    lane: pipeline::status::Lane,
    delivered: &[String],
) -> worker::Result<(pipeline::fair::Plan, Vec<JobRow>)> {
    let candidates = state.store.fair_candidates(lane, now_ms()).await?;
    let users: Vec<String> = candidates.iter().map(|c| c.user_id.clone()).collect();
    let usage = state.budget.usage(&users).await?;
    let plan = pipeline::fair::plan(delivered, &candidates, &usage);
    let taken: Vec<String> = plan.swaps.iter().map(|(_, o)| o.clone()).collect();
    let rows = if taken.is_empty() {
        Vec::new()
    } else {
        state.store.jobs(&taken).await?
    };
    Ok((plan, rows))
}

/// Fair shares of the lane: the new jobs among `calls` (never attempted) give their messages to
/// the jobs `pipeline::fair::plan` picks — each user's oldest new job, the users served least
/// over the last minute first — and go back to their lane themselves. Retries keep their own
/// message. When the store or the budget does not answer, every message runs its own job.
async fn fair_shares(
    state: &AppState,
    calls: Vec<(Message<Value>, JobRow)>,
) -> Vec<(Handle, JobRow)> {
    let (fresh, retries): (Vec<_>, Vec<_>) = calls.into_iter().partition(|(_, r)| r.attempts == 0);
    let mut out: Vec<(Handle, JobRow)> = retries
        .into_iter()
        .map(|(m, r)| (Handle::Message(m), r))
        .collect();
    let Some(lane) = fresh.first().map(|(_, r)| r.lane) else {
        return out;
    };
    let delivered: Vec<String> = fresh.iter().map(|(_, r)| r.id.to_string()).collect();
    let plan = fair_plan(state, lane, &delivered).await;
    let (plan, rows) = match plan {
        Ok(p) => p,
        Err(e) => {
            worker::console_error!("fair shares: no plan ({e}); each message runs its own job");
            out.extend(fresh.into_iter().map(|(m, r)| (Handle::Message(m), r)));
            return out;
        }
    };
    for (msg, row) in fresh {
        let swap = plan.swaps.iter().find(|(d, _)| row.id == *d);
        let other = swap.and_then(|(_, o)| rows.iter().find(|r| r.id == *o));
        match other {
            // The delivered job goes back to its lane (at once: it is only waiting its turn);
            // if that send fails, its message runs it after all.
            Some(other) => match state.lanes.send_after(row.lane, &row.id, Some(0)).await {
                Ok(()) => {
                    msg.ack();
                    let handle = Handle::Swapped {
                        lane: other.lane,
                        id: other.id.to_string(),
                    };
                    out.push((handle, other.clone()));
                }
                Err(e) => {
                    worker::console_error!("fair shares: {} not re-sent ({e})", row.id);
                    out.push((Handle::Message(msg), row));
                }
            },
            None => out.push((Handle::Message(msg), row)),
        }
    }
    out
}
