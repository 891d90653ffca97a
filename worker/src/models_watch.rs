//! The catalog watches the API (issue 33, part 6; `pipeline::models::watch` decides): once a
//! day the cron (and `POST /api/models/check`, admins, at once) reads `GET /v1/models` of the
//! configured API, a page of 1,000 at a time, compares it with the catalog and keeps the report
//! as the `models_watch` heartbeat. Producers refuse a job naming a model the API stopped
//! listing, and a consumer fails one already queued before any call. The report is read once a
//! minute per isolate at most (one D1 query), not per job.

use std::cell::RefCell;

use pipeline::error::ApiError;
use pipeline::models::watch::{compare, due, page_query, WatchReport, MAX_PAGES};
use pipeline::outcome::describe;

use crate::config::now_ms;
use crate::error::AppError;
use crate::services::AppState;

/// The heartbeat that keeps the last report.
pub const BEAT: &str = "models_watch";

/// How long an isolate trusts the report it read.
const FRESH_MS: i64 = 60_000;

thread_local! {
    /// The last report this isolate read (when, and what: `None` while no check has run).
    static KNOWN: RefCell<Option<(i64, Option<WatchReport>)>> = const { RefCell::new(None) };
}

/// The last report, from this isolate's copy while it is fresh, else from D1.
pub async fn last(state: &AppState) -> worker::Result<Option<WatchReport>> {
    let now = now_ms();
    let cached = KNOWN.with(|k| k.borrow().clone());
    if let Some((_, report)) = cached.filter(|(at, _)| now - at < FRESH_MS) {
        return Ok(report);
    }
    let report = state
        .store
        .last_beat(BEAT)
        .await?
        .and_then(|b| b.detail)
        .and_then(|d| serde_json::from_str::<WatchReport>(&d).ok());
    remember(now, report.clone());
    Ok(report)
}

fn remember(at: i64, report: Option<WatchReport>) {
    KNOWN.with(|k| *k.borrow_mut() = Some((at, report)));
}

/// Reads the API's list, compares and keeps the report. A list that cannot be read in full
/// keeps the previous findings, with the error.
pub async fn check(state: &AppState) -> Result<WatchReport, AppError> {
    let now = now_ms();
    let mut listed = Vec::new();
    let mut after: Option<String> = None;
    let mut failed = None;
    for _ in 0..MAX_PAGES {
        match state
            .anthropic
            .list_models(&page_query(after.as_deref()))
            .await
        {
            Ok(page) => {
                after = page.next().map(str::to_owned);
                listed.extend(page.data);
                if after.is_none() {
                    break;
                }
            }
            Err(e) => {
                failed = Some(describe(&e));
                break;
            }
        }
    }
    let report = match failed {
        None => compare(&listed, now),
        Some(error) => WatchReport {
            checked_at: now,
            error: Some(error),
            ..last(state).await?.unwrap_or_default()
        },
    };
    let detail = serde_json::to_string(&report)
        .map_err(|e| ApiError::internal(format!("cannot encode the model watch: {e}")))?;
    state.store.beat(BEAT, now, &detail).await?;
    remember(now, Some(report.clone()));
    for n in report.notices() {
        worker::console_log!("models: {}", n.text);
    }
    Ok(report)
}

/// The cron's daily check.
pub async fn daily(state: &AppState, now: i64) {
    match last(state).await {
        Ok(last) if !due(last.as_ref(), now) => {}
        Ok(_) => {
            if let Err(e) = check(state).await {
                worker::console_error!("models: the check failed: {}", e.0.body.error);
            }
        }
        Err(e) => worker::console_error!("models: reading the last check failed: {e}"),
    }
}

/// Why a job naming `model` is refused before any call: the API no longer lists it.
pub async fn refusal(state: &AppState, model: &str) -> worker::Result<Option<String>> {
    Ok(last(state).await?.and_then(|r| r.refuses(model)))
}

/// A producer's check of a job's `model` and `fallback_model`: a 400 `unknown_model` naming
/// the field when the API no longer lists it — before anything is stored.
pub async fn admit_job(
    state: &AppState,
    model: &str,
    fallback: Option<&str>,
) -> Result<(), AppError> {
    let Some(report) = last(state).await? else {
        return Ok(());
    };
    let named = std::iter::once((model, "model")).chain(fallback.map(|f| (f, "fallback_model")));
    for (id, field) in named {
        if let Some(why) = report.refuses(id) {
            return Err(ApiError::bad_request("unknown_model", why, Some(field)).into());
        }
    }
    Ok(())
}
