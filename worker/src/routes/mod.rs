//! The axum router: every Worker path of the contract, JSON 404/405 for the rest.

mod admission;
mod budget;
mod claude;
mod dlq;
mod feedback;
mod health;
mod jobs;
mod keys;
mod metrics;
pub mod models;
mod openapi;
mod pauses;
mod poll;
mod reconciliation;
mod retention;
mod rollout;
mod rollups;
mod routing;
mod upload_form;
mod uploads;
mod usage;

use axum::extract::DefaultBodyLimit;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::Router;
use pipeline::error::ApiError;
use pipeline::identity::AuthMode;
use pipeline::jobs::{Cursor, JobId};
use pipeline::open_mode;
use pipeline::status::Kind;
use worker::Env;

use crate::error::AppError;
use crate::identity::Caller;
pub use crate::services::AppState;
use crate::store::JobRow;
pub use admission::{
    accept, commit_job, idempotency, idempotency_key, json_body, require_json, Idem,
};

pub fn router(env: &Env) -> Router {
    let state = match AppState::from_env(env, pipeline::envelope::Entry::Fetch) {
        Ok(s) => s,
        Err(msg) => {
            worker::console_error!("configuration error: {msg}");
            // Not a 500: the operator's fix is named (a var), and it names no secret.
            let err = ApiError::new(
                503,
                "misconfigured",
                format!("configuration error: {msg}"),
                None,
            );
            return Router::new().fallback(move || {
                let err = err.clone();
                async move { AppError(err).into_response() }
            });
        }
    };
    Router::new()
        .route("/api/health", get(health::get))
        .route("/feedback", post(feedback::submit))
        .route("/api/feedback", get(feedback::list))
        .route("/api/feedback/{id}", get(feedback::get))
        .route("/api/batches/poll", post(poll::run))
        .route("/api/batches/flush", post(poll::flush))
        .route("/api/claude", post(claude::call))
        .route("/api/rollout", get(rollout::get))
        .route("/api/budget", get(budget::get))
        .route("/api/keys", post(keys::create).get(keys::list))
        .route("/api/keys/{id}", axum::routing::delete(keys::revoke))
        .route("/api/usage", get(usage::get))
        .route("/api/usage.csv", get(usage::csv))
        .route("/api/usage/budget", axum::routing::put(usage::set_budget))
        .route("/api/usage/spenders", get(usage::spenders))
        .route("/api/usage/spenders.csv", get(usage::spenders_csv))
        .route("/api/usage/tags", get(usage::tags))
        .route("/api/usage/tags.csv", get(usage::tags_csv))
        .route("/api/usage/cache", get(usage::cache))
        .route(
            "/api/usage/tags/budget",
            axum::routing::put(usage::set_tag_budget),
        )
        .route("/api/usage/tags/budgets", get(usage::tag_budgets))
        .route("/api/usage/rollups", get(rollups::check))
        .route("/api/retention", get(retention::get))
        .route("/api/routing", get(routing::get))
        .route("/api/reconciliation", get(reconciliation::get))
        .route("/api/reconciliation/run", post(reconciliation::run))
        .route("/api/retention/run", post(retention::run))
        .route("/api/usage/rollups/rebuild", post(rollups::rebuild))
        .route("/api/metrics", get(metrics::get))
        .route("/api/metrics/prometheus", get(metrics::prometheus))
        .route("/api/models", get(models::list))
        .route("/api/models/check", post(models::check))
        .route("/api/pauses", get(pauses::list).put(pauses::pause))
        .route(
            "/api/pauses/{scope}/{value}",
            axum::routing::delete(pauses::resume),
        )
        .route("/api/dlq", get(dlq::list))
        .route("/api/dlq/replay", post(dlq::replay_all))
        .route("/api/dlq/{id}/replay", post(dlq::replay))
        .route("/api/dlq/{id}/discard", post(dlq::discard))
        .route(
            "/batches",
            post(uploads::submit)
                .get(uploads::list)
                .layer(DefaultBodyLimit::disable()),
        )
        .route("/batches/{id}", get(uploads::get))
        .route("/batches/{id}/cancel", post(uploads::cancel))
        .route("/jobs", post(jobs::submit).get(jobs::list))
        .route("/jobs/{id}", get(jobs::get))
        .route("/jobs/{id}/result", get(jobs::result))
        .route("/jobs/{id}/cancel", post(jobs::cancel))
        .route("/api/webhooks/{id}/resend", post(jobs::resend_webhook))
        .route("/api/openapi.json", get(openapi::get))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            open_mode_guard,
        ))
        .layer(axum::middleware::map_response(security_headers))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            d1_use_headers,
        ))
        // Every handler enforces its own limit with a JSON 413 (and the fetch entry caps what it
        // reads at 4 MB); axum's default 2 MB limit would answer in plain text first.
        .layer(DefaultBodyLimit::disable())
        .with_state(state)
}

/// One of the caller's jobs (of this kind, if given): someone else's, an unknown id or one that
/// is not even an id is a 404 — the same answer, so ids cannot be probed.
pub async fn own_job(
    state: &AppState,
    caller: &Caller,
    id: &str,
    kind: Option<Kind>,
) -> Result<JobRow, AppError> {
    let what = match kind {
        Some(Kind::Feedback) => "feedback job",
        _ => "job",
    };
    let missing = || ApiError::not_found(format!("no {what} {id}"));
    let id = JobId::parse(id).ok_or_else(missing)?;
    Ok(state
        .store
        .job_for_user(id.as_str(), caller.0.user_id.as_str(), kind)
        .await?
        .ok_or_else(missing)?)
}

