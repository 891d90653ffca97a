//! Multi-PDF uploads, at the contract's public paths: `POST /batches` (multipart), `GET
//! /batches`, `GET /batches/:id`, `POST /batches/:id/cancel`. Each file is a `pdf` job on the
//! bulk lane; results are served by `GET /jobs/:id/result`.

use axum::extract::{Path, Query, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::dto::{UploadAck, UploadList};
use pipeline::error::ApiError;
use pipeline::jobs::Cursor;
use pipeline::money::UsdMicros;
use pipeline::multipart;
use pipeline::pdf::{self, Template};
use pipeline::prompt::BodyHasher;
use pipeline::status::{Lane, Mode};

use super::admission::{commit_job, Idem};
use super::common::{next_page, PageQuery};
use super::jobs::cancel_batch_if_empty;
use crate::config::now_ms;
use crate::error::AppError;
use crate::identity::Caller;
use crate::services::new_id;
use crate::services::AppState;
use crate::store::uploads::{NewUpload, UploadRow};

use super::upload_form::{clean_up, drain, read_files, Form};

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
/// jobs in one `db.batch()`, then the PDFs to the Files API, then sends the jobs to the bulk
/// lane in chunks. A refused request
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
        Ok((caller, boundary)) => match super::admission::idempotency_key(req.headers()) {
            Ok(key) => super::admission::admit(&state, caller.user_id.as_str(), UsdMicros::new(1))
                .await
                .map(|()| (caller, boundary, key)),
            Err(e) => Err(e),
        },
        Err(e) => Err(e),
    };
    let (caller, boundary, key) = match admitted {
        Ok(v) => v,
        Err(e) => {
            drain(req.into_body().into_data_stream()).await;
            return Err(e);
        }
    };
    let upload_id = new_id()?;
    let mut files = Vec::new();
    let mut form = Form::default();
    // The key's record hashes the route and the form's content (see `read_files`).
    let mut hasher = BodyHasher::default();
    hasher.update(b"POST /batches\n");
    let mut stream = req.into_body().into_data_stream();
    let read = read_files(
        &mut stream,
        &boundary,
        &state.blobs,
        &upload_id,
        &mut files,
        (&mut form, &mut hasher),
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
        let expires = match form.expires_in_s.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(n) => Some(n.parse::<u64>().map_err(|_| {
                ApiError::bad_request(
                    "invalid_field",
                    "expires_in_s must be a whole number",
                    Some("expires_in_s"),
                )
            })?),
        };
        let expires = pipeline::prompt::expires_in_s(expires)?;
        let callback = crate::webhooks::callback(
            &state,
            &caller,
            form.callback_url
                .as_deref()
                .map(str::trim)
                .filter(|u| !u.is_empty()),
        )?;
        Ok((
            mode,
            Template::parse(form.template.as_deref())?,
            model,
            (expires, callback),
        ))
    });
    let keys: Vec<String> = files.iter().map(|f| f.key.clone()).collect();
    let (mode, template, model, (expires_in_s, callback)) = match checked {
        Ok(v) => v,
        Err(e) => {
            clean_up(&state.blobs, &keys).await;
            drain(stream).await;
            return Err(e.into());
        }
    };
    if let Err(e) = crate::models_watch::admit_job(&state, model, None).await {
        clean_up(&state.blobs, &keys).await;
        drain(stream).await;
        return Err(e);
    }
    let user = caller.user_id.as_str();
    // The same key and body again answers the first upload's acknowledgement, whatever the
    // budget says now (it costs nothing more); the files this request stored go.
    let idem = super::admission::idempotency(&state, user, key, hasher.finish(), now_ms()).await;
    let claim = match idem {
        Ok(Idem::Fresh(claim)) => claim,
        Ok(Idem::Replay(first)) => {
            clean_up(&state.blobs, &keys).await;
            return acknowledge(&state, user, &first).await;
        }
        Err(e) => {
            clean_up(&state.blobs, &keys).await;
            return Err(e);
        }
    };
    let unread = pdf::request(model, template, String::new());
    for f in files.iter_mut() {
        f.reserved = super::admission::worst_case(&state, &unread, Some(f.pages), mode, None);
    }
    let need: UsdMicros = files.iter().map(|f| f.reserved).sum();
    let admitted = match super::admission::limit(&state, user, files.len() as u64).await {
        Ok(()) => super::admission::admit(&state, user, need).await,
        Err(e) => Err(e),
    };
    if let Err(e) = admitted {
        clean_up(&state.blobs, &keys).await;
        return Err(e);
    }
    let now = now_ms();
    let stmts = state.store.insert_upload(&NewUpload {
        id: &upload_id,
        user_id: caller.user_id.as_str(),
        mode,
        template,
        model,
        files: &files,
        expires_at: expires_in_s.map(|s| now + s as i64 * 1000),
        callback: callback.as_ref(),
        now,
    })?;
    // One transaction with the key's claim: a concurrent upload with the same key that
    // committed first makes this one its replay; one that took what was left under a cap makes
    // it a 429. Either way no file of this one stays.
    match commit_job(
        &state,
        user,
        claim.as_ref(),
        &upload_id,
        stmts,
        (now, need, &[]),
    )
    .await
    {
        Ok(None) => {}
        Ok(Some(first)) => {
            clean_up(&state.blobs, &keys).await;
            return acknowledge(&state, user, &first).await;
        }
        Err(e) => {
            clean_up(&state.blobs, &keys).await;
            return Err(e);
        }
    }
    // Each PDF goes to the Files API once, now, so that its requests (and the batch lines of
    // hundreds of them) carry a `file_id` instead of its bytes; one that fails goes later.
    let uploads: Vec<(String, String, String, u64)> = files
        .iter()
        .map(|f| (f.job_id.clone(), f.key.clone(), f.name.clone(), f.size))
        .collect();
    crate::files::upload_all(&state, &uploads).await;
    let ids: Vec<String> = files.iter().map(|f| f.job_id.clone()).collect();
    let unsent = state.lanes.send_many(Lane::Bulk, &ids).await;
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

/// The acknowledgement of the upload `id` (a replay's: the first request's upload).
async fn acknowledge(state: &AppState, user: &str, id: &str) -> Result<Response, AppError> {
    let upload = own(state, id, user).await?;
    let ack = UploadAck {
        total: upload.total.max(0) as u32,
        poll_url: format!("/batches/{}", upload.id),
        batch_id: upload.id,
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
