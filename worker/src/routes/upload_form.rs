//! An upload's multipart body as it streams in: each file checked as its bytes arrive and
//! stored in R2 under an id, the form's other fields, and the hash of the form's content that its
//! `Idempotency-Key` record keeps.

use futures_util::StreamExt;
use pipeline::error::ApiError;
use pipeline::money::UsdMicros;
use pipeline::multipart;
use pipeline::pdf;
use pipeline::prompt::BodyHasher;

use crate::blobs::Blobs;
use crate::services::new_id;
use crate::store::uploads::NewFile;

/// What the form said besides its files.
#[derive(Default)]
pub struct Form {
    pub mode: Option<String>,
    pub template: Option<String>,
    pub model: Option<String>,
    pub expires_in_s: Option<String>,
    pub callback_url: Option<String>,
}

/// The part being read. A file's bytes wait in JS memory, as the chunks they arrived in, never
/// in the Worker's linear memory: wasm memory never shrinks, so one 20 MB file held there would
/// be carried by every later request of the isolate (issue 32, "Memory held once").
enum Current {
    File {
        name: String,
        scan: pdf::Scan,
        chunks: js_sys::Array,
    },
    Field {
        name: String,
        value: Vec<u8>,
    },
    Other,
}

/// Reads the multipart body as it streams in (`pipeline::multipart`), checking each file as its
/// bytes arrive and storing it in R2 under an id (never its name) once complete. On any error the
/// caller deletes what was stored (`super::staged::Staged`).
pub async fn read_files(
    stream: &mut axum::body::BodyDataStream,
    boundary: &str,
    blobs: &Blobs,
    upload_id: &str,
    files: &mut Vec<NewFile>,
    (form, hasher): (&mut Form, &mut BodyHasher),
) -> Result<(), ApiError> {
    let mut reader = multipart::Reader::new(boundary);
    let mut total: u64 = 0;
    let mut parts = Parts {
        blobs,
        upload_id,
        files,
        form,
        hasher,
        current: Current::Other,
    };
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| invalid(e.to_string()))?;
        total += chunk.len() as u64;
        pdf::check_total(total)?;
        for event in reader.feed(&chunk).map_err(invalid)? {
            match event {
                multipart::Event::Part(part) => parts.start(part)?,
                multipart::Event::Data(data) => parts.data(&data)?,
                multipart::Event::End => parts.end().await?,
            }
        }
    }
    reader.finish().map_err(invalid)
}

/// The 400 of a body that is not multipart.
fn invalid(e: String) -> ApiError {
    ApiError::bad_request(
        "invalid_multipart",
        format!("the body is not valid multipart/form-data: {e}"),
        None,
    )
}

/// Where the form's parts go as they are read.
struct Parts<'a> {
    blobs: &'a Blobs,
    upload_id: &'a str,
    files: &'a mut Vec<NewFile>,
    form: &'a mut Form,
    hasher: &'a mut BodyHasher,
    current: Current,
}

impl Parts<'_> {
    /// A part begins: a file (one more than the limit is refused), a field of the form's, or
    /// something ignored. What the key's record hashes is the form's content — each part's
    /// name, file name and bytes, in order — not the raw body, whose boundary a client picks
    /// anew for every request, retries included.
    fn start(&mut self, part: multipart::Part) -> Result<(), ApiError> {
        let hasher = &mut *self.hasher;
        hasher.update(b"\0part\0");
        hasher.update(part.name.as_bytes());
        hasher.update(b"\0");
        hasher.update(part.filename.as_deref().unwrap_or("").as_bytes());
        hasher.update(b"\0");
        self.current = match part.name.as_str() {
            pdf::FILES_FIELD => {
                if self.files.len() == pdf::MAX_FILES {
                    return Err(pdf::check_count(pdf::MAX_FILES + 1).unwrap_err());
                }
                Current::File {
                    name: pdf::display_name(part.filename.as_deref().unwrap_or("")),
                    scan: pdf::Scan::default(),
                    chunks: js_sys::Array::new(),
                }
            }
            "mode" | "template" | "model" | "expires_in_s" | "callback_url" => Current::Field {
                name: part.name,
                value: Vec::new(),
            },
            _ => Current::Other,
        };
        Ok(())
    }

    /// A part's next bytes: a file's are scanned and kept in JS memory, a field's kept up to
    /// 100 bytes.
    fn data(&mut self, data: &[u8]) -> Result<(), ApiError> {
        self.hasher.update(data);
        match &mut self.current {
            Current::File { name, scan, chunks } => {
                scan.feed(name, data)?;
                chunks.push(&js_sys::Uint8Array::from(data));
            }
            Current::Field { name, value } => {
                if value.len() + data.len() > 100 {
                    return Err(ApiError::bad_request(
                        "invalid_field",
                        format!("{name} is too long"),
                        Some(name),
                    ));
                }
                value.extend_from_slice(data);
            }
            Current::Other => {}
        }
        Ok(())
    }

    /// A part ends: a file is checked whole and stored in R2, a field's text kept.
    async fn end(&mut self) -> Result<(), ApiError> {
        match std::mem::replace(&mut self.current, Current::Other) {
            Current::File { name, scan, chunks } => self.store_file(name, scan, chunks).await,
            Current::Field { name, value } => {
                let value = String::from_utf8(value).map_err(|_| {
                    ApiError::bad_request(
                        "invalid_field",
                        format!("{name} is not text"),
                        Some(&name),
                    )
                })?;
                let form = &mut *self.form;
                match name.as_str() {
                    "mode" => form.mode = Some(value),
                    "model" => form.model = Some(value),
                    "expires_in_s" => form.expires_in_s = Some(value),
                    "callback_url" => form.callback_url = Some(value),
                    _ => form.template = Some(value),
                }
                Ok(())
            }
            Current::Other => Ok(()),
        }
    }

    /// Stores a complete file in R2 under a new job id.
    async fn store_file(
        &mut self,
        name: String,
        scan: pdf::Scan,
        chunks: js_sys::Array,
    ) -> Result<(), ApiError> {
        let size = scan.len();
        let pages = scan.finish(&name)?;
        let job_id = new_id().map_err(internal)?;
        let key = format!("uploads/{}/{job_id}.pdf", self.upload_id);
        self.blobs
            .put_chunks(&key, &chunks)
            .await
            .map_err(internal)?;
        self.files.push(NewFile {
            job_id,
            index: self.files.len() as u32,
            name,
            size,
            key,
            pages,
            // Set once the form's mode, model and template are known.
            reserved: UsdMicros::ZERO,
        });
        Ok(())
    }
}

/// Reads what the client is still sending, without keeping it, so that it hears the answer
/// rather than a reset connection; a body past the whole limit is cut off.
pub async fn drain(mut stream: axum::body::BodyDataStream) {
    let mut drained: u64 = 0;
    while let Some(Ok(chunk)) = stream.next().await {
        drained += chunk.len() as u64;
        if drained > pdf::MAX_UPLOAD_BYTES {
            break;
        }
    }
}

pub fn internal(e: worker::Error) -> ApiError {
    ApiError::internal(format!("storage error: {e}"))
}
