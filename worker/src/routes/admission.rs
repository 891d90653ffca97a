//! A producer's admission: its body checked, its `Idempotency-Key` looked up and claimed in the
//! job's own transaction, the caps and per-user limits applied — the steps every producer takes
//! in the contract's order, before anything is stored — and a job's worst case, what it
//! reserves against its user's caps.

use axum::http::HeaderMap;
use pipeline::clock::day_of;
use pipeline::error::ApiError;
use pipeline::money::UsdMicros;
use pipeline::ops::budgets::{check_caps, explain_refusal, soft_reached};
use pipeline::prompt::{Idempotency, StoredKey};

use crate::config::now_ms;
use crate::error::AppError;
use crate::services::AppState;
use crate::store::{Statement, StoreError};

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
        limit(state, user, 1).await?;
        admit(state, user, need).await?;
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
        return match state.store.commit(statements).await {
            Ok(_) => Ok(None),
            Err(e) => Err(refusal(state, user, (need, tags), e).await),
        };
    };
    let mut all = Vec::from(state.store.claim_idempotency(user, key, hash, id, now)?);
    all.extend(statements);
    let Err(e) = state.store.commit(all).await else {
        return Ok(None);
    };
    match lookup(state, user, key, hash, now).await? {
        Idempotency::Replay { job_id } if job_id != id => Ok(Some(job_id)),
        Idempotency::Conflict => Err(key_reused()),
        _ => Err(refusal(state, user, (need, tags), e).await),
    }
}

/// The answer to a job the database refused: a 429 naming the cap it would have crossed (a
/// concurrent request committed first), else the platform's error.
async fn refusal(
    state: &AppState,
    user: &str,
    (need, tags): (UsdMicros, &[String]),
    e: StoreError,
) -> AppError {
    match e {
        StoreError::BudgetExceeded => refused(state, user, need).await,
        StoreError::TagCapExceeded => tag_refused(state, tags, need).await,
        other => worker::Error::from(other).into(),
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

/// The producers' check before anything is stored: the request's worst case (`need`) must fit
/// under the user's caps with what is already committed (429 `budget_exceeded` otherwise); the
/// soft threshold raises its alert (once per user and day). The database repeats the check
/// atomically when the job is inserted ([`refused`] explains its refusal); this one spares the
/// writes of a request that cannot fit.
pub async fn admit(state: &AppState, user: &str, need: UsdMicros) -> Result<(), AppError> {
    let now = now_ms();
    let Some(budget) = state.store.budget_if_set(user, now).await? else {
        return Ok(());
    };
    if budget.is_unlimited() {
        return Ok(());
    }
    if soft_reached(budget.spent_today_micros, budget.soft_micros) {
        let day = day_of(now);
        let spent = budget.spent_today_micros.dollars();
        let payload = crate::alerts::SoftThreshold {
            event: "usage.soft_threshold",
            user_id: user,
            day: &day,
            spent_micros: budget.spent_today_micros,
            soft_micros: budget.soft_micros,
            text: format!(
                "claude-pipeline: {user} has spent ${spent} today, past the soft threshold."
            ),
        };
        let key = format!("soft:{user}:{day}");
        if let Err(e) = crate::alerts::raise(state, &key, "soft_budget", &payload).await {
            worker::console_error!("soft budget alert for {user}: {e}");
        }
    }
    check_caps(&budget, need).map_err(|r| AppError(ApiError::budget_exceeded(r)))
}

/// What a job of `req` on `mode` reserves against its user's caps: its worst case at the
/// dearest model of the configured fallback chain it may move to — and, when a refusal may
/// move it to a fallback model (`fallback`, the job's own, else the operator's for its model),
/// the worst case of that second attempt besides.
pub fn worst_case(
    state: &AppState,
    req: &pipeline::anthropic::MessagesRequest,
    document_pages: Option<u32>,
    mode: pipeline::status::Mode,
    fallback: Option<&str>,
) -> UsdMicros {
    let worst = |req: &pipeline::anthropic::MessagesRequest| {
        pipeline::ops::budgets::worst_case(
            req,
            document_pages,
            mode,
            &state.config.model_chain,
            now_ms(),
        )
    };
    let first = worst(req);
    let fallback = fallback.or_else(|| state.config.refusal_fallbacks.for_model(&req.model));
    match fallback {
        Some(model) => {
            let second = pipeline::shape::conform(req.clone(), model);
            first + worst(&second)
        }
        None => first,
    }
}

/// The per-user limits on the producers (`Config::user_limits`): a request that would make
/// `adding` jobs is refused with a 429 and a `retry-after` when the user has too many waiting or
/// made too many in the last minute.
pub async fn limit(state: &AppState, user: &str, adding: u64) -> Result<(), AppError> {
    let l = state.config.user_limits;
    if l.max_queued == 0 && l.max_per_min == 0 {
        return Ok(());
    }
    let (queued, recent) = state.store.user_load(user, now_ms() - 60_000).await?;
    Ok(pipeline::ops::budgets::check_user_limits(
        &l, queued, recent, adding,
    )?)
}

/// The 429 of a job the database refused for one of its `tags`' daily caps: the first tag whose
/// cap `need` no longer fits under.
pub async fn tag_refused(state: &AppState, tags: &[String], need: UsdMicros) -> AppError {
    match state.store.tag_budgets(Some(tags), now_ms()).await {
        Ok(views) => {
            let tight = views
                .iter()
                .find(|v| v.left_micros.micros() < need.micros())
                .or(views.first());
            match tight {
                Some(v) => AppError(v.refusal(need)),
                None => AppError(ApiError::new(
                    429,
                    "tag_budget_exceeded",
                    "a tag of this job has reached its daily cap",
                    Some("tags"),
                )),
            }
        }
        Err(e) => e.into(),
    }
}

/// The 429 for a write that the database refused because it would cross one of the user's caps
/// (`StoreError::BudgetExceeded`): a concurrent request committed first.
pub async fn refused(state: &AppState, user: &str, need: UsdMicros) -> AppError {
    match state.store.budget(user, now_ms()).await {
        Ok(b) => AppError(ApiError::budget_exceeded(explain_refusal(&b, need))),
        Err(e) => e.into(),
    }
}
