//! The Files API: `POST /v1/files`, `GET /v1/files`, `GET /v1/files/{file_id}`,
//! `GET /v1/files/{file_id}/content`, `DELETE /v1/files/{file_id}`, and the files Messages
//! requests reference by `file_id` (`crate::request`).
//!
//! As the Files guide describes it (platform.claude.com/docs/en/build-with-claude/files, read
//! 2026-12-03; out of beta since the 2026-08-19 release notes): no beta header needed; a
//! request that still sends `anthropic-beta: files-api-2025-04-14` gets the beta shapes
//! (`has_more`/`first_id`/`last_id` lists, `before_id`/`after_id` cursors, no `expires_at`, a
//! required part `Content-Type`). Limits: 500 MB per file (413), 1 TB per organization (400),
//! filenames of 1–255 characters without `<>:"|?*\/` or control characters (400), expiry of
//! 3,600 to 7,776,000 seconds. Uploaded files are not downloadable (400). Operations are free.
//! With the `files_api` knob off, the endpoints do not exist (404) and a `file` source is
//! refused as it is where the API lacks it — the base64 fallback's test.

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::anthropic::files::{
    filename_ok, BETA, MAX_EXPIRES_S, MAX_FILE_BYTES, MAX_STORAGE_BYTES, MIN_EXPIRES_S,
};
use pipeline::anthropic::ErrorType;
use pipeline::multipart::{self, Event};
use serde_json::{json, Value};

use crate::auth::check_headers;
use crate::clock::now_ms;
use crate::errors::SimError;
use crate::file_store::{missing, Files, StoredFile};
use crate::state::{Inner, Sim};

/// Whether the request asks for the beta shapes.
fn beta(headers: &HeaderMap) -> bool {
    headers
        .get_all("anthropic-beta")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|b| b.trim() == BETA)
}

/// Headers, then the knob: with the Files API off there is no such route.
fn admit(sim: &Sim, headers: &HeaderMap) -> Result<(), SimError> {
    check_headers(sim, headers)?;
    if !sim.lock().knobs.files_api {
        return Err(SimError::not_found("Not Found"));
    }
    Ok(())
}

/// Counts the call and answers.
fn answer(sim: &Sim, name: &str, result: Result<Response, SimError>) -> Response {
    sim.lock().counted(name, result)
}

/// The state with the files whose metadata outlived its 30 days forgotten, and the time.
fn swept(sim: &Sim) -> (std::sync::MutexGuard<'_, Inner>, i64) {
    let now = now_ms();
    let mut inner = sim.lock();
    inner.files.sweep(now);
    (inner, now)
}

/// The content type of a part sent without one ("the type is detected when omitted").
fn detect(bytes: &[u8]) -> &'static str {
    if bytes.starts_with(b"%PDF-") {
        "application/pdf"
    } else if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        "image/png"
    } else if bytes.starts_with(b"\xff\xd8\xff") {
        "image/jpeg"
    } else if bytes.starts_with(b"GIF8") {
        "image/gif"
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        "image/webp"
    } else if std::str::from_utf8(bytes).is_ok() {
        "text/plain"
    } else {
        "application/octet-stream"
    }
}

fn extension(mime: &str) -> &'static str {
    match mime {
        "application/pdf" => ".pdf",
        "text/plain" => ".txt",
        "image/png" => ".png",
        "image/jpeg" => ".jpg",
        "image/gif" => ".gif",
        "image/webp" => ".webp",
        _ => "",
    }
}

/// The form of an upload: the `file` part and the optional `expires_in_seconds`.
struct Form {
    file: Option<(Option<String>, Option<String>, Vec<u8>)>,
    expires: Option<String>,
}

