//! Queue consumers. Each message is acked or retried on its own — returning an error from
//! `queue()` would make the runtime retry the whole batch — and a bad message never fails its
//! batch. The decisions come from `pipeline::retry`; this module carries them out.

use futures_util::stream::{self, StreamExt};
use pipeline::anthropic::Usage;
use pipeline::budget::{Need, Reserve, Settle};
use pipeline::dto::QueueMessage;
use pipeline::pricing::{cost_micros, Tier};
use pipeline::retry::{
    decide, describe, is_overload, model_for, retries_exhausted, CallOutcome, Decision,
};
use pipeline::status::{Kind, Lane, Mode, Status};
use serde_json::Value;
use worker::{D1Database, Delay, Env, Message, MessageBatch, MessageExt, QueueRetryOptionsBuilder};

use crate::anthropic::Anthropic;
use crate::config::{now_ms, Config, DB};
use crate::jobs::{
    self, claim_running, fail_stmt, load_many, record_attempt, requeue, Attempt, JobRow,
};
use crate::results::{request_of, settle, store_raw, store_undecodable, stored_answer};
use crate::{db, flush, lanes, queues};

/// Synchronous calls in flight at once within one queue batch.
const SYNC_CONCURRENCY: usize = 5;
/// A reservation that fits within this long is waited for in place (cheaper and closer to the
/// limit than a re-sent message, whose delay has whole-second granularity)…
const SHORT_WAIT_MS: u64 = 5_000;
/// …up to this much waiting per job in one delivery; beyond, the job is deferred.
const MAX_INLINE_WAIT_MS: u64 = 30_000;

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

