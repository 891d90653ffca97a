//! A producer's admission: its body checked, its `Idempotency-Key` looked up and claimed in the
//! job's own transaction, the caps and per-user limits applied — the steps every producer takes
//! in the contract's order, before anything is stored.

use axum::http::HeaderMap;
use pipeline::error::ApiError;
use pipeline::money::UsdMicros;
use pipeline::prompt::{Idempotency, StoredKey};

use crate::error::AppError;
use crate::services::AppState;
use crate::store::{is_budget_abort, is_tag_cap_abort, Statement};

/// What `Idempotency-Key` makes of a producer's request.
pub enum Idem {
    /// Create the job; claim `(key, body hash)` with it when a key was sent.
    Fresh(Option<(String, String)>),
    /// The same key and body again: answer the acknowledgement of this job.
    Replay(String),
}

/// A JSON producer's admission, in the contract's order: the body is JSON within `max` bytes
/// and its `Idempotency-Key` well-formed; `parse` accepts it; the key is looked up — its record
/// hashes `route` (empty for `/jobs`, whose records predate the prefix) followed by the body, so
/// a key used on one producer never replays on another; then a new job's worst case (`need`)
/// must fit under the caller's caps (a replay is answered whatever the budget says: it costs
/// nothing more). Answers the input, what the key makes of it, and the worst case to reserve.
pub async fn accept<T>(
    state: &AppState,
    user: &str,
    headers: &HeaderMap,
    body: &[u8],
    (route, max): (&str, usize),
    parse: impl FnOnce(&[u8], i64) -> Result<T, ApiError>,
    need: impl FnOnce(&T) -> UsdMicros,
) -> Result<(T, Idem, UsdMicros), AppError> {
    let key = producer_body(headers, body, max)?;
    let input = parse(body, crate::config::now_ms())?;
    let hash = pipeline::prompt::body_hash(&[route.as_bytes(), body].concat());
    let idem = idempotency(state, user, key, hash, crate::config::now_ms()).await?;
    let need = need(&input);
    if matches!(idem, Idem::Fresh(_)) {
        crate::ops::limit(state, user, 1).await?;
        crate::ops::admit(state, user, need).await?;
    }
    Ok((input, idem, need))
}

/// A producer's checks before it reads the body: JSON within `max` bytes, and its
/// `Idempotency-Key` (if any) well-formed.
fn producer_body(headers: &HeaderMap, body: &[u8], max: usize) -> Result<Option<String>, AppError> {
    json_body(headers, body, max)?;
    idempotency_key(headers)
}

/// The request's `Idempotency-Key`, checked (400 when malformed); absent is fine.
pub fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, AppError> {
    Ok(pipeline::prompt::idempotency_key(
        headers
            .get("idempotency-key")
            .map(|v| v.to_str().unwrap_or("\u{0}")),
    )?)
}

/// Looks the key up for this user: a record holding it with the same body hash replays its
/// job, one with another body is a 422, none (or one that no longer holds the key) lets the job
/// be created — and [`commit_job`] then claims the key atomically with it.
pub async fn idempotency(
    state: &AppState,
    user: &str,
    key: Option<String>,
    hash: String,
    now: i64,
) -> Result<Idem, AppError> {
    let Some(key) = key else {
        return Ok(Idem::Fresh(None));
    };
    Ok(match lookup(state, user, &key, &hash, now).await? {
        Idempotency::Replay { job_id } => Idem::Replay(job_id),
        Idempotency::Conflict => return Err(key_reused()),
        Idempotency::Fresh => Idem::Fresh(Some((key, hash))),
    })
}

async fn lookup(
    state: &AppState,
    user: &str,
    key: &str,
    hash: &str,
    now: i64,
) -> Result<Idempotency, AppError> {
    let stored = state.store.idempotency_record(user, key).await?;
    let stored = stored.as_ref().map(|r| StoredKey {
        body_hash: &r.body_hash,
        job_id: &r.job_id,
        created_at: r.created_at,
        never_queued: r.never_queued,
    });
    Ok(pipeline::prompt::idempotency(stored, hash, now))
}

fn key_reused() -> AppError {
    ApiError::new(
        422,
        "idempotency_key_reused",
        "this Idempotency-Key was used with a different body",
        Some("Idempotency-Key"),
    )
    .into()
}

/// Commits a new job's statements in one transaction, the claim of its `Idempotency-Key` first
/// when the request sent one. Answers `None` when the job was created. When the claim lost — a
/// concurrent request with the same key committed first — nothing of this request was stored,
/// and the answer is the winner's job (`Some`, to acknowledge as this request's), or a 422 when
/// the winner sent another body. When the database refused the job's reservation of `need`
/// (a concurrent request took what was left under a cap — the user's, or one of its `tags`'),
/// nothing was stored either: a 429.
pub async fn commit_job(
    state: &AppState,
    user: &str,
    claim: Option<&(String, String)>,
    id: &str,
    statements: Vec<Statement>,
    (now, need, tags): (i64, UsdMicros, &[String]),
) -> Result<Option<String>, AppError> {
    let Some((key, hash)) = claim else {
        return match state.store.batch(statements).await {
            Ok(_) => Ok(None),
            Err(e) if is_budget_abort(&e) => Err(crate::ops::refused(state, user, need).await),
            Err(e) if is_tag_cap_abort(&e) => Err(crate::ops::tag_refused(state, tags, need).await),
            Err(e) => Err(e.into()),
        };
    };
    let mut all = Vec::from(state.store.claim_idempotency(user, key, hash, id, now)?);
    all.extend(statements);
    let Err(e) = state.store.batch(all).await else {
        return Ok(None);
    };
    match lookup(state, user, key, hash, now).await? {
        Idempotency::Replay { job_id } if job_id != id => Ok(Some(job_id)),
        Idempotency::Conflict => Err(key_reused()),
        _ if is_budget_abort(&e) => Err(crate::ops::refused(state, user, need).await),
        _ if is_tag_cap_abort(&e) => Err(crate::ops::tag_refused(state, tags, need).await),
        _ => Err(e.into()),
    }
}

/// A body we parse: JSON by its content type (415 otherwise) and at most `max` bytes (413).
pub fn json_body(headers: &HeaderMap, body: &[u8], max: usize) -> Result<(), AppError> {
    require_json(headers)?;
    if body.len() > max {
        return Err(ApiError::new(
            413,
            "body_too_large",
            format!("the body must be at most {max} bytes"),
            None,
        )
        .into());
    }
    Ok(())
}

/// Bodies we parse must say they are JSON: 415 otherwise.
pub fn require_json(headers: &HeaderMap) -> Result<(), AppError> {
    let ctype = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    if ctype.starts_with("application/json") {
        Ok(())
    } else {
        Err(ApiError::new(
            415,
            "unsupported_media_type",
            "the body must be JSON, sent with content-type: application/json",
            None,
        )
        .into())
    }
}
