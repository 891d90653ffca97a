//! `GET /api/metrics` (admins): the latest metrics row, the thresholds it crosses, and the series
//! of the last `minutes` (default 60, at most 1,440). `GET /api/metrics/prometheus` (admins, or
//! the scrape token): the same pipeline in the Prometheus text format.

use axum::extract::{FromRequestParts, Query, State};
use axum::http::header;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::error::ApiError;
use pipeline::money::UsdMicros;
use pipeline::ops::metrics::{Metrics, MetricsReport, Unrecorded, Warning};
use serde::Deserialize;

use crate::config::now_ms;
use crate::error::AppError;
use crate::identity::Caller;
use crate::services::AppState;

#[derive(Deserialize)]
pub struct Params {
    minutes: Option<String>,
}

#[worker::send]
pub async fn get(
    State(state): State<AppState>,
    Caller(caller): Caller,
    Query(p): Query<Params>,
) -> Result<Response, AppError> {
    caller.require_admin("see the metrics")?;
    let minutes = minutes(p.minutes.as_deref())?;
    let mut series = state
        .store
        .metrics_since(now_ms() - minutes * 60_000, 1440)
        .await?;
    series.reverse();
    let latest = series.last().cloned();
    let mut warnings = latest.as_ref().map(Metrics::warnings).unwrap_or_default();
    warnings.extend(model_warnings(&state, &series));
    let unrecorded = unrecorded(&state).await?;
    let headroom = state.store.peaks(now_ms()).await?;
    let report = crate::models_watch::last(&state).await?;
    let models = super::models::watch_view(&state, report).await?;
    warnings.extend(
        models
            .notices
            .iter()
            .filter(|n| n.level == pipeline::models::watch::Level::Warning)
            .map(|n| Warning::model(n.text.clone())),
    );
    Ok(Json(MetricsReport {
        latest,
        warnings,
        series,
        dlq_alert_threshold: state.config.dlq_alert_threshold,
        unrecorded,
        headroom,
        models,
    })
    .into_response())
}

/// `minutes`: 60 when absent, else a whole number from 1 to 1,440.
fn minutes(p: Option<&str>) -> Result<i64, ApiError> {
    match p {
        None | Some("") => Ok(60),
        Some(m) => m
            .parse()
            .ok()
            .filter(|m| (1..=1440).contains(m))
            .ok_or_else(|| {
                ApiError::bad_request(
                    "invalid_minutes",
                    "minutes must be a whole number from 1 to 1440",
                    Some("minutes"),
                )
            }),
    }
}

/// Models past or near retirement: the configured ones and those the window's jobs used.
fn model_warnings(state: &AppState, series: &[Metrics]) -> Vec<Warning> {
    let configured = &state.config.model_warnings;
    let used = series
        .iter()
        .flat_map(|m| m.models.iter().map(|x| x.model.as_str()))
        .filter(|m| *m != "unknown");
    let standings = pipeline::models::standings(used, now_ms())
        .into_iter()
        .filter(|w| !configured.contains(w));
    configured
        .iter()
        .cloned()
        .chain(standings)
        .map(Warning::model)
        .collect()
}

/// What the pipeline could not record as usage (timed-out calls, lost batches).
async fn unrecorded(state: &AppState) -> worker::Result<Unrecorded> {
    let counter = |name| state.store.counter(name);
    Ok(Unrecorded {
        timed_out_calls: counter(Unrecorded::TIMED_OUT_CALLS).await?,
        timed_out_worst_micros: UsdMicros::new(counter(Unrecorded::TIMED_OUT_WORST).await?),
        lost_batches: counter(Unrecorded::LOST_BATCHES).await?,
        lost_batch_jobs: counter(Unrecorded::LOST_BATCH_JOBS).await?,
    })
}

/// The Prometheus text format: jobs by status, lane and path; ended jobs, latency histograms,
/// tokens and cost (counters the cron keeps); budget use, oldest pending and SLO warnings (the
/// latest metrics row); each entry point's headroom. One round trip of five small reads.
#[worker::send]
pub async fn prometheus(
    State(state): State<AppState>,
    mut parts: Parts,
) -> Result<Response, AppError> {
    let authorization = parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let scraper = pipeline::ops::prometheus::is_scrape_token(
        authorization,
        state.config.scrape_token.as_deref(),
    );
    if !scraper {
        let Caller(caller) = Caller::from_request_parts(&mut parts, &state).await?;
        caller.require_admin("scrape the metrics")?;
    }
    let store = &state.store;
    let found = store
        .rounds(vec![vec![
            store.job_counts_statement()?,
            store.totals_statement()?,
            store.latest_metrics_statement()?,
            store.peaks_statement(now_ms())?,
            store.pauses_statement()?,
        ]])
        .await?;
    let r = crate::store::group(&found, 0, "the scrape")?;
    let counts = r[0].results()?;
    let totals = crate::store::ops::totals_of(&r[1])?;
    let latest = crate::store::ops::latest_metrics_of(&r[2])?;
    let headroom = crate::store::peaks::peaks_of(&r[3], now_ms())?;
    let pauses = crate::store::pauses::pauses_of(&r[4..])?;
    let text = pipeline::ops::prometheus::render(&pipeline::ops::prometheus::Scrape {
        totals: &totals,
        counts: &counts,
        latest: latest.as_ref(),
        pauses: &pauses,
        headroom: &headroom,
    });
    Ok((
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response())
}
