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
    let bad = |e: String| {
        ApiError::bad_request(
            "invalid_multipart",
            format!("the body is not valid multipart/form-data: {e}"),
            None,
        )
    };
    let mut reader = multipart::Reader::new(boundary);
    let mut total: u64 = 0;
    let mut current = Current::Other;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| bad(e.to_string()))?;
        total += chunk.len() as u64;
        pdf::check_total(total)?;
        for event in reader.feed(&chunk).map_err(bad)? {
            match event {
                multipart::Event::Part(part) => {
                    // What the key's record hashes is the form's content — each part's name,
                    // file name and bytes, in order — not the raw body, whose boundary a client
                    // picks anew for every request, retries included.
                    hasher.update(b"\0part\0");
                    hasher.update(part.name.as_bytes());
                    hasher.update(b"\0");
                    hasher.update(part.filename.as_deref().unwrap_or("").as_bytes());
                    hasher.update(b"\0");
                    current = match part.name.as_str() {
                        pdf::FILES_FIELD => {
                            if files.len() == pdf::MAX_FILES {
                                return Err(pdf::check_count(pdf::MAX_FILES + 1).unwrap_err());
                            }
                            Current::File {
                                name: pdf::display_name(part.filename.as_deref().unwrap_or("")),
                                scan: pdf::Scan::default(),
                                chunks: js_sys::Array::new(),
                            }
                        }
                        "mode" | "template" | "model" | "expires_in_s" | "callback_url" => {
                            Current::Field {
                                name: part.name,
                                value: Vec::new(),
                            }
                        }
                        _ => Current::Other,
                    };
                }
                multipart::Event::Data(data) => {
                    hasher.update(&data);
                    match &mut current {
                        Current::File { name, scan, chunks } => {
                            scan.feed(name, &data)?;
                            chunks.push(&js_sys::Uint8Array::from(&data[..]));
                        }
                        Current::Field { name, value } => {
                            if value.len() + data.len() > 100 {
                                return Err(ApiError::bad_request(
                                    "invalid_field",
                                    format!("{name} is too long"),
                                    Some(name),
                                ));
                            }
                            value.extend_from_slice(&data);
                        }
                        Current::Other => {}
                    }
                }
                multipart::Event::End => match std::mem::replace(&mut current, Current::Other) {
                    Current::File { name, scan, chunks } => {
                        let size = scan.len();
                        let pages = scan.finish(&name)?;
                        let job_id = new_id().map_err(internal)?;
                        let key = format!("uploads/{upload_id}/{job_id}.pdf");
                        blobs.put_chunks(&key, &chunks).await.map_err(internal)?;
                        files.push(NewFile {
                            job_id,
                            index: files.len() as u32,
                            name,
                            size,
                            key,
                            pages,
                            // Set once the form's mode, model and template are known.
                            reserved: UsdMicros::ZERO,
                        });
                    }
                    Current::Field { name, value } => {
                        let value = String::from_utf8(value).map_err(|_| {
                            ApiError::bad_request(
                                "invalid_field",
                                format!("{name} is not text"),
                                Some(&name),
                            )
                        })?;
                        match name.as_str() {
                            "mode" => form.mode = Some(value),
                            "model" => form.model = Some(value),
                            "expires_in_s" => form.expires_in_s = Some(value),
                            "callback_url" => form.callback_url = Some(value),
                            _ => form.template = Some(value),
                        }
                    }
                    Current::Other => {}
                },
            }
        }
    }
    reader.finish().map_err(bad)
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
