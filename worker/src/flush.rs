//! The bulk lane on the Message Batches API. Batch-mode jobs join an accumulation in D1 (their
//! queue message is acked: a Message Batch may wait an hour for company, a queue message may
//! not). A flush — when `BATCH_FLUSH_SIZE` jobs wait or the oldest has waited
//! `BATCH_FLUSH_AGE_S` — claims waiting jobs in D1 *before* its create call, sends one Message
//! Batch, and marks them `submitted`; the poller (`batches.rs`) settles them like any batch.
//!
//! Paying twice is what the order prevents. The create call has three endings:
//! - an answer: the jobs are marked `submitted` with the batch id;
//! - an error answer: nothing was created; the claim is released (or the job the API named as
//!   invalid fails);
//! - no answer (timeout, network, or the Worker died): the batch may or may not exist. The flush
//!   stays `claimed`, its jobs are never sent again, and [`recover`] later looks for the batch
//!   among the account's batches (`pipeline::batching::recover`): adopted if found, released if
//!   the create certainly never reached the API.

use pipeline::anthropic::{BatchRequest, CreateBatch};
use pipeline::batching::{self, Recovery, Unknown};
use pipeline::clock::parse_rfc3339;
use pipeline::jobs::new_id;
use pipeline::retry::{describe, is_permanent, CallOutcome};
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;
use worker::{D1Database, Env};

use crate::anthropic::Anthropic;
use crate::config::{now_ms, Config};
use crate::jobs::{fail_stmt, num, JobRow, COLUMNS};
use crate::queues::random_bytes;
use crate::results::request_of;

/// At most this many flushes per run (each one create call), so one invocation stays bounded.
const MAX_FLUSHES_PER_RUN: usize = 10;

/// What a run of [`flush_due`] did.
#[derive(Debug, Default, Serialize)]
pub struct FlushReport {
    pub batches_created: u32,
    pub jobs_submitted: u32,
    pub jobs_failed: u32,
    /// Flushes left `claimed` because the create call's outcome is unknown.
    pub outcomes_unknown: u32,
    pub errors: Vec<String>,
}

/// A batch-mode job joins the accumulation (once: a redelivered message changes nothing).
pub async fn accumulate(db: &D1Database, id: &str, now: i64) -> worker::Result<()> {
    db.prepare(
        "UPDATE jobs SET accumulated_at = ?2, updated_at = ?2 \
         WHERE id = ?1 AND status = 'queued' AND accumulated_at IS NULL",
    )
    .bind(&[id.into(), num(now)])?
    .run()
    .await?;
    Ok(())
}

/// How many jobs wait for a flush, and since when the oldest.
pub async fn waiting(db: &D1Database) -> worker::Result<(u32, Option<i64>)> {
    #[derive(Deserialize)]
    struct Row {
        n: i64,
        oldest: Option<i64>,
    }
    let row: Option<Row> = db
        .prepare(
            "SELECT COUNT(*) AS n, MIN(accumulated_at) AS oldest FROM jobs \
             WHERE status = 'queued' AND accumulated_at IS NOT NULL AND flush_id IS NULL",
        )
        .first(None)
        .await?;
    Ok(row
        .map(|r| (r.n.max(0) as u32, r.oldest))
        .unwrap_or((0, None)))
}

/// Flushes while a flush is due (by size or age) — or, with `force`, while any job waits.
pub async fn flush_due(env: &Env, config: &Config, db: &D1Database, force: bool) -> FlushReport {
    let mut report = FlushReport::default();
    let api = Anthropic::new(config);
    for _ in 0..MAX_FLUSHES_PER_RUN {
        let due = match waiting(db).await {
            Ok((n, oldest)) => {
                (force && n > 0) || batching::flush_due(n, oldest, now_ms(), &config.timing)
            }
            Err(e) => {
                report.errors.push(format!("counting waiting jobs: {e}"));
                break;
            }
        };
        if !due {
            break;
        }
        match flush_once(env, config, db, &api, &mut report).await {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                report.errors.push(format!("flush: {e}"));
                break;
            }
        }
    }
    if !report.errors.is_empty() {
        worker::console_error!("flush: {:?}", report.errors);
    }
    report
}

