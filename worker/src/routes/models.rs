//! `GET /api/models`: the model catalog as the product uses it — the ids a job may name today,
//! each with its limits, what it accepts, the price in force and any retirement warning — for
//! API clients and the SPA's model picker.

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::models::watch::WatchView;

use crate::config::now_ms;
use crate::error::AppError;
use crate::identity::Caller;
use crate::services::AppState;

/// The catalog, with what the last check of the API's own list found.
#[worker::send]
pub async fn list(State(state): State<AppState>) -> Result<Response, AppError> {
    let mut view = pipeline::models::view::catalog_view(now_ms());
    let report = crate::models_watch::last(&state).await?;
    view.watch = Some(watch_view(&state, report).await?);
    Ok(Json(view).into_response())
}

/// `POST /api/models/check` (admins): reads the API's list now and compares it.
#[worker::send]
pub async fn check(
    State(state): State<AppState>,
    Caller(caller): Caller,
) -> Result<Response, AppError> {
    caller.require_admin("check the model catalog against the API")?;
    let report = crate::models_watch::check(&state).await?;
    Ok(Json(watch_view(&state, Some(report)).await?).into_response())
}

/// The watch as shown: the report, its notices, and the deprecated models' use this week.
pub async fn watch_view(
    state: &AppState,
    report: Option<pipeline::models::watch::WatchReport>,
) -> worker::Result<WatchView> {
    let now = now_ms();
    let week = now.div_euclid(pipeline::clock::DAY_MS) - 6;
    let rows = state.store.jobs_by_model_since(week).await?;
    Ok(WatchView::new(
        report,
        pipeline::models::watch::deprecated_use(&rows, now),
    ))
}
