//! Multi-PDF uploads, at the contract's public paths: `POST /batches` (multipart), `GET
//! /batches`, `GET /batches/:id`, `POST /batches/:id/cancel`. Each file is a `pdf` job on the
//! bulk lane; results are served by `GET /jobs/:id/result`.

use axum::extract::{Path, Query, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures_util::StreamExt;
use pipeline::dto::{UploadAck, UploadList};
use pipeline::error::ApiError;
use pipeline::jobs::Cursor;
use pipeline::money::UsdMicros;
use pipeline::multipart;
use pipeline::pdf::{self, Template};
use pipeline::status::Mode;

use crate::blobs::Blobs;
use crate::config::now_ms;
use crate::error::AppError;
use crate::identity::Caller;
use crate::routes::jobs::cancel_batch_if_empty;
use crate::routes::{next_page, AppState, PageQuery};
use crate::services::new_id;
use crate::store::uploads::{NewFile, NewUpload, UploadRow};

/// Deletes the objects written for a refused upload (best effort: each is logged on failure).
async fn clean_up(blobs: &Blobs, keys: &[String]) {
    for key in keys {
        blobs.delete(key).await;
    }
}

/// What the form said besides its files.
#[derive(Default)]
struct Form {
    mode: Option<String>,
    template: Option<String>,
    model: Option<String>,
}

/// The part being read.
enum Current {
    File { name: String, bytes: Vec<u8> },
    Field { name: String, value: Vec<u8> },
    Other,
}

/// Reads the multipart body as it streams in (`pipeline::multipart`), checking each file as its
/// bytes arrive and storing it in R2 under an id (never its name) once complete. On any error the
/// caller deletes what was stored.
async fn read_files(
    stream: &mut axum::body::BodyDataStream,
    boundary: &str,
    blobs: &Blobs,
    upload_id: &str,
    files: &mut Vec<NewFile>,
    form: &mut Form,
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
                    current = match part.name.as_str() {
                        pdf::FILES_FIELD => {
                            if files.len() == pdf::MAX_FILES {
                                return Err(pdf::check_count(pdf::MAX_FILES + 1).unwrap_err());
                            }
                            Current::File {
                                name: pdf::display_name(part.filename.as_deref().unwrap_or("")),
                                bytes: Vec::new(),
                            }
                        }
                        "mode" | "template" | "model" => Current::Field {
                            name: part.name,
                            value: Vec::new(),
                        },
                        _ => Current::Other,
                    };
                }
                multipart::Event::Data(data) => match &mut current {
                    Current::File { name, bytes } => {
                        pdf::check_size(name, (bytes.len() + data.len()) as u64)?;
                        bytes.extend_from_slice(&data);
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
                },
                multipart::Event::End => match std::mem::replace(&mut current, Current::Other) {
                    Current::File { name, bytes } => {
                        pdf::check_file(&name, &bytes)?;
                        let job_id = new_id().map_err(internal)?;
                        let key = format!("uploads/{upload_id}/{job_id}.pdf");
                        let size = bytes.len() as u64;
                        let pages = pdf::pages_at_most(&bytes);
                        blobs.put(&key, bytes).await.map_err(internal)?;
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
async fn drain(mut stream: axum::body::BodyDataStream) {
    let mut drained: u64 = 0;
    while let Some(Ok(chunk)) = stream.next().await {
        drained += chunk.len() as u64;
        if drained > pdf::MAX_UPLOAD_BYTES {
            break;
        }
    }
}

fn internal(e: worker::Error) -> ApiError {
    ApiError::internal(format!("storage error: {e}"))
}

/// The checks that need no body: the caller, a multipart content type with a boundary, a
/// declared length within the limit.
fn admit(
    caller: Result<Caller, AppError>,
    headers: &axum::http::HeaderMap,
) -> Result<(pipeline::identity::Identity, String), AppError> {
    let Caller(caller) = caller?;
    // The boundary is case-sensitive: keep the header as sent.
    let ctype = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if !ctype
        .to_ascii_lowercase()
        .starts_with("multipart/form-data")
    {
        return Err(ApiError::new(
            415,
            "unsupported_media_type",
            "send the files as multipart/form-data, in fields named \"files\"",
            None,
        )
        .into());
    }
    if let Some(n) = headers
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
    {
        pdf::check_total(n)?;
    }
    let boundary = multipart::boundary(ctype).ok_or_else(|| {
        ApiError::bad_request(
            "invalid_multipart",
            "the multipart/form-data content type has no boundary",
            None,
        )
    })?;
    Ok((caller, boundary))
}

/// `POST /batches`: validates and stores every file (R2, under ids), then the upload and its
/// jobs in one `db.batch()`, then sends the jobs to the bulk lane in chunks. A refused request
/// leaves no object and no row behind.
#[worker::send]
pub async fn submit(
    State(state): State<AppState>,
    caller: Result<Caller, AppError>,
    req: Request,
) -> Result<Response, AppError> {
    // Every refusal before the body is read still reads what the client sends (without keeping
    // it), so that the client hears the answer. A user with nothing left under a cap is refused
    // before the files are stored; the files' own worst case is checked once they are read.
    let admitted = match admit(caller, req.headers()) {
        Ok((caller, boundary)) => crate::ops::admit(&state, caller.user_id.as_str(), UsdMicros(1))
            .await
            .map(|()| (caller, boundary)),
        Err(e) => Err(e),
    };
    let (caller, boundary) = match admitted {
        Ok(v) => v,
        Err(e) => {
            drain(req.into_body().into_data_stream()).await;
            return Err(e);
        }
    };
    let upload_id = new_id()?;
    let mut files = Vec::new();
    let mut form = Form::default();
    let mut stream = req.into_body().into_data_stream();
    let read = read_files(
        &mut stream,
        &boundary,
        &state.blobs,
        &upload_id,
        &mut files,
        &mut form,
    )
    .await;
    let checked = read.and_then(|()| {
        pdf::check_count(files.len())?;
        let mode = match form.mode.as_deref().map(str::trim) {
            None | Some("") | Some("batch") => Mode::Batch,
            Some("sync") => Mode::Sync,
            Some(_) => {
                return Err(ApiError::bad_request(
                    "invalid_field",
                    "mode must be \"sync\" or \"batch\"",
                    Some("mode"),
                ))
            }
        };
        let model = form
            .model
            .as_deref()
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .map(|m| serde_json::Value::String(m.to_owned()));
        let model = pipeline::models::parse_model(model.as_ref(), now_ms())?.id;
        Ok((mode, Template::parse(form.template.as_deref())?, model))
    });
    let keys: Vec<String> = files.iter().map(|f| f.key.clone()).collect();
    let (mode, template, model) = match checked {
        Ok(v) => v,
        Err(e) => {
            clean_up(&state.blobs, &keys).await;
            drain(stream).await;
            return Err(e.into());
        }
    };
    let user = caller.user_id.as_str();
    let unread = pdf::request(model, template, String::new());
    for f in files.iter_mut() {
        f.reserved = crate::ops::worst_case(&state, &unread, Some(f.pages), mode);
    }
    let need: UsdMicros = files.iter().map(|f| f.reserved).sum();
    let admitted = match crate::ops::limit(&state, user, files.len() as u64).await {
        Ok(()) => crate::ops::admit(&state, user, need).await,
        Err(e) => Err(e),
    };
    if let Err(e) = admitted {
        clean_up(&state.blobs, &keys).await;
        return Err(e);
    }
    let now = now_ms();
    let written = async {
        let stmts = state.store.insert_upload(&NewUpload {
            id: &upload_id,
            user_id: caller.user_id.as_str(),
            mode,
            template,
            model,
            files: &files,
            now,
        })?;
        state.store.batch(stmts).await
    }
    .await;
    if let Err(e) = written {
        clean_up(&state.blobs, &keys).await;
        if crate::store::is_budget_abort(&e) {
            // A concurrent request took what was left under a cap: no file of this one stays.
            return Err(crate::ops::refused(&state, user, need).await);
        }
        return Err(e.into());
    }
    let ids: Vec<String> = files.iter().map(|f| f.job_id.clone()).collect();
    let unsent = state.lanes.send_bulk(&ids).await;
    for id in &unsent {
        state
            .store
            .mark_enqueue_failed(id, "the job could not be queued", now_ms())
            .await?;
    }
    if unsent.len() == ids.len() {
        return Err(ApiError::new(
            503,
            "enqueue_failed",
            format!(
                "the upload {upload_id} was stored but could not be queued; please upload again"
            ),
            None,
        )
        .into());
    }
    let ack = UploadAck {
        total: files.len() as u32,
        poll_url: format!("/batches/{upload_id}"),
        batch_id: upload_id,
    };
    Ok((StatusCode::ACCEPTED, Json(ack)).into_response())
}

/// `GET /batches/:id`: totals by status, every file with its status, tokens, cost and
/// extraction, and the elapsed time. Someone else's upload is a 404.
#[worker::send]
pub async fn get(
    State(state): State<AppState>,
    Caller(caller): Caller,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    let upload = own(&state, &id, caller.user_id.as_str()).await?;
    let rows = state.store.upload_files(&upload.id).await?;
    Ok(Json(upload.view(&rows, now_ms())).into_response())
}

async fn own(state: &AppState, id: &str, user: &str) -> Result<UploadRow, AppError> {
    let missing = || ApiError::not_found(format!("no upload {id}"));
    let id = pipeline::jobs::JobId::parse(id).ok_or_else(missing)?;
    Ok(state
        .store
        .upload_for_user(id.as_str(), user)
        .await?
        .ok_or_else(missing)?)
}

/// `GET /batches`: the caller's uploads, newest first, a page at a time.
#[worker::send]
pub async fn list(
    State(state): State<AppState>,
    Caller(caller): Caller,
    Query(q): Query<PageQuery>,
) -> Result<Response, AppError> {
    let (limit, cursor) = q.parse()?;
    let mut rows = state
        .store
        .list_uploads(caller.user_id.as_str(), cursor.as_ref(), limit)
        .await?;
    let next_cursor = next_page(&mut rows, limit, |s| Cursor {
        created_at: s.created_at,
        id: s.id.clone(),
    });
    Ok(Json(UploadList {
        items: rows,
        next_cursor,
    })
    .into_response())
}

/// `POST /batches/:id/cancel`: every file that has not run is canceled; Anthropic batches left
/// without live jobs are canceled too. Files already done keep their results.
#[worker::send]
pub async fn cancel(
    State(state): State<AppState>,
    Caller(caller): Caller,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    let upload = own(&state, &id, caller.user_id.as_str()).await?;
    for batch in state.store.cancel_upload(&upload.id, now_ms()).await? {
        cancel_batch_if_empty(&state, &batch).await?;
    }
    let upload = own(&state, &id, caller.user_id.as_str()).await?;
    let rows = state.store.upload_files(&upload.id).await?;
    Ok(Json(upload.view(&rows, now_ms())).into_response())
}
