//! Turning a model answer into stored results: the raw text in R2 (create-if-absent, before the
//! D1 update that points at it) and the statement that completes — or fails — the row. Also
//! the request each kind of job sends.

use std::collections::HashMap;

use base64::Engine;
use pipeline::anthropic::{Message, MessagesRequest, OutputBlock, Role, Usage};
use pipeline::feedback::{self, parse_analysis};
use pipeline::pdf;
use pipeline::pricing::{cost_micros, Tier, DEFAULT_MODEL};
use pipeline::status::Kind;
use worker::{Conditional, D1Database, D1PreparedStatement, Env};

use crate::config::RESULTS;
use crate::jobs::{complete_stmt, fail_stmt, JobRow};

/// Stores the answer's text at `results/<id>` — with its model and usage as metadata — unless it
/// is already there (a retry after a crash must not overwrite what an earlier attempt stored).
pub async fn store_raw(env: &Env, id: &str, message: &Message) -> worker::Result<()> {
    let mut metadata: HashMap<String, String> = message.usage.to_metadata().into_iter().collect();
    metadata.insert("model".into(), message.model.clone());
    env.bucket(RESULTS)?
        .put(format!("results/{id}"), message.text().into_bytes())
        .custom_metadata(metadata)
        .only_if(Conditional {
            etag_does_not_match: Some("*".into()),
            ..Default::default()
        })
        .execute()
        .await?;
    Ok(())
}

/// An answer already stored for this job (a Worker that died between the R2 write and the D1
/// update): rebuilt from the object, so the job completes without a second call.
pub async fn stored_answer(env: &Env, id: &str) -> worker::Result<Option<Message>> {
    let Some(object) = env
        .bucket(RESULTS)?
        .get(format!("results/{id}"))
        .execute()
        .await?
    else {
        return Ok(None);
    };
    let metadata = object.custom_metadata()?;
    let Some(usage) = Usage::from_metadata(|k| metadata.get(k).cloned()) else {
        return Ok(None);
    };
    let text = match object.body() {
        Some(b) => b.text().await?,
        None => return Ok(None),
    };
    Ok(Some(Message {
        id: format!("stored-{id}"),
        kind: "message".into(),
        role: Role::Assistant,
        content: vec![OutputBlock::Text { text }],
        model: metadata.get("model").cloned().unwrap_or_default(),
        stop_reason: None,
        stop_sequence: None,
        usage,
    }))
}

/// The bytes a job's row points at in R2 (its request or its upload); missing is an error.
async fn claim_check(env: &Env, key: &str) -> worker::Result<Vec<u8>> {
    let object = env
        .bucket(RESULTS)?
        .get(key)
        .execute()
        .await?
        .ok_or_else(|| worker::Error::RustError(format!("{key} is missing from R2")))?;
    object
        .body()
        .ok_or_else(|| worker::Error::RustError(format!("{key} has no body")))?
        .bytes()
        .await
}

/// The Messages request a job sends: built from the row for feedback, read back from its R2
/// claim-check for prompt jobs.
pub async fn request_of(env: &Env, row: &JobRow) -> worker::Result<MessagesRequest> {
    match row.kind() {
        Kind::Feedback => Ok(feedback::request(
            row.model.as_deref().unwrap_or(DEFAULT_MODEL),
            row.input_text.as_deref().unwrap_or_default(),
        )),
        Kind::Pdf => {
            // The PDF itself, from R2, as a base64 document block with the template's question.
            let key = row
                .prompt_key
                .clone()
                .ok_or_else(|| worker::Error::RustError("a pdf job without its upload".into()))?;
            let bytes = claim_check(env, &key).await?;
            let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
            drop(bytes);
            Ok(pdf::request(
                row.model.as_deref().unwrap_or(DEFAULT_MODEL),
                row.template(),
                data,
            ))
        }
        Kind::Prompt => {
            let key = row
                .prompt_key
                .clone()
                .unwrap_or_else(|| format!("prompts/{}", row.id));
            let body = claim_check(env, &key).await?;
            serde_json::from_slice(&body)
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
                    serde_json::to_string(&a).ok(),
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
        // A PDF's extraction is small and kept on the row; the raw answer lives in R2.
        Kind::Pdf => match pdf::parse_extraction(&text) {
            Ok(e) => Ok((
                complete_stmt(
                    db,
                    &row.id,
                    usage,
                    cost,
                    "",
                    serde_json::to_string(&e).ok(),
                    now,
                    batch,
                    answered_by,
                )?,
                true,
            )),
            Err(reason) => Ok((
                fail_stmt(db, &row.id, &reason, Some((usage, cost)), None, now, batch)?,
                false,
            )),
        },
        Kind::Prompt => Ok((
            // Prompt results can be long: the text lives in R2 only.
            complete_stmt(db, &row.id, usage, cost, "", None, now, batch, answered_by)?,
            true,
        )),
    }
}
