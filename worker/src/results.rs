//! Turning a model answer into stored results: the raw text in R2 (create-if-absent, before the
//! D1 update that points at it) and the statement that completes — or fails — the row. Also
//! the request each kind of job sends.

use pipeline::anthropic::{Message, MessagesRequest};
use pipeline::feedback::{self, parse_analysis};
use pipeline::pricing::{cost_micros, Tier, DEFAULT_MODEL};
use pipeline::status::Kind;
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

/// The Messages request a job sends: built from the row for feedback, read back from its R2
/// claim-check for prompt jobs.
pub async fn request_of(env: &Env, row: &JobRow) -> worker::Result<MessagesRequest> {
    match row.kind() {
        Kind::Feedback => Ok(feedback::request(
            row.model.as_deref().unwrap_or(DEFAULT_MODEL),
            row.input_text.as_deref().unwrap_or_default(),
        )),
        Kind::Prompt | Kind::Pdf => {
            let key = row
                .prompt_key
                .clone()
                .unwrap_or_else(|| format!("prompts/{}", row.id));
            let object = env
                .bucket(RESULTS)?
                .get(&key)
                .execute()
                .await?
                .ok_or_else(|| worker::Error::RustError(format!("{key} is missing from R2")))?;
            let body = object
                .body()
                .ok_or_else(|| worker::Error::RustError(format!("{key} has no body")))?
                .text()
                .await?;
            serde_json::from_str(&body)
                .map_err(|e| worker::Error::RustError(format!("{key} is not a request: {e}")))
        }
    }
}

/// The D1 statement for a finished call: completed (with the analysis, for feedback), or
/// failed — keeping the raw text and what was paid — when a feedback answer is not a readable
/// analysis. The bool says whether it completed.
pub fn settle(
    db: &D1Database,
    row: &JobRow,
    message: &Message,
    tier: Tier,
    now: i64,
    batch: Option<&str>,
) -> worker::Result<(D1PreparedStatement, bool)> {
    let text = message.text();
    // The model that answered (after a fallback, not the one asked for) is what was billed.
    let answered_by = Some(message.model.as_str());
    let cost = cost_micros(&message.model, &message.usage, tier);
    let usage = &message.usage;
    match row.kind() {
        Kind::Feedback => match parse_analysis(&text) {
            Ok(a) => Ok((
                complete_stmt(
                    db,
                    &row.id,
                    usage,
                    cost,
                    &text,
                    Some(&a),
                    now,
                    batch,
                    answered_by,
                )?,
                true,
            )),
            Err(reason) => Ok((
                fail_stmt(
                    db,
                    &row.id,
                    &reason,
                    Some((usage, cost)),
                    Some(&text),
                    now,
                    batch,
                )?,
                false,
            )),
        },
        Kind::Prompt | Kind::Pdf => Ok((
            // Prompt results can be long: the text lives in R2 only.
            complete_stmt(db, &row.id, usage, cost, "", None, now, batch, answered_by)?,
            true,
        )),
    }
}