fn read_form(headers: &HeaderMap, body: &[u8]) -> Result<Form, SimError> {
    let ctype = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let boundary = multipart::boundary(ctype).ok_or_else(|| {
        SimError::invalid("the request must be multipart/form-data with a boundary")
    })?;
    let mut reader = multipart::Reader::new(&boundary);
    let events = reader
        .feed(body)
        .map_err(|e| SimError::invalid(format!("malformed multipart body: {e}")))?;
    if !reader.is_done() {
        return Err(SimError::invalid(
            "malformed multipart body: no closing boundary",
        ));
    }
    let mut form = Form {
        file: None,
        expires: None,
    };
    let mut current: Option<(multipart::Part, Vec<u8>)> = None;
    for e in events {
        match e {
            Event::Part(p) => current = Some((p, Vec::new())),
            Event::Data(d) => {
                if let Some((_, buf)) = current.as_mut() {
                    buf.extend_from_slice(&d);
                }
            }
            Event::End => {
                if let Some((p, buf)) = current.take() {
                    match p.name.as_str() {
                        "file" => form.file = Some((p.filename, p.content_type, buf)),
                        "expires_in_seconds" => {
                            form.expires = Some(String::from_utf8_lossy(&buf).trim().to_owned())
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    Ok(form)
}

/// `POST /v1/files`.
pub async fn upload(State(sim): State<Sim>, headers: HeaderMap, body: Bytes) -> Response {
    let result = admit(&sim, &headers).and_then(|()| store(&sim, &headers, &body));
    answer(&sim, "files.upload", result)
}

fn store(sim: &Sim, headers: &HeaderMap, body: &[u8]) -> Result<Response, SimError> {
    let too_large = || SimError::new(ErrorType::RequestTooLarge, "File exceeds the 500 MB limit");
    if body.len() as u64 > MAX_FILE_BYTES + 64 * 1024 {
        return Err(too_large());
    }
    let beta = beta(headers);
    let form = read_form(headers, body)?;
    let (filename, ctype, bytes) = form
        .file
        .ok_or_else(|| SimError::invalid("file: Field required"))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large());
    }
    let expires_in = match form.expires.as_deref() {
        None | Some("") => None,
        Some(s) => Some(
            s.parse::<u64>()
                .ok()
                .filter(|n| (MIN_EXPIRES_S..=MAX_EXPIRES_S).contains(n))
                .ok_or_else(|| {
                    SimError::invalid(
                        "expires_in_seconds: Must be between 3600 (one hour) and 7776000 \
                         (ninety days).",
                    )
                })?,
        ),
    };
    let mime = match ctype.as_deref().map(|c| {
        c.split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    }) {
        Some(c) if !c.is_empty() => c,
        _ if beta => {
            return Err(SimError::invalid(
                "file: the part's Content-Type is required",
            ))
        }
        _ => detect(&bytes).to_owned(),
    };
    // "Only the final path component of the part's `filename` is kept; an absent or empty
    // `filename` is replaced with `unnamed` plus the extension for the file's stored
    // `mime_type`" (platform.claude.com/docs/en/api/files).
    let last = filename
        .as_deref()
        .unwrap_or_default()
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or_default()
        .to_owned();
    let filename = if last.is_empty() {
        format!("unnamed{}", extension(&mime))
    } else {
        last
    };
    if !filename_ok(&filename) {
        return Err(SimError::invalid(
            "Invalid filename: a filename must be 1-255 characters and contain none of \
             < > : \" | ? * \\ / or control characters",
        ));
    }
    let (mut inner, now) = swept(sim);
    let limit = inner.knobs.files_storage_bytes.unwrap_or(MAX_STORAGE_BYTES);
    if inner.files.stored_bytes(now) + bytes.len() as u64 > limit {
        return Err(SimError::invalid(
            "Your organization has reached the 1 TB storage limit",
        ));
    }
    let expires_at = expires_in.map(|s| now + s as i64 * 1000);
    let id = inner.files.add(filename, mime, &bytes, now, expires_at);
    inner.stats.files_uploaded += 1;
    let view = inner.files.by_id[&id].view(beta);
    Ok(Json(view).into_response())
}

/// `GET /v1/files`: newest first; `limit` 1–1000 (20), `page` cursors or up to 100 `ids[]`
/// (current shape), `before_id`/`after_id` (beta shape only: a 400 without the header).
pub async fn list(State(sim): State<Sim>, headers: HeaderMap, RawQuery(q): RawQuery) -> Response {
    let result = admit(&sim, &headers).and_then(|()| page(&sim, &headers, q.as_deref()));
    answer(&sim, "files.list", result)
}

fn page(sim: &Sim, headers: &HeaderMap, query: Option<&str>) -> Result<Response, SimError> {
    let beta = beta(headers);
    let mut limit = None;
    let mut page = None;
    let mut ids = Vec::new();
    let (mut before, mut after) = (None, None);
    for (k, v) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        match k.as_ref() {
            "limit" => {
                limit = Some(
                    v.parse::<usize>()
                        .ok()
                        .filter(|n| (1..=1000).contains(n))
                        .ok_or_else(|| {
                            SimError::invalid("limit: Input should be between 1 and 1000")
                        })?,
                )
            }
            "page" => page = Some(v.into_owned()),
            "ids[]" => ids.push(v.into_owned()),
            "before_id" => before = Some(v.into_owned()),
            "after_id" => after = Some(v.into_owned()),
            _ => {}
        }
    }
    if !beta && (before.is_some() || after.is_some()) {
        return Err(SimError::invalid(
            "before_id and after_id are not supported: use page (the next_page of the previous \
             answer)",
        ));
    }
    if !ids.is_empty() && (page.is_some() || limit.is_some()) {
        return Err(SimError::invalid(
            "ids[] cannot be combined with page or limit",
        ));
    }
    if ids.len() > 100 {
        return Err(SimError::invalid("ids[]: at most 100 ids"));
    }
    let (inner, _) = swept(sim);
    let mut newest: Vec<&StoredFile> = inner.files.by_id.values().collect();
    newest.sort_by_key(|f| std::cmp::Reverse(f.seq));
    if !ids.is_empty() {
        // "any ID that does not resolve to a file in your workspace is silently omitted".
        let data: Vec<Value> = newest
            .iter()
            .filter(|f| ids.contains(&f.id))
            .map(|f| f.view(beta))
            .collect();
        return Ok(Json(json!({"data": data, "next_page": null})).into_response());
    }
    let limit = limit.unwrap_or(20);
    let position = |id: &str| {
        newest
            .iter()
            .position(|f| f.id == id)
            .ok_or_else(|| SimError::invalid(format!("no file {id} to page from")))
    };
    let start = match (&page, &after, &before) {
        (Some(p), _, _) => {
            let id = p
                .strip_prefix("page_")
                .ok_or_else(|| SimError::invalid("page: not a page cursor"))?;
            position(id)? + 1
        }
        (None, Some(a), _) => position(a)? + 1,
        (None, None, Some(b)) => position(b)?.saturating_sub(limit),
        (None, None, None) => 0,
    };
    let end = match (&page, &after, &before) {
        (None, None, Some(b)) => position(b)?,
        _ => (start + limit).min(newest.len()),
    };
    let slice = &newest[start.min(end)..end];
    let more = end < newest.len();
    let data: Vec<Value> = slice.iter().map(|f| f.view(beta)).collect();
    let body = if beta {
        json!({
            "data": data,
            "has_more": if before.is_some() { start > 0 } else { more },
            "first_id": slice.first().map(|f| f.id.clone()),
            "last_id": slice.last().map(|f| f.id.clone()),
        })
    } else {
        json!({
            "data": data,
            "next_page": if more { slice.last().map(|f| format!("page_{}", f.id)) } else { None },
        })
    };
    Ok(Json(body).into_response())
}

fn found<'a>(files: &'a Files, id: &str) -> Result<&'a StoredFile, SimError> {
    files.by_id.get(id).ok_or_else(|| missing(id))
}

/// `GET /v1/files/{file_id}`.
pub async fn retrieve(
    State(sim): State<Sim>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let result = admit(&sim, &headers).and_then(|()| {
        let (inner, _) = swept(&sim);
        found(&inner.files, &id).map(|f| Json(f.view(beta(&headers))).into_response())
    });
    answer(&sim, "files.retrieve", result)
}

/// `GET /v1/files/{file_id}/content`: "Downloading a file you uploaded returns a 400 error";
/// an expired file's content is a 404.
pub async fn content(
    State(sim): State<Sim>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let result = admit(&sim, &headers).and_then(|()| {
        let (inner, now) = swept(&sim);
        if found(&inner.files, &id)?.expired(now) {
            return Err(missing(&id));
        }
        Err::<Response, _>(SimError::invalid(format!(
            "File `{id}` is not downloadable: only files created by skills or the code \
             execution tool can be downloaded"
        )))
    });
    answer(&sim, "files.download", result)
}

/// `DELETE /v1/files/{file_id}` → `{"id": …, "type": "file_deleted"}`.
pub async fn delete(
    State(sim): State<Sim>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let result = admit(&sim, &headers).and_then(|()| {
        let (mut inner, _) = swept(&sim);
        found(&inner.files, &id)?;
        inner.files.by_id.remove(&id);
        inner.stats.files_deleted += 1;
        Ok(Json(json!({"id": id, "type": "file_deleted"})).into_response())
    });
    answer(&sim, "files.delete", result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_are_detected_when_the_part_has_none() {
        assert_eq!(detect(b"%PDF-1.7 ..."), "application/pdf");
        assert_eq!(detect(b"\x89PNG\r\n\x1a\nrest"), "image/png");
        assert_eq!(detect(b"plain words"), "text/plain");
        assert_eq!(
            detect(&[0xff, 0xfe, 0x00, 0x80]),
            "application/octet-stream"
        );
    }
}
