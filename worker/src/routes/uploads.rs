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

use super::admission::Idem;
use super::common::{next_page, PageQuery};
use super::jobs::cancel_batch_if_empty;
use super::staged::{Committed, Staged};
use crate::config::now_ms;
use crate::error::AppError;
use crate::identity::Caller;
use crate::services::new_id;
use crate::services::AppState;
use crate::store::uploads::{NewFile, NewUpload, UploadRow};

use super::upload_form::{drain, read_files, Form};

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
/// lane in chunks. The stored files are staged ([`Staged`]): a refused request leaves no
/// object and no row behind.
#[worker::send]
pub async fn submit(
    State(state): State<AppState>,
    caller: Result<Caller, AppError>,
    req: Request,
) -> Result<Response, AppError> {
    // Every refusal before the body is read still reads what the client sends (without keeping
    // it), so that the client hears the answer.
    let (caller, boundary, key) = match before_body(&state, caller, req.headers()).await {
        Ok(v) => v,
        Err(e) => {
            drain(req.into_body().into_data_stream()).await;
            return Err(e);
        }
    };
    let upload_id = new_id()?;
    let mut stream = req.into_body().into_data_stream();
    let (staged, mut files, form, hash) =
        match read_checked(&state, &caller, &boundary, &upload_id, &mut stream).await {
            Ok(read) => read,
            Err(e) => {
                drain(stream).await;
                return Err(e);
            }
        };
    let user = caller.user_id.as_str();
    // The same key and body again answers the first upload's acknowledgement, whatever the
    // budget says now (it costs nothing more); the files this request stored go.
    let idem = super::admission::idempotency(&state, user, key, hash, now_ms()).await;
    let (claim, staged) = match staged.or_abandon(idem).await? {
        (Idem::Fresh(claim), s) => (claim, s),
        (Idem::Replay(first), s) => {
            s.abandon().await;
            return acknowledge(&state, user, &first).await;
        }
    };
    let need = reserve_files(&state, &mut files, &form);
    let (_, staged) = staged
        .or_abandon(admit_files(&state, user, files.len(), need).await)
        .await?;
    let upload = Upload {
        id: &upload_id,
        user,
        form: &form,
        files: &files,
        need,
    };
    if let Committed::Replay(first) = commit(&state, staged, &upload, claim.as_ref()).await? {
        return acknowledge(&state, user, &first).await;
    }
    send_files(&state, &upload_id, &files).await
}

/// Reads the body's files into R2 (staged) and checks the form: answers what was staged, the
/// files, the checked form and the hash of the form's content for its `Idempotency-Key` record.
/// Anything refused leaves no object behind.
async fn read_checked<'a>(
    state: &'a AppState,
    caller: &pipeline::identity::Identity,
    boundary: &str,
    upload_id: &str,
    stream: &mut axum::body::BodyDataStream,
) -> Result<(Staged<'a>, Vec<NewFile>, Checked, String), AppError> {
    let (mut files, mut form) = (Vec::new(), Form::default());
    // The key's record hashes the route and the form's content (see `read_files`).
    let mut hasher = BodyHasher::default();
    hasher.update(b"POST /batches\n");
    let parts = (&mut form, &mut hasher);
    let read = read_files(stream, boundary, &state.blobs, upload_id, &mut files, parts).await;
    let mut staged = Staged::new(state);
    staged.hold(files.iter().map(|f| f.key.clone()));
    let checked = match read.and_then(|()| check_form(state, caller, &form, files.len())) {
        Ok(c) => crate::models_watch::admit_job(state, c.model, None)
            .await
            .map(|()| c),
        Err(e) => Err(e.into()),
    };
    let (checked, staged) = staged.or_abandon(checked).await?;
    Ok((staged, files, checked, hasher.finish()))
}

/// An upload admitted: what its rows are written from.
struct Upload<'a> {
    id: &'a str,
    user: &'a str,
    form: &'a Checked,
    files: &'a [NewFile],
    /// The files' worst case, reserved against the caps.
    need: UsdMicros,
}

/// The upload and its jobs in one transaction with the key's claim: a concurrent upload with
/// the same key that committed first makes this one its replay; one that took what was left
/// under a cap makes it a 429. Either way no file of this one stays.
async fn commit(
    state: &AppState,
    staged: Staged<'_>,
    upload: &Upload<'_>,
    claim: Option<&(String, String)>,
) -> Result<Committed, AppError> {
    let now = now_ms();
    let form = upload.form;
    let stmts = state.store.insert_upload(&NewUpload {
        id: upload.id,
        user_id: upload.user,
        mode: form.mode,
        template: form.template,
        model: form.model,
        files: upload.files,
        expires_at: form.expires_in_s.map(|s| now + s as i64 * 1000),
        callback: form.callback.as_ref(),
        now,
    });
    let (stmts, staged) = staged.or_abandon(stmts.map_err(AppError::from)).await?;
    staged
        .commit(
            (upload.user, claim),
            upload.id,
            stmts,
            (now, upload.need, &[]),
        )
        .await
}

