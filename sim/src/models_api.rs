//! `GET /v1/models` and `GET /v1/models/{model_id}`: the models available now, newest first,
//! in the shape of the current API (platform.claude.com/docs/en/api/models/list and
//! /retrieve; SDK `ModelInfo` with `capabilities`, `max_input_tokens`, `max_tokens`, `lifecycle`,
//! `deprecated_at` and `retires_at`). Retired models are neither listed nor found.

use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::auth::check_headers;
use crate::clock::now_ms;
use crate::errors::{with_headers, SimError};
use crate::models::{self, SimModel, MODELS};
use crate::state::Sim;

/// RFC 3339 midnight of an epoch day.
fn midnight(day: i64) -> String {
    pipeline::clock::format_rfc3339(day * 86_400_000)
}

fn supported(yes: bool) -> Value {
    json!({"supported": yes})
}

/// One `ModelInfo`.
pub fn info(m: &SimModel) -> Value {
    let effort = |e: &str| supported(m.efforts.contains(&e));
    json!({
        "type": "model",
        "id": m.id,
        "display_name": m.display_name,
        "created_at": m.created_at,
        "max_input_tokens": m.context,
        "max_tokens": m.max_output,
        "lifecycle": if m.deprecated_day.is_some() { "deprecated" } else { "active" },
        "deprecated_at": m.deprecated_day.map(midnight),
        "retires_at": m.retired_day.map(midnight),
        "capabilities": {
            "batch": supported(true),
            "citations": supported(true),
            "code_execution": supported(true),
            "image_input": supported(true),
            "pdf_input": supported(true),
            "structured_outputs": supported(m.structured),
            "effort": {
                "supported": !m.efforts.is_empty(),
                "low": effort("low"), "medium": effort("medium"), "high": effort("high"),
                "xhigh": effort("xhigh"), "max": effort("max"),
            },
            "thinking": {
                "supported": true,
                "types": {
                    "adaptive": supported(m.thinking.adaptive),
                    "enabled": supported(m.thinking.enabled),
                    "disabled": supported(m.thinking.disabled),
                },
            },
        },
    })
}

#[derive(Debug, Deserialize)]
pub struct Page {
    after_id: Option<String>,
    before_id: Option<String>,
    limit: Option<usize>,
}

/// `GET /v1/models?limit=&after_id=&before_id=`.
pub async fn list(
    State(sim): State<Sim>,
    headers: HeaderMap,
    page: Result<Query<Page>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let answer = (|| {
        check_headers(&sim, &headers)?;
        let Query(page) = page.map_err(|e| SimError::invalid(e.body_text()))?;
        let limit = page.limit.unwrap_or(20);
        if !(1..=1000).contains(&limit) {
            return Err(SimError::invalid(
                "limit: Input should be between 1 and 1000",
            ));
        }
        let now = now_ms();
        let knobs = sim.lock().knobs.clone();
        // Newest first ("More recently released models are listed first"); the knobs' added
        // models among them, the dropped ones left out.
        let mut live: Vec<(String, &str, Value)> = MODELS
            .iter()
            .filter(|m| !m.retired(now) && !models::dropped(m, &knobs))
            // An added entry with a table model's id is what the API says of it now.
            .filter(|m| !knobs.models_added.iter().any(|a| a.id == m.id))
            .map(|m| (m.created_at.to_owned(), m.id, info(m)))
            .chain(
                knobs
                    .models_added
                    .iter()
                    .map(|a| (a.created_at.clone(), a.id.as_str(), added(a))),
            )
            .collect();
        live.sort_by(|a, b| b.0.cmp(&a.0));
        let start = match (&page.after_id, &page.before_id) {
            (Some(a), _) => live
                .iter()
                .position(|m| m.1 == a)
                .map_or(live.len(), |i| i + 1),
            (None, Some(b)) => live
                .iter()
                .position(|m| m.1 == b)
                .map_or(0, |i| i.saturating_sub(limit)),
            (None, None) => 0,
        };
        let data: Vec<&(String, &str, Value)> = live.iter().skip(start).take(limit).collect();
        Ok(json!({
            "data": data.iter().map(|m| m.2.clone()).collect::<Vec<_>>(),
            "has_more": start + data.len() < live.len(),
            "first_id": data.first().map(|m| m.1),
            "last_id": data.last().map(|m| m.1),
        }))
    })();
    sim.lock()
        .stats
        .call("models", answer.as_ref().map_or(400, |_| 200));
    match answer {
        Ok(v) => with_headers(Json(v).into_response(), vec![]),
        Err(e) => e.into_response(),
    }
}

/// A `ModelInfo` for a model the knobs added (no capabilities known).
fn added(a: &crate::config::AddedModel) -> Value {
    json!({
        "type": "model",
        "id": a.id,
        "display_name": a.display_name,
        "created_at": a.created_at,
        "max_input_tokens": a.max_input_tokens,
        "max_tokens": a.max_tokens,
    })
}

/// `GET /v1/models/{model_id}` (an id or an alias).
pub async fn retrieve(
    State(sim): State<Sim>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let knobs = sim.lock().knobs.clone();
    let answer = check_headers(&sim, &headers).and_then(|()| {
        let known = models::available(&id, now_ms())
            .filter(|m| !models::dropped(m, &knobs))
            .map(info);
        let added = knobs.models_added.iter().find(|a| a.id == id).map(added);
        known
            .or(added)
            .ok_or_else(|| SimError::not_found(format!("model: {id}")))
    });
    match answer {
        Ok(v) => with_headers(Json(v).into_response(), vec![]),
        Err(e) => e.into_response(),
    }
}