/// One page of the caller's jobs matching `filter`, newest first, each as `view` shows it at
/// this instant, with the cursor of the next page when there is one.
pub async fn job_page<V>(
    state: &AppState,
    user: &str,
    filter: &crate::store::jobs::JobFilter,
    (limit, cursor): (u32, Option<Cursor>),
    view: impl Fn(&JobRow, i64) -> V,
) -> Result<(Vec<V>, Option<String>), AppError> {
    let mut rows = state
        .store
        .list_jobs(user, filter, cursor.as_ref(), limit)
        .await?;
    let next_cursor = next_page(&mut rows, limit, crate::store::row::job_cursor);
    let now = crate::config::now_ms();
    Ok((rows.iter().map(|r| view(r, now)).collect(), next_cursor))
}

/// A job was stored but its queue send failed: the row says `enqueue_failed` (it will never
/// run) and the caller hears a 503 naming it, to submit again.
pub async fn enqueue_failed(state: &AppState, id: &str, what: &str, e: worker::Error) -> AppError {
    worker::console_error!("enqueue of {what} {id} failed: {e}");
    let reason = format!("the {what} could not be queued: {e}");
    if let Err(e) = state
        .store
        .mark_enqueue_failed(id, &reason, crate::config::now_ms())
        .await
    {
        return e.into();
    }
    ApiError::new(
        503,
        "enqueue_failed",
        format!("the {what} {id} was stored but could not be queued; it will not run — please submit again"),
        None,
    )
    .into()
}

/// A list page's `cursor` and `limit` as the client sent them, checked (400 naming the field
/// when malformed).
pub fn page(cursor: Option<&str>, limit: Option<&str>) -> Result<(u32, Option<Cursor>), AppError> {
    let limit = pipeline::jobs::page_limit(limit)?;
    let cursor = cursor.map(Cursor::decode).transpose()?;
    Ok((limit, cursor))
}

/// The query of a list without filters (`GET /api/feedback`, `GET /batches`).
#[derive(Debug, serde::Deserialize)]
pub struct PageQuery {
    cursor: Option<String>,
    limit: Option<String>,
}

impl PageQuery {
    pub fn parse(&self) -> Result<(u32, Option<Cursor>), AppError> {
        page(self.cursor.as_deref(), self.limit.as_deref())
    }
}

/// Cuts a list read with one row more than `limit` back to `limit` rows, and answers the cursor
/// of the next page (`cursor_of` its last row) when there is one.
pub fn next_page<T>(
    rows: &mut Vec<T>,
    limit: u32,
    cursor_of: impl Fn(&T) -> Cursor,
) -> Option<String> {
    if rows.len() <= limit as usize {
        return None;
    }
    rows.truncate(limit as usize);
    rows.last().map(|r| cursor_of(r).encode())
}

/// What every answer of the Worker carries: nothing in it runs or renders as a page
/// (`default-src 'none'`), is sniffed into another type, framed, or told where it came from.
/// The SPA's files get the same from `dist/_headers`.
async fn security_headers(mut res: axum::response::Response) -> axum::response::Response {
    use axum::http::header::{self, HeaderValue};
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; frame-ancestors 'none'"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    res
}

/// At the request's end: with `D1_STATS = "on"`, what it asked of D1, as headers (the bench's
/// rows-read column) and its `use:` line; and the peaks it raised, for the headroom.
async fn d1_use_headers(
    axum::extract::State(state): axum::extract::State<AppState>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let what = state
        .config
        .d1_stats
        .then(|| format!("fetch {} {}", req.method(), req.uri().path()));
    let mut resp = next.run(req).await;
    state.meter.finish();
    if let Some(what) = what {
        let used = state.meter.used();
        let h = resp.headers_mut();
        for (name, v) in [
            ("x-d1-statements", used.d1_statements),
            ("x-d1-rows-read", used.d1_rows_read),
            ("x-d1-rows-written", used.d1_rows_written),
        ] {
            h.insert(name, axum::http::HeaderValue::from(v));
        }
        crate::log_use(&state.meter, &what);
    }
    worker::send::SendFuture::new(crate::headroom::record(&state)).await;
    resp
}

/// Open mode's rules ([`pipeline::open_mode`]) in front of every route: loopback hosts only, and
/// no write a web page could have sent.
async fn open_mode_guard(
    axum::extract::State(state): axum::extract::State<AppState>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    if state.config.auth_mode == AuthMode::Open {
        let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
        let host = req
            .uri()
            .host()
            .or_else(|| header("host"))
            .map(open_mode::host_of)
            .unwrap_or_default();
        let facts = open_mode::RequestFacts {
            method: req.method().as_str(),
            host,
            content_type: header("content-type"),
            client_header: header(open_mode::CLIENT_HEADER).is_some(),
            origin: header("origin"),
            sec_fetch_site: header("sec-fetch-site"),
        };
        if let Err(e) = open_mode::check(&facts) {
            return AppError(e).into_response();
        }
    }
    next.run(req).await
}

async fn not_found() -> AppError {
    ApiError::not_found("no such endpoint").into()
}

async fn method_not_allowed() -> AppError {
    ApiError::method_not_allowed().into()
}
