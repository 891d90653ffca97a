//! The Messages request each kind of job sends: built from the row for feedback, from the PDF in
//! R2 for PDFs (by reference to the Files API, or inline), read back from its R2 claim-check for
//! prompt jobs.

use pipeline::anthropic::{inline, MessagesRequest};
use pipeline::pricing::DEFAULT_MODEL;
use pipeline::status::Kind;
use pipeline::{feedback, pdf};
use wasm_bindgen::JsValue;
use worker::web_sys;

use crate::blobs::prompt_key;
use crate::services::AppState;
use crate::store::JobRow;

/// The request a job sends. A PDF is read by its `file_id` in the Files API (uploaded first if
/// it has none), or carried as base64 where that is not available.
pub async fn request_of(state: &AppState, row: &JobRow) -> worker::Result<MessagesRequest> {
    let model = row.model.as_deref().unwrap_or(DEFAULT_MODEL);
    match row.kind {
        Kind::Feedback => Ok(feedback::request(
            model,
            row.input_text.as_deref().unwrap_or_default(),
        )),
        Kind::Pdf => {
            let key = row
                .prompt_key
                .as_deref()
                .ok_or_else(|| worker::Error::RustError("a pdf job without its upload".into()))?;
            let known = row.file_id.as_deref();
            let name = row.file_name.as_deref();
            if let Some(id) = crate::files::file_for(state, &row.id, key, known, name).await {
                return Ok(pdf::request_for_file(model, row.template(), id));
            }
            // The PDF itself as a base64 document block with the template's question — by
            // reference to R2 here, its base64 put in as the body is sent ([`body_of`]).
            Ok(pdf::request(model, row.template(), inline::reference(key)))
        }
        Kind::Prompt => {
            let key = row
                .prompt_key
                .clone()
                .unwrap_or_else(|| prompt_key(&row.id));
            let body = state.blobs.claim_check(&key).await?;
            let stored: MessagesRequest = serde_json::from_slice(&body)
                .map_err(|e| worker::Error::RustError(format!("{key} is not a request: {e}")))?;
            // A request stored before the move to API version 2026-10-21 may still carry what
            // that version removed.
            let stored = pipeline::shape::without_removed(stored);
            // A refusal moved the job to its fallback model: the stored request goes there,
            // shaped for it.
            Ok(match row.refusal.is_some() {
                true => pipeline::shape::conform(stored, model),
                false => stored,
            })
        }
    }
}

/// The R2 object a PDF job's request carries inline, when its request (as JSON) holds the
/// reference to it: (key, bytes — the largest file allowed where the row does not say).
pub fn inline_pdf<'a>(row: &'a JobRow, json: &str) -> Option<(&'a str, u64)> {
    match (row.kind, row.prompt_key.as_deref()) {
        (Kind::Pdf, Some(key)) if inline::split(json, key).is_some() => Some((key, pdf_bytes(row))),
        _ => None,
    }
}

/// A PDF job's file size: as recorded, else the largest a PDF may be.
pub fn pdf_bytes(row: &JobRow) -> u64 {
    row.file_size
        .map_or(pdf::MAX_FILE_BYTES, |b| b.max(0) as u64)
}

/// A job's request body as sent: its JSON, where a PDF job's own PDF goes inline the base64 of
/// the R2 object put between the JSON's halves — the whole assembled as a Blob in JS memory, a
/// chunk at a time through the Worker (`pipeline::anthropic::inline`).
pub async fn body_of(state: &AppState, row: &JobRow, json: String) -> worker::Result<JsValue> {
    let Some((key, _)) = inline_pdf(row, &json) else {
        return Ok(JsValue::from_str(&json));
    };
    let parts = js_sys::Array::new();
    push_expanded(state, &parts, &json, Some(key)).await?;
    Ok(web_sys::Blob::new_with_str_sequence(&parts)?.into())
}

/// Appends a request's JSON to `parts` (Blob parts): where it holds the reference to the R2
/// object at `key`, the two halves around the object's base64, read from R2 a slice at a time.
pub async fn push_expanded(
    state: &AppState,
    parts: &js_sys::Array,
    json: &str,
    key: Option<&str>,
) -> worker::Result<()> {
    match key.and_then(|k| inline::split(json, k).map(|halves| (k, halves))) {
        Some((key, (before, after))) => {
            parts.push(&JsValue::from_str(before));
            state.blobs.base64_into(key, parts).await?;
            parts.push(&JsValue::from_str(after));
        }
        None => {
            parts.push(&JsValue::from_str(json));
        }
    }
    Ok(())
}
