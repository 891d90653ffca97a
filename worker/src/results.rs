//! Turning a model answer into stored results: the raw text in R2 (create-if-absent, before the
//! D1 update that points at it) and the statement that completes — or fails — the row.

use pipeline::anthropic::Message;
use pipeline::feedback::parse_analysis;
use pipeline::pricing::{cost_micros, Tier};
use worker::{Conditional, D1Database, D1PreparedStatement, Env};

use crate::config::RESULTS;
use crate::jobs::{complete_stmt, fail_stmt, JobRow};

/// Stores the answer's raw text at `results/<id>` unless it is already there (a retry after a
/// crash must not overwrite what an earlier attempt stored).
pub async fn store_raw(env: &Env, id: &str, text: &str) -> worker::Result<()> {
    env.bucket(RESULTS)?
        .put(format!("results/{id}"), text.as_bytes().to_vec())
        .only_if(Conditional {
            etag_does_not_match: Some("*".into()),
            ..Default::default()
        })
        .execute()
        .await?;
    Ok(())
}

/// The D1 statement for a finished call of a feedback job: completed with its analysis, or
/// failed (keeping the raw text and what was paid) when the answer is not a readable analysis.
pub fn feedback_outcome(
    db: &D1Database,
    row: &JobRow,
    message: &Message,
    tier: Tier,
    now: i64,
    batch: Option<&str>,
) -> worker::Result<(D1PreparedStatement, bool)> {
    let text = message.text();
    let model = row.model.as_deref().unwrap_or(&message.model);
    let cost = cost_micros(model, &message.usage, tier);
    match parse_analysis(&text) {
        Ok(analysis) => Ok((
            complete_stmt(
                db,
                &row.id,
                &message.usage,
                cost,
                &text,
                &analysis,
                now,
                batch,
            )?,
            true,
        )),
        Err(reason) => Ok((
            fail_stmt(
                db,
                &row.id,
                &reason,
                Some((&message.usage, cost)),
                Some(&text),
                now,
                batch,
            )?,
            false,
        )),
    }
}
