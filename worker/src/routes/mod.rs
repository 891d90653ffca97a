//! The axum router: every Worker path of the contract, JSON 404/405 for the rest.

mod admission;
mod budget;
mod bulk;
mod claude;
mod common;
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
mod route_health;
mod routing;
mod staged;
mod upload_form;
mod uploads;
mod usage;

use axum::extract::DefaultBodyLimit;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::Router;
use pipeline::error::ApiError;
use pipeline::identity::AuthMode;
use pipeline::open_mode;
use worker::Env;

use crate::error::AppError;
use crate::services::AppState;

pub fn router(env: &Env) -> Router {
    let state = match AppState::from_env(env, pipeline::envelope::Entry::Fetch) {
        Ok(s) => s,
        Err(msg) => return misconfigured(&msg),
    };
    Router::new()
        .merge(job_routes())
        .merge(usage_routes())
        .merge(ops_routes())
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

/// Every request of a Worker whose configuration is wrong: not a 500, a 503 that names the
/// operator's fix (a var), and no secret.
fn misconfigured(msg: &str) -> Router {
    worker::console_error!("configuration error: {msg}");
    let err = ApiError::new(
        503,
        "misconfigured",
        format!("configuration error: {msg}"),
        None,
    );
    Router::new().fallback(move || {
        let err = err.clone();
        async move { AppError(err).into_response() }
    })
}

/// Jobs in: feedback, prompts, uploads, the interactive call, and what each answers.
fn job_routes() -> Router<AppState> {
    Router::new()
        .route("/feedback", post(feedback::submit))
        .route("/api/feedback", get(feedback::list))
        .route("/api/feedback/{id}", get(feedback::get))
        .route("/api/claude", post(claude::call))
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
        .route("/api/keys", post(keys::create).get(keys::list))
        .route("/api/keys/{id}", axum::routing::delete(keys::revoke))
        .route("/api/openapi.json", get(openapi::get))
}

/// Tokens and cost: usage, budgets, tags, the cache, the rollups.
fn usage_routes() -> Router<AppState> {
    use axum::routing::put;
    Router::new()
        .route("/api/budget", get(budget::get))
        .route("/api/usage", get(usage::get))
        .route("/api/usage.csv", get(usage::csv))
        .route("/api/usage/budget", put(usage::set_budget))
        .route("/api/usage/spenders", get(usage::spenders))
        .route("/api/usage/spenders.csv", get(usage::spenders_csv))
        .route("/api/usage/tags", get(usage::tags))
        .route("/api/usage/tags.csv", get(usage::tags_csv))
        .route("/api/usage/cache", get(usage::cache))
        .route("/api/usage/tags/budget", put(usage::set_tag_budget))
        .route("/api/usage/tags/budgets", get(usage::tag_budgets))
        .route("/api/usage/rollups", get(rollups::check))
        .route("/api/usage/rollups/rebuild", post(rollups::rebuild))
}

/// Operations: health, metrics, batches, rollout, routing, reconciliation, retention, models,
/// pauses and the dead letters.
fn ops_routes() -> Router<AppState> {
    Router::new()
        .route("/api/health", get(health::get))
        .route("/api/batches/poll", post(poll::run))
        .route("/api/batches/flush", post(poll::flush))
        .route("/api/rollout", get(rollout::get))
        .route("/api/retention", get(retention::get))
        .route("/api/retention/run", post(retention::run))
        .route("/api/routing", get(routing::get))
        .route("/api/reconciliation", get(reconciliation::get))
        .route("/api/reconciliation/run", post(reconciliation::run))
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
        .route("/api/ops/bulk", post(bulk::act).get(bulk::audit))
        .route("/api/routes", get(route_health::get))
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
        state.meter.log_use(&what);
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
