//! The batch mode's poller (run by the cron, and on demand): for every Anthropic batch that
//! still has submitted jobs, retrieve it; once ended, read its JSONL results and settle every
//! affected row in one `db.batch()`. Guarded updates make it safe to run twice or concurrently.

use pipeline::anthropic::{parse_results, BatchResult};
use pipeline::batching::{self, Outcome};
use pipeline::pricing::Tier;
use pipeline::retry::describe;
use serde::Serialize;
use worker::Env;

use crate::anthropic::Anthropic;
use crate::config::{now_ms, Config, DB};
use crate::jobs::{batch_end_stmt, fail_stmt, in_batch, open_batches, resubmit_stmt};
use crate::results::{settle, store_raw};

/// What one poll did.
#[derive(Debug, Default, Serialize)]
pub struct PollReport {
    pub batches_checked: u32,
    pub batches_ended: u32,
    pub jobs_completed: u32,
    pub jobs_failed: u32,
    /// Transient errors and expiries, back in the accumulation for a later batch.
    pub jobs_resubmitted: u32,
    pub jobs_dead_lettered: u32,
    pub jobs_canceled: u32,
    pub errors: Vec<String>,
}

pub async fn poll(env: &Env, config: &Config) -> worker::Result<PollReport> {
    let db = env.d1(DB)?;
    let api = Anthropic::new(config);
    let mut report = PollReport::default();
    for batch_id in open_batches(&db).await? {
        report.batches_checked += 1;
        let batch = match api.retrieve_batch(&batch_id).await {
            Ok(b) => b,
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
        let jsonl = match api.batch_results(url).await {
            Ok(t) => t,
            Err(e) => {
                report
                    .errors
                    .push(format!("{batch_id} results: {}", describe(&e)));
                continue;
            }
        };
        report.batches_ended += 1;
        let rows = in_batch(&db, &batch_id).await?;
        let now = now_ms();
        let fail =
            |id: &str, reason: &str| fail_stmt(&db, id, reason, None, None, now, Some(&batch_id));
        let mut statements = Vec::with_capacity(rows.len());
        let mut seen = std::collections::HashSet::new();
        let mut dead = Vec::new();
        for line in parse_results(&jsonl) {
            let line = match line {
                Ok(l) => l,
                Err(e) => {
                    report.errors.push(format!("{batch_id}: {e}"));
                    continue;
                }
            };
            let Some(row) = rows.iter().find(|r| r.id == line.custom_id) else {
                continue; // settled already, or not ours
            };
            seen.insert(row.id.clone());
            match &line.result {
                BatchResult::Succeeded { message } => {
                    store_raw(env, &row.id, message).await?;
                    let (stmt, failed) =
                        settle(&db, row, message, Tier::Batch, now, Some(&batch_id))?;
                    statements.push(stmt);
                    if failed.is_none() {
                        report.jobs_completed += 1;
                    } else {
                        report.jobs_failed += 1;
                    }
                }
                other => {
                    let tries = row.batch_tries.max(0) as u32;
                    let outcome = match other {
                        BatchResult::Errored { error } => {
                            batching::errored(error.error.kind, &error.error.message, tries)
                        }
                        BatchResult::Expired => batching::expired(tries),
                        BatchResult::Unreadable { reason } => Outcome::Fail(reason.clone()),
                        BatchResult::Unknown => Outcome::Fail(
                            "its batch result has a type this client does not know".into(),
                        ),
                        _ => Outcome::Canceled,
                    };
                    match outcome {
                        Outcome::Fail(reason) => {
                            statements.push(fail(&row.id, &reason)?);
                            report.jobs_failed += 1;
                        }
                        Outcome::Resubmit(reason) => {
                            statements.push(resubmit_stmt(&db, &row.id, &batch_id, &reason, now)?);
                            report.jobs_resubmitted += 1;
                        }
                        Outcome::DeadLetter(reason) => {
                            statements.push(batch_end_stmt(
                                &db,
                                &row.id,
                                &batch_id,
                                "dead_lettered",
                                &reason,
                                now,
                            )?);
                            dead.push(row.id.clone());
                            report.jobs_dead_lettered += 1;
                        }
                        Outcome::Canceled => {
                            statements.push(batch_end_stmt(
                                &db,
                                &row.id,
                                &batch_id,
                                "canceled",
                                "the batch was canceled before this request ran",
                                now,
                            )?);
                            report.jobs_canceled += 1;
                        }
                    }
                }
            }
        }
        for row in rows.iter().filter(|r| !seen.contains(&r.id)) {
            let reason = "the job is missing from its batch's results";
            statements.push(fail(&row.id, reason)?);
            report.jobs_failed += 1;
        }
        if !statements.is_empty() {
            db.batch(statements).await?;
        }
        for id in dead {
            crate::consumer::announce_dead_letter(&db, config, &id).await;
        }
    }
    Ok(report)
}
