//! `GET /api/models`: the model catalog as the product uses it — the ids a job may name today,
//! each with its limits, what it accepts, the price in force and any retirement warning — for
//! API clients and the SPA's model picker.

use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::models::{self, CATALOG, DEFAULT_MODEL};
use serde_json::json;

use crate::config::now_ms;

pub async fn list() -> Response {
    let now = now_ms();
    let items: Vec<_> = CATALOG
        .iter()
        .filter(|m| !m.is_retired(now))
        .map(|m| {
            let mut v = serde_json::to_value(m).unwrap_or_default();
            v["price"] = serde_json::to_value(m.price_at(now)).unwrap_or_default();
            v["warning"] = models::standing(m.id, now).into();
            v
        })
        .collect();
    Json(json!({"default": DEFAULT_MODEL, "models": items})).into_response()
}
