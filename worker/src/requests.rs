//! The Messages request each kind of job sends: built from the row for feedback, from the PDF in
//! R2 for PDFs, read back from its R2 claim-check for prompt jobs.

use base64::Engine;
use pipeline::anthropic::MessagesRequest;
use pipeline::pricing::DEFAULT_MODEL;
use pipeline::status::Kind;
use pipeline::{feedback, pdf};

use crate::blobs::{prompt_key, Blobs};
use crate::store::JobRow;

/// The request a job sends.
pub async fn request_of(blobs: &Blobs, row: &JobRow) -> worker::Result<MessagesRequest> {
    let model = row.model.as_deref().unwrap_or(DEFAULT_MODEL);
    match row.kind {
        Kind::Feedback => Ok(feedback::request(
            model,
            row.input_text.as_deref().unwrap_or_default(),
        )),
        Kind::Pdf => {
            // The PDF itself, from R2, as a base64 document block with the template's question.
            let key = row
                .prompt_key
                .as_deref()
                .ok_or_else(|| worker::Error::RustError("a pdf job without its upload".into()))?;
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