/// One flush: claim, build, create, mark. Answers whether another flush may follow at once.
async fn flush_once(
    env: &Env,
    config: &Config,
    db: &D1Database,
    api: &Anthropic,
    report: &mut FlushReport,
) -> worker::Result<bool> {
    let now = now_ms();
    let flush = format!("flush_{}", new_id(random_bytes()?));
    // The claim: a flush row and its jobs in one transaction, before anything is sent.
    db.batch(vec![
        db.prepare(
            "INSERT INTO flushes (id, state, jobs, claimed_at, updated_at) \
             VALUES (?1, 'claimed', 0, ?2, ?2)",
        )
        .bind(&[flush.as_str().into(), num(now)])?,
        db.prepare(
            "UPDATE jobs SET flush_id = ?1, updated_at = ?2 WHERE id IN (SELECT id FROM jobs \
             WHERE status = 'queued' AND accumulated_at IS NOT NULL AND flush_id IS NULL \
             ORDER BY accumulated_at LIMIT ?3)",
        )
        .bind(&[
            flush.as_str().into(),
            num(now),
            num(batching::flush_size(&config.timing) as i64),
        ])?,
    ])
    .await?;
    let rows: Vec<JobRow> = db
        .prepare(format!(
            "SELECT {COLUMNS} FROM jobs WHERE flush_id = ?1 AND status = 'queued' \
             ORDER BY accumulated_at"
        ))
        .bind(&[flush.as_str().into()])?
        .all()
        .await?
        .results()?;
    if rows.is_empty() {
        // Another flush took them first.
        db.prepare("DELETE FROM flushes WHERE id = ?1")
            .bind(&[flush.as_str().into()])?
            .run()
            .await?;
        return Ok(false);
    }
    // Requests are built one by one and stop at the byte limit, so that a flush of large PDFs
    // never holds more than one create call's worth in memory.
    let mut requests = Vec::new();
    let mut bytes = 0;
    let mut rest: Vec<String> = Vec::new();
    let mut statements = Vec::new();
    for row in &rows {
        if !rest.is_empty() {
            rest.push(row.id.clone());
            continue;
        }
        match request_of(env, row).await {
            Ok(params) => {
                let r = BatchRequest {
                    custom_id: row.id.clone(),
                    params,
                };
                let size = serde_json::to_string(&r).map(|s| s.len()).unwrap_or(0);
                if batching::fits(requests.len(), bytes, size, batching::MAX_FLUSH_BYTES) {
                    bytes += size;
                    requests.push(r);
                } else {
                    rest.push(row.id.clone());
                }
            }
            Err(e) => {
                report.jobs_failed += 1;
                statements.push(fail_stmt(
                    db,
                    &row.id,
                    &format!("its request cannot be built: {e}"),
                    None,
                    None,
                    now,
                    None,
                )?);
            }
        }
    }
    let n = requests.len();
    for id in &rest {
        // Did not fit this create call: back to waiting, first in line for the next.
        statements.push(
            db.prepare("UPDATE jobs SET flush_id = NULL WHERE id = ?1 AND flush_id = ?2")
                .bind(&[id.as_str().into(), flush.as_str().into()])?,
        );
    }
    statements.push(
        db.prepare("UPDATE flushes SET jobs = ?2, updated_at = ?3 WHERE id = ?1")
            .bind(&[flush.as_str().into(), num(n as i64), num(now_ms())])?,
    );
    db.batch(statements).await?;
    if requests.is_empty() {
        release(db, &flush, "no request could be built").await?;
        return Ok(true);
    }
    let ids: Vec<String> = requests.iter().map(|r| r.custom_id.clone()).collect();
    match api.create_batch(&CreateBatch { requests }).await {
        Ok(created) => {
            let marked = mark_created(db, &flush, &created.id).await;
            report.batches_created += 1;
            report.jobs_submitted += ids.len() as u32;
            if let Err(e) = marked {
                // The batch exists; the flush stays claimed and recovery adopts it by its size
                // and time. Nothing is sent again meanwhile.
                report.errors.push(format!(
                    "batch {} created but not recorded ({e}); recovery will adopt it",
                    created.id
                ));
            }
            Ok(true)
        }
        Err(CallOutcome::Http {
            status, message, ..
        }) if is_permanent(status) => {
            // The API names the offending request (`requests.N…`) when one is at fault: fail
            // that job alone, release the rest. Otherwise the whole batch is refused for good.
            let reason = format!("Anthropic API {status}: {message}");
            let culprit = batching::offending_index(&message).and_then(|i| ids.get(i));
            let mut statements = Vec::new();
            for id in ids.iter().filter(|id| culprit.is_none_or(|c| c == *id)) {
                statements.push(fail_stmt(db, id, &reason, None, None, now_ms(), None)?);
                report.jobs_failed += 1;
            }
            db.batch(statements).await?;
            release(db, &flush, &reason).await?;
            Ok(culprit.is_some())
        }
        Err(e @ CallOutcome::Http { .. }) => {
            // Refused (429, 5xx): nothing was created. The jobs wait for the next flush.
            release(db, &flush, &describe(&e)).await?;
            report
                .errors
                .push(format!("batch create refused: {}", describe(&e)));
            Ok(false)
        }
        Err(e) => {
            // No answer: the batch may exist. Never resend; recovery decides.
            let note = format!("outcome unknown: {}", describe(&e));
            db.prepare("UPDATE flushes SET note = ?2, updated_at = ?3 WHERE id = ?1")
                .bind(&[flush.as_str().into(), note.as_str().into(), num(now_ms())])?
                .run()
                .await?;
            report.outcomes_unknown += 1;
            report.errors.push(format!("{flush}: {note}"));
            Ok(false)
        }
    }
}