/// The checks before the body is read: the caller and the content type ([`admit`]), the
/// `Idempotency-Key`, and a user with nothing left under a cap (the files' own worst case is
/// checked once they are read).
async fn before_body(
    state: &AppState,
    caller: Result<Caller, AppError>,
    headers: &axum::http::HeaderMap,
) -> Result<(pipeline::identity::Identity, String, Option<String>), AppError> {
    let (caller, boundary) = admit(caller, headers)?;
    let key = super::admission::idempotency_key(headers)?;
    super::admission::admit(state, caller.user_id.as_str(), UsdMicros::new(1)).await?;
    Ok((caller, boundary, key))
}

/// A form field as sent, trimmed; an empty one is absent.
fn field(v: &Option<String>) -> Option<&str> {
    v.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

/// What the form said besides its files, checked.
struct Checked {
    mode: Mode,
    template: Template,
    model: &'static str,
    expires_in_s: Option<u64>,
    callback: Option<pipeline::webhooks::Callback>,
}

/// The form's fields checked (400 naming the field), and the number of files.
fn check_form(
    state: &AppState,
    caller: &pipeline::identity::Identity,
    form: &Form,
    files: usize,
) -> Result<Checked, ApiError> {
    pdf::check_count(files)?;
    let mode = match field(&form.mode) {
        None | Some("batch") => Mode::Batch,
        Some("sync") => Mode::Sync,
        Some(_) => {
            let why = "mode must be \"sync\" or \"batch\"";
            return Err(ApiError::bad_request("invalid_field", why, Some("mode")));
        }
    };
    let model = field(&form.model).map(|m| serde_json::Value::String(m.to_owned()));
    let model = pipeline::models::parse_model(model.as_ref(), now_ms())?.id;
    let expires = match field(&form.expires_in_s) {
        None => None,
        Some(n) => Some(n.parse::<u64>().map_err(|_| {
            let why = "expires_in_s must be a whole number";
            ApiError::bad_request("invalid_field", why, Some("expires_in_s"))
        })?),
    };
    Ok(Checked {
        mode,
        template: Template::parse(form.template.as_deref())?,
        model,
        expires_in_s: pipeline::prompt::expires_in_s(expires)?,
        callback: crate::webhooks::callback(state, caller, field(&form.callback_url))?,
    })
}

/// Each file's worst case (what it reserves against the caps), and their sum.
fn reserve_files(state: &AppState, files: &mut [NewFile], form: &Checked) -> UsdMicros {
    let unread = pdf::request(form.model, form.template, String::new());
    for f in files.iter_mut() {
        let pages = Some(f.pages);
        f.reserved = super::admission::worst_case(state, &unread, pages, form.mode, None);
    }
    files.iter().map(|f| f.reserved).sum()
}

/// The per-user limits for `count` new jobs, then the caps for their worst case `need`.
async fn admit_files(
    state: &AppState,
    user: &str,
    count: usize,
    need: UsdMicros,
) -> Result<(), AppError> {
    super::admission::limit(state, user, count as u64).await?;
    super::admission::admit(state, user, need).await
}

/// After the commit: each PDF to the Files API once, now, so that its requests (and the batch
/// lines of hundreds of them) carry a `file_id` instead of its bytes (one that fails goes
/// later); then the jobs to the bulk lane. A job whose send failed is `enqueue_failed`; when
/// none could be sent, a 503.
async fn send_files(
    state: &AppState,
    upload_id: &str,
    files: &[NewFile],
) -> Result<Response, AppError> {
    let uploads: Vec<(String, String, String, u64)> = files
        .iter()
        .map(|f| (f.job_id.clone(), f.key.clone(), f.name.clone(), f.size))
        .collect();
    crate::files::upload_all(state, &uploads).await;
    let ids: Vec<String> = files.iter().map(|f| f.job_id.clone()).collect();
    let unsent = state.lanes.send_many(Lane::Bulk, &ids).await;
    for id in &unsent {
        state
            .store
            .mark_enqueue_failed(id, "the job could not be queued", now_ms())
            .await?;
    }
    if unsent.len() == ids.len() {
        let why = format!(
            "the upload {upload_id} was stored but could not be queued; please upload again"
        );
        return Err(ApiError::new(503, "enqueue_failed", why, None).into());
    }
    let ack = UploadAck {
        total: files.len() as u32,
        poll_url: format!("/batches/{upload_id}"),
        batch_id: upload_id.to_owned(),
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
