//! Multi-PDF uploads: `POST /batches` (multipart), `GET /batches`, `GET /batches/:id`,
//! `POST /batches/:id/cancel`. Each file is a `pdf` job on the bulk lane; results are served by
//! `GET /jobs/:id/result`.

use axum::extract::{Path, Query, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures_util::StreamExt;
use pipeline::dto::{BatchAck, BatchList};
use pipeline::error::ApiError;
use pipeline::jobs::{self, Cursor};
use pipeline::multipart;
use pipeline::pdf::{self, Template};
use pipeline::status::Mode;
use serde::Deserialize;
use worker::Bucket;

use crate::anthropic::Anthropic;
use crate::config::{now_ms, DB, RESULTS};
use crate::error::AppError;
use crate::identity::Caller;
use crate::jobs::{live_in_batch, mark_enqueue_failed, next_page};
use crate::queues;
use crate::routes::AppState;
use crate::uploads::{self, NewFile};

/// Deletes the objects written for a refused upload (best effort: each is logged on failure).
async fn clean_up(bucket: &Bucket, keys: &[String]) {
    for key in keys {
        if let Err(e) = bucket.delete(key).await {
            worker::console_error!("cleaning up {key} failed: {e}");
        }
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
    bucket: &Bucket,
    batch_id: &str,
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
                        let job_id = jobs::new_id(queues::random_bytes().map_err(internal)?);
                        let key = format!("uploads/{batch_id}/{job_id}.pdf");
                        let size = bytes.len() as u64;
                        bucket.put(&key, bytes).execute().await.map_err(internal)?;
                        files.push(NewFile {
                            job_id,
                            index: files.len() as u32,
                            name,
                            size,
                            key,
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
    // it), so that the client hears the answer.
    let admitted = match admit(caller, req.headers()) {
        Ok((caller, boundary)) => {
            crate::ops::admit(&state.env, &state.config, caller.user_id.as_str())
                .await
                .map(|()| (caller, boundary))
        }
        Err(e) => Err(e),
    };
    let (caller, boundary) = match admitted {
        Ok(v) => v,
        Err(e) => {
            drain(req.into_body().into_data_stream()).await;
            return Err(e);
        }
    };
    let batch_id = jobs::new_id(queues::random_bytes()?);
    let bucket = state.env.bucket(RESULTS)?;
    let mut files = Vec::new();
    let mut form = Form::default();
    let mut stream = req.into_body().into_data_stream();
    let read = read_files(
        &mut stream,
        &boundary,
        &bucket,
        &batch_id,
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
            clean_up(&bucket, &keys).await;
            drain(stream).await;
            return Err(e.into());
        }
    };
    let db = state.env.d1(DB)?;
    let now = now_ms();
    let written = async {
        let stmts = uploads::insert_stmts(
            &db,
            &batch_id,
            caller.user_id.as_str(),
            mode,
            template,
            model,
            &files,
            now,
        )?;
        db.batch(stmts).await
    }
    .await;
    if let Err(e) = written {
        clean_up(&bucket, &keys).await;
        return Err(e.into());
    }
    let ids: Vec<String> = files.iter().map(|f| f.job_id.clone()).collect();
    let unsent = queues::send_bulk_jobs(&state.env, &state.config, &ids).await;
    for id in &unsent {
        mark_enqueue_failed(&db, id, "the job could not be queued", now_ms()).await?;
    }
    if unsent.len() == ids.len() {
        return Err(ApiError::new(
            503,
            "enqueue_failed",
            format!(
                "the upload {batch_id} was stored but could not be queued; please upload again"
            ),
            None,
        )
        .into());
    }
    let ack = BatchAck {
        total: files.len() as u32,
        poll_url: format!("/batches/{batch_id}"),
        batch_id,
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
    let db = state.env.d1(DB)?;
    let b = own(&db, &id, caller.user_id.as_str()).await?;
    let rows = uploads::files(&db, &b.id).await?;
    Ok(Json(uploads::view(&b, &rows, now_ms())).into_response())
}

async fn own(db: &worker::D1Database, id: &str, user: &str) -> Result<uploads::BatchRow, AppError> {
    let missing = || ApiError::not_found(format!("no upload {id}"));
    if !jobs::is_id(id) {
        return Err(missing().into());
    }
    Ok(uploads::get(db, id, user).await?.ok_or_else(missing)?)
}

#[derive(Debug, Deserialize)]
pub struct ListQuery {
    cursor: Option<String>,
    limit: Option<String>,
}

/// `GET /batches`: the caller's uploads, newest first, a page at a time.
#[worker::send]
pub async fn list(
    State(state): State<AppState>,
    Caller(caller): Caller,
    Query(q): Query<ListQuery>,
) -> Result<Response, AppError> {
    let limit = jobs::page_limit(q.limit.as_deref())?;
    let cursor = q.cursor.as_deref().map(Cursor::decode).transpose()?;
    let db = state.env.d1(DB)?;
    let mut rows = uploads::list(&db, caller.user_id.as_str(), cursor.as_ref(), limit).await?;
    let next_cursor = next_page(&mut rows, limit, |(_, c)| c.clone());
    Ok(Json(BatchList {
        items: rows.into_iter().map(|(s, _)| s).collect(),
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
    let db = state.env.d1(DB)?;
    let b = own(&db, &id, caller.user_id.as_str()).await?;
    let api = Anthropic::new(&state.config);
    for batch in uploads::cancel(&db, &b.id, now_ms()).await? {
        if live_in_batch(&db, &batch).await? == 0 {
            if let Err(e) = api.cancel_batch(&batch).await {
                worker::console_error!(
                    "canceling batch {batch}: {}",
                    pipeline::retry::describe(&e)
                );
            }
        }
    }
    let b = own(&db, &id, caller.user_id.as_str()).await?;
    let rows = uploads::files(&db, &b.id).await?;
    Ok(Json(uploads::view(&b, &rows, now_ms())).into_response())
}