/// The flush's jobs are in `batch`: `submitted` with its id, in one transaction.
async fn mark_created(db: &D1Database, flush: &str, batch: &str) -> worker::Result<()> {
    let now = now_ms();
    db.batch(vec![
        db.prepare(
            "UPDATE jobs SET status = 'submitted', anthropic_batch_id = ?2, \
             attempts = attempts + 1, started_at = COALESCE(started_at, ?3), error = NULL, \
             updated_at = ?3 WHERE flush_id = ?1 AND status = 'queued'",
        )
        .bind(&[flush.into(), batch.into(), num(now)])?,
        db.prepare(
            "UPDATE flushes SET state = 'created', anthropic_batch_id = ?2, updated_at = ?3 \
             WHERE id = ?1",
        )
        .bind(&[flush.into(), batch.into(), num(now)])?,
    ])
    .await?;
    Ok(())
}

/// The create certainly did not happen: the flush's jobs wait again.
async fn release(db: &D1Database, flush: &str, note: &str) -> worker::Result<()> {
    let now = now_ms();
    db.batch(vec![
        db.prepare(
            "UPDATE jobs SET flush_id = NULL, updated_at = ?2 \
             WHERE flush_id = ?1 AND status = 'queued'",
        )
        .bind(&[flush.into(), num(now)])?,
        db.prepare(
            "UPDATE flushes SET state = 'released', note = ?2, updated_at = ?3 WHERE id = ?1",
        )
        .bind(&[flush.into(), note.into(), num(now)])?,
    ])
    .await?;
    Ok(())
}

/// What a recovery run did.
#[derive(Debug, Default, Serialize)]
pub struct RecoveryReport {
    pub adopted: u32,
    pub released: u32,
    pub waiting: u32,
}

/// Resolves flushes left `claimed` once their create call can no longer be in flight: the
/// account's recent batches that no flush knows are matched by size and time (see
/// `pipeline::batching::recover`).
pub async fn recover(config: &Config, db: &D1Database) -> worker::Result<RecoveryReport> {
    #[derive(Deserialize)]
    struct Stranded {
        id: String,
        jobs: i64,
        claimed_at: i64,
    }
    let mut report = RecoveryReport::default();
    let now = now_ms();
    let timeout = config.timing.call_timeout_ms as i64;
    let stranded: Vec<Stranded> = db
        .prepare(
            "SELECT id, jobs, claimed_at FROM flushes WHERE state = 'claimed' AND claimed_at < ?1 \
             ORDER BY claimed_at LIMIT 20",
        )
        .bind(&[num(now - timeout - batching::margin_ms(timeout))])?
        .all()
        .await?
        .results()?;
    let Some(oldest) = stranded.iter().map(|s| s.claimed_at).min() else {
        return Ok(report);
    };
    let api = Anthropic::new(config);
    let mut unknown = Vec::new();
    let mut after: Option<String> = None;
    for _ in 0..10 {
        let page = api
            .list_batches(after.as_deref())
            .await
            .map_err(|e| worker::Error::RustError(describe(&e)))?;
        let mut older = false;
        for b in &page.data {
            let created = b.created_at.as_deref().and_then(parse_rfc3339).unwrap_or(0);
            older |= created < oldest - batching::margin_ms(timeout);
            let c = &b.request_counts;
            unknown.push(Unknown {
                id: b.id.clone(),
                created_at: created,
                requests: c.processing + c.succeeded + c.errored + c.canceled + c.expired,
            });
        }
        if older || !page.has_more {
            break;
        }
        after = page.last_id.clone();
    }
    // Keep only the batches no flush (and no job) knows.
    let mut known = std::collections::HashSet::new();
    for chunk in unknown.chunks(50) {
        let marks = vec!["?"; chunk.len()].join(",");
        let binds: Vec<JsValue> = chunk.iter().map(|u| u.id.as_str().into()).collect();
        #[derive(Deserialize)]
        struct Id {
            anthropic_batch_id: String,
        }
        for sql in [
            format!("SELECT anthropic_batch_id FROM flushes WHERE anthropic_batch_id IN ({marks})"),
            format!(
                "SELECT DISTINCT anthropic_batch_id FROM jobs WHERE anthropic_batch_id IN ({marks})"
            ),
        ] {
            let rows: Vec<Id> = db.prepare(sql).bind(&binds)?.all().await?.results()?;
            known.extend(rows.into_iter().map(|r| r.anthropic_batch_id));
        }
    }
    unknown.retain(|u| !known.contains(&u.id));
    for s in stranded {
        match batching::recover(s.claimed_at, s.jobs.max(0) as u64, &unknown, now, timeout) {
            Recovery::Adopt(batch) => {
                worker::console_log!("recovery: flush {} adopts batch {batch}", s.id);
                mark_created(db, &s.id, &batch).await?;
                unknown.retain(|u| u.id != batch);
                report.adopted += 1;
            }
            Recovery::Release => {
                worker::console_log!("recovery: flush {} never reached the API", s.id);
                release(db, &s.id, "the create call never reached the API").await?;
                report.released += 1;
            }
            Recovery::Wait => report.waiting += 1,
        }
    }
    Ok(report)
}
