//! `GET /api/models`: the model catalog as the product uses it — the ids a job may name today,
//! each with its limits, what it accepts, the price in force and any retirement warning — for
//! API clients and the SPA's model picker.

use axum::response::{IntoResponse, Response};
use axum::Json;

use crate::config::now_ms;

pub async fn list() -> Response {
    Json(pipeline::models::catalog_view(now_ms())).into_response()
}
