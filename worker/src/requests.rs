//! The Messages request each kind of job sends: built from the row for feedback, from the PDF in
//! R2 for PDFs (by reference to the Files API, or inline), read back from its R2 claim-check for
//! prompt jobs.

use base64::Engine;
use pipeline::anthropic::MessagesRequest;
use pipeline::pricing::DEFAULT_MODEL;
use pipeline::status::Kind;
use pipeline::{feedback, pdf};

use crate::blobs::prompt_key;
use crate::services::AppState;
use crate::store::JobRow;

/// The request a job sends. A PDF is read by its `file_id` in the Files API (uploaded first if
/// it has none), or carried as base64 where that is not available.
pub async fn request_of(state: &AppState, row: &JobRow) -> worker::Result<MessagesRequest> {
    let blobs = &state.blobs;
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
            // The PDF itself, from R2, as a base64 document block with the template's question.
            let bytes = blobs.claim_check(key).await?;
            let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
            drop(bytes);
            Ok(pdf::request(model, row.template(), data))
        }
        Kind::Prompt => {
            let key = row
                .prompt_key
                .clone()
                .unwrap_or_else(|| prompt_key(&row.id));
            let body = blobs.claim_check(&key).await?;
            serde_json::from_slice(&body)
                .map_err(|e| worker::Error::RustError(format!("{key} is not a request: {e}")))
        }
    }
}
