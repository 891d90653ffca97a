//! Turning a model answer into stored results: the raw text in R2 (create-if-absent, before the
//! D1 update that points at it) and the statement that completes — or fails — the row. Also
//! the request each kind of job sends.

use std::collections::HashMap;

use base64::Engine;
use pipeline::answer::{self, judge, Settlement, Verdict};
use pipeline::anthropic::{Message, MessagesRequest, OutputBlock, Role, StopReason, Usage};
use pipeline::feedback;
use pipeline::pdf;
use pipeline::pricing::{cost_micros, Tier, DEFAULT_MODEL};
use pipeline::status::Kind;
use worker::{Conditional, D1Database, D1PreparedStatement, Env};

use crate::config::RESULTS;
use crate::jobs::{complete_stmt, fail_stmt, JobRow};

/// Stores a paid answer at `results/<id>` — with its model, usage and stop reason as metadata —
/// unless it is already there (a retry after a crash must not overwrite what an earlier attempt
/// stored). A usable answer is stored as its text; an unusable one as the whole Message JSON
/// (`format: message`), so what was paid for can be read back.
pub async fn store_raw(env: &Env, id: &str, message: &Message) -> worker::Result<()> {
    let mut metadata: HashMap<String, String> = message.usage.to_metadata().into_iter().collect();
    metadata.insert("model".into(), message.model.clone());
    if let Some(reason) = &message.stop_reason {
        metadata.insert("stop_reason".into(), reason.as_str().to_owned());
    }
    let body = match judge(message) {
        Verdict::Usable => message.text(),
        Verdict::Unusable(_) => {
            metadata.insert("format".into(), "message".into());
            serde_json::to_string(message).map_err(|e| worker::Error::RustError(e.to_string()))?
        }
    };
    put_if_absent(env, id, body.into_bytes(), metadata).await
}

/// Stores an answer that could not be decoded, as it came (`format: raw`), with the model it
/// was asked of.
pub async fn store_undecodable(env: &Env, id: &str, raw: &str, model: &str) -> worker::Result<()> {
    let metadata = HashMap::from([
        ("format".to_owned(), "raw".to_owned()),
        ("model".to_owned(), model.to_owned()),
    ]);
    put_if_absent(env, id, raw.as_bytes().to_vec(), metadata).await
}

async fn put_if_absent(
    env: &Env,
    id: &str,
    body: Vec<u8>,
    metadata: HashMap<String, String>,
) -> worker::Result<()> {
    env.bucket(RESULTS)?
        .put(format!("results/{id}"), body)
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
/// update): rebuilt from the object, so the job settles without a second call.
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
    let text = match object.body() {
        Some(b) => b.text().await?,
        None => return Ok(None),
    };
    let model = metadata.get("model").cloned().unwrap_or_default();
    match metadata.get("format").map(String::as_str) {
        Some("message") => return Ok(serde_json::from_str(&text).ok()),
        // Paid for but unreadable: settled as an answer with nothing to use, never called again.
        Some("raw") => {
            return Ok(Some(Message {
                id: format!("stored-{id}"),
                kind: "message".into(),
                role: Role::Assistant,
                content: Vec::new(),
                model,
                stop_reason: Some(StopReason::Other("undecodable_answer".into())),
                stop_sequence: None,
                usage: Usage::from_raw_answer(&text).unwrap_or_default(),
            }))
        }
        _ => {}
    }
    let Some(usage) = Usage::from_metadata(|k| metadata.get(k).cloned()) else {
        return Ok(None);
    };
    Ok(Some(Message {
        id: format!("stored-{id}"),
        kind: "message".into(),
        role: Role::Assistant,
        content: vec![OutputBlock::text(text)],
        model,
        stop_reason: metadata.get("stop_reason").cloned().map(StopReason::from),
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

/// The D1 statement for a finished call, as `pipeline::answer` settles it: completed (with
/// the analysis or extraction kept on the row), or failed once — keeping what was paid — when
/// the answer is unusable: then the reason comes back beside the statement.
pub fn settle(
    db: &D1Database,
    row: &JobRow,
    message: &Message,
    tier: Tier,
    now: i64,
    batch: Option<&str>,
) -> worker::Result<(D1PreparedStatement, Option<String>)> {
    let text = message.text();
    // The model that answered (after a fallback, not the one asked for) is what was billed, at
    // the rates in force now.
    let answered_by = Some(message.model.as_str());
    let cost = cost_micros(&message.model, &message.usage, tier, now);
    let usage = &message.usage;
    // Feedback keeps its raw answer on the row (it is short); the others only in R2.
    let raw = (row.kind() == Kind::Feedback).then_some(text.as_str());
    match answer::settle(row.kind(), message) {
        Settlement::Complete { result } => Ok((
            complete_stmt(
                db,
                &row.id,
                usage,
                cost,
                raw.unwrap_or_default(),
                result,
                now,
                batch,
                answered_by,
            )?,
            None,
        )),
        Settlement::Fail { reason } => Ok((
            fail_stmt(db, &row.id, &reason, Some((usage, cost)), raw, now, batch)?,
            Some(reason),
        )),
    }
}