pub async fn handle_batch(batch: MessageBatch<Value>, env: &Env) {
    let queue = batch.queue();
    let role = Role::of(&queue);
    let config = match Config::from_env(env) {
        Ok(c) => c,
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
    let db = match env.d1(DB) {
        Ok(db) => db,
        Err(e) => {
            worker::console_error!("queue {queue}: no D1 binding: {e}");
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
                match db::beat(&db, role.heartbeat(), now_ms(), &sent_at.to_string()).await {
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
            dead_letter(&db, &config, &id).await;
            // Always acked: a dead letter that throws would only loop.
            msg.ack();
        }
        return;
    }
    run_jobs(env, &config, &db, work).await;
}

/// Loads the rows, skips what must not run again, then calls Claude: sync jobs one call each in
/// parallel, batch jobs one Message Batch for the whole group.
async fn run_jobs(
    env: &Env,
    config: &Config,
    db: &D1Database,
    work: Vec<(Message<Value>, String)>,
) {
    let ids: Vec<String> = work.iter().map(|(_, id)| id.clone()).collect();
    let rows = match load_many(db, &ids).await {
        Ok(r) => r,
        Err(e) => {
            worker::console_error!("loading {} jobs failed, retrying them: {e}", ids.len());
            for (msg, _) in work {
                msg.retry();
            }
            return;
        }
    };
    let mut sync = Vec::new();
    let mut batch = Vec::new();
    for (msg, id) in work {
        let Some(row) = rows.iter().find(|r| r.id == id).cloned() else {
            // The row is written before the send, so this is an orphan: count it, drop it.
            worker::console_error!("orphan queue message for job {id}: no row; acked");
            let _ = db::count(db, "orphan_messages", now_ms()).await;
            msg.ack();
            continue;
        };
        let status = row.status();
        if status.is_terminal() || status == Status::Submitted {
            // Already done, canceled, or inside a Message Batch: never pay twice.
            msg.ack();
            continue;
        }
        if row.expires_at.is_some_and(|at| at < now_ms()) {
            match jobs::expire(db, &id, now_ms()).await {
                Ok(()) => msg.ack(),
                Err(e) => {
                    worker::console_error!("expiring {id} failed: {e}");
                    msg.retry();
                }
            }
            continue;
        }
        match row.mode() {
            Mode::Sync => sync.push((msg, row)),
            Mode::Batch => batch.push((msg, row)),
        }
    }
    let api = Anthropic::new(config);
    // A PDF call holds the document several times over (bytes, base64, the request): one at a
    // time per invocation keeps a batch of 20 MB files inside the isolate's memory.
    let (pdfs, others): (Vec<_>, Vec<_>) =
        sync.into_iter().partition(|(_, r)| r.kind() == Kind::Pdf);
    let small = stream::iter(others).for_each_concurrent(SYNC_CONCURRENCY, |(msg, row)| {
        run_sync(env, config, db, &api, msg, row)
    });
    let large = stream::iter(pdfs)
        .for_each_concurrent(1, |(msg, row)| run_sync(env, config, db, &api, msg, row));
    futures_util::future::join(small, large).await;
    if !batch.is_empty() {
        // Batch-mode jobs wait in D1 for a flush (by size here, by age in the cron as well).
        for (msg, row) in batch {
            match flush::accumulate(db, &row.id, now_ms()).await {
                Ok(()) => msg.ack(),
                Err(e) => {
                    worker::console_error!("job {}: cannot join the accumulation: {e}", row.id);
                    retry_after(&msg, config.timing.backoff_s(1, None));
                }
            }
        }
        flush::flush_due(env, config, db, false).await;
    }
}

fn retry_after(msg: &Message<Value>, delay_s: u32) {
    msg.retry_with_options(
        &QueueRetryOptionsBuilder::new()
            .with_delay_seconds(delay_s)
            .build(),
    );
}

/// One synchronous call, and what follows from it.
async fn run_sync(
    env: &Env,
    config: &Config,
    db: &D1Database,
    api: &Anthropic,
    msg: Message<Value>,
    row: JobRow,
) {
    let id = row.id.clone();
    let lane = row.lane();
    let mut request = match request_of(env, &row).await {
        Ok(r) => r,
        Err(e) => {
            worker::console_error!("job {id}: cannot build its request ({e}); retrying");
            retry_after(&msg, config.timing.backoff_s(1, None));
            return;
        }
    };
    // Two overload answers in a row move the job down the fallback chain.
    let model = model_for(
        &request.model,
        row.overloads.max(0) as u32,
        &config.model_chain,
    )
    .to_owned();
    // Shaped for the model it goes to (a fallback may refuse what the first model took).
    request = pipeline::shape::conform(request, &model);
    // A reservation first: tokens per minute and a slot of the lane. No room → wait a little
    // in place, or defer without spending a retry.
    let input = match pipeline::tokens::estimate_request(&request) {
        Some(n) => n,
        None => match api
            .count_tokens(&pipeline::anthropic::CountTokensRequest::from(&request))
            .await
        {
            Ok(n) => n,
            Err(e) => {
                if let Decision::Fail { reason } = decide(&e, 1, &config.timing) {
                    // The API refuses this request for good (an unreadable or encrypted PDF):
                    // the call would be refused the same way.
                    let failed = async {
                        fail_stmt(db, &id, &reason, None, None, now_ms(), None)?
                            .run()
                            .await
                    }
                    .await;
                    match failed {
                        Ok(_) => msg.ack(),
                        Err(err) => {
                            worker::console_error!("job {id}: {err}; retrying");
                            retry_after(&msg, config.timing.backoff_s(1, None));
                        }
                    }
                    return;
                }
                worker::console_error!(
                    "job {id}: count_tokens failed ({}); deferring",
                    describe(&e)
                );
                defer(env, config, &msg, lane, &id, 5_000).await;
                return;
            }
        },
    };
    let reservation = Reserve {
        job_id: id.clone(),
        lane,
        model: model.clone(),
        need: Need {
            input,
            output: request.max_tokens as u64,
        },
        ttl_ms: config.timing.call_timeout_ms as i64 + 30_000,
    };
    let mut waited = 0;
    loop {
        match lanes::reserve(env, &reservation).await {
            Ok(grant) if grant.granted => break,
            Ok(grant)
                if grant.retry_after_ms <= SHORT_WAIT_MS
                    && waited + grant.retry_after_ms <= MAX_INLINE_WAIT_MS =>
            {
                waited += grant.retry_after_ms;
                Delay::from(std::time::Duration::from_millis(grant.retry_after_ms)).await;
            }
            Ok(grant) => {
                defer(env, config, &msg, lane, &id, grant.retry_after_ms).await;
                return;
            }
            Err(e) => {
                worker::console_error!("job {id}: no answer from the budget ({e}); deferring");
                defer(env, config, &msg, lane, &id, 1_000).await;
                return;
            }
        }
    }
    let mut settlement = Settle::unused(&id, &model);
    let result: worker::Result<()> = async {
        if !claim_running(db, &id, now_ms()).await? {
            msg.ack();
            return Ok(());
        }
        let attempt = (row.attempts + 1).max(1) as u32;
        if let Some(message) = stored_answer(env, &id).await? {
            // Answered before a crash; settle from what was stored, never call twice.
            let (stmt, _) = settle(db, &row, &message, Tier::Standard, now_ms(), None)?;
            stmt.run().await?;
            msg.ack();
            return Ok(());
        }
        let started_at = now_ms();
        let answered = api.messages(&request, &id).await;
        settlement = Settle::after_call(&id, &model, &answered.result, answered.reported);
        let (label, error) = match &answered.result {
            Ok(message) => {
                store_raw(env, &id, message).await?;
                let (stmt, failed) = settle(db, &row, message, Tier::Standard, now_ms(), None)?;
                stmt.run().await?;
                msg.ack();
                match failed {
                    None => ("completed", None),
                    Some(reason) => ("failed", Some(reason)),
                }
            }
            Err(CallOutcome::Undecodable { reason, raw }) => {
                // Paid for but unreadable: kept in R2, its usage recorded as far as it can be
                // read, failed once.
                store_undecodable(env, &id, raw, &model).await?;
                let usage = Usage::from_raw_answer(raw);
                let cost = usage
                    .as_ref()
                    .and_then(|u| cost_micros(&model, u, Tier::Standard, now_ms()));
                fail_stmt(
                    db,
                    &id,
                    reason,
                    usage.as_ref().map(|u| (u, cost)),
                    None,
                    now_ms(),
                    None,
                )?
                .run()
                .await?;
                msg.ack();
                ("failed", Some(reason.clone()))
            }
            Err(failure) => (
                apply(db, &msg, &id, lane, failure, attempt, config).await?,
                Some(describe(failure)),
            ),
        };
        let record = Attempt {
            job_id: &id,
            n: attempt,
            model: Some(&model),
            started_at,
            ended_at: now_ms(),
            outcome: label,
            error: error.as_deref(),
        };
        if let Err(e) = record_attempt(db, &record).await {
            // The attempt log is for people; the job itself is already settled.
            worker::console_error!("job {id}: attempt {attempt} not logged: {e}");
        }
        Ok(())
    }
    .await;
    lanes::settle(env, &settlement).await;
    if let Err(e) = result {
        // Storage failed around the call: retry; the guarded writes make the rerun safe.
        worker::console_error!("job {id}: {e}; retrying");
        retry_after(&msg, config.timing.backoff_s(1, None));
    }
}

/// Puts a job back on its lane after `after_ms` without counting a retry: a fresh message is
/// sent with a delivery delay, then this one is acked (or retried if the send fails).
async fn defer(
    env: &Env,
    config: &Config,
    msg: &Message<Value>,
    lane: Lane,
    id: &str,
    after_ms: u64,
) {
    let delay_s = after_ms.div_ceil(1000).clamp(1, 60) as u32;
    match queues::send_job_after(env, config, lane, id, Some(delay_s)).await {
        Ok(()) => msg.ack(),
        Err(e) => {
            worker::console_error!("job {id}: deferral failed ({e}); retrying instead");
            retry_after(msg, delay_s);
        }
    }
}

/// Carries out the decision for a failed call; answers what became of the job (`failed` or
/// `retry`), for the attempt log.
async fn apply(
    db: &D1Database,
    msg: &Message<Value>,
    id: &str,
    lane: Lane,
    failure: &CallOutcome,
    attempt: u32,
    config: &Config,
) -> worker::Result<&'static str> {
    let label = match decide(failure, attempt, &config.timing) {
        Decision::Ack => {
            msg.ack();
            "completed"
        }
        Decision::Fail { reason } => {
            fail_stmt(db, id, &reason, None, None, now_ms(), None)?
                .run()
                .await?;
            msg.ack();
            "failed"
        }
        Decision::Retry { delay_s, alert } => {
            let reason = format!(
                "attempt {attempt} failed, retrying in {delay_s} s: {}",
                describe(failure)
            );
            if alert {
                worker::console_error!(
                    "ALERT job {id}: 429 without retry-after — a spend limit, not a rate limit"
                );
                db::count(db, "alert_spend_limit", now_ms()).await?;
            }
            requeue(db, id, &reason, is_overload(failure), now_ms()).await?;
            if retries_exhausted(lane, attempt) {
                // The job's budget is spent even if this message's is not (a message re-sent
                // by the reconciler after a restart counts from one again).
                dead_letter(db, config, id).await;
                msg.ack();
                return Ok("dead_lettered");
            }
            if delay_s == 0 {
                msg.retry();
            } else {
                retry_after(msg, delay_s);
            }
            "retry"
        }
    };
    Ok(label)
}

/// Marks a dead-lettered job and announces it; never calls Claude, never fails.
async fn dead_letter(db: &D1Database, config: &Config, id: &str) {
    if let Err(e) = jobs::dead_letter(db, id, now_ms()).await {
        worker::console_error!("dead-lettering {id} failed: {e}");
    }
    announce_dead_letter(db, config, id).await;
}

/// Calls the webhook about a dead-lettered job (best effort).
pub async fn announce_dead_letter(db: &D1Database, config: &Config, id: &str) {
    let Some(url) = config.notify_webhook_url.as_deref() else {
        return;
    };
    let row = match load_many(db, &[id.to_owned()]).await {
        Ok(mut rows) if !rows.is_empty() => rows.remove(0),
        Ok(_) => return,
        Err(e) => {
            worker::console_error!("dead letter {id}: cannot load the row for the webhook: {e}");
            return;
        }
    };
    let error = row
        .error
        .clone()
        .unwrap_or_else(|| "retries exhausted".into());
    let payload = serde_json::json!({
        "event": "job.failed",
        "jobId": row.id,
        "userId": row.user_id,
        "kind": row.kind,
        "createdAt": row.created_at,
        "error": error,
        "text": format!("claude-pipeline: {} job {} of {} was dead-lettered: {error}", row.kind, row.id, row.user_id),
    });
    if let Err(e) = crate::anthropic::post_json(url, &payload).await {
        // Swallowed: the notification is best effort, the row already says what happened.
        worker::console_error!("dead letter {id}: webhook failed: {e}");
    }
}
