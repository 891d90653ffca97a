//! `/_sim/*`: what the simulator has billed (and to whom), its knobs, and a reset.

use axum::extract::rejection::JsonRejection;
use axum::extract::State;
use axum::Json;
use serde_json::{json, Value};

use crate::clock::now_ms;
use crate::config::Knobs;
use crate::errors::SimError;
use crate::ratelimit::Limits;
use crate::state::Sim;

/// `GET /_sim/stats`: the counters, totals in dollars, and the jobs billed more than once.
pub async fn stats(State(sim): State<Sim>) -> Json<Value> {
    let (s, files_stored) = {
        let inner = sim.lock();
        (inner.stats.clone(), inner.files.len())
    };
    let twice: Vec<&String> = s
        .billed_by_job
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(j, _)| j)
        .collect();
    let anthropic = s.standard.cost_micros + s.batch.cost_micros;
    let total = anthropic + s.clouds.values().map(|b| b.cost_micros).sum::<u64>();
    Json(json!({
        "calls": s.calls,
        "standard": s.standard,
        "batch": s.batch,
        "clouds": s.clouds,
        "anthropic_cost_micros": anthropic,
        "total_cost_micros": total,
        "total_cost_usd": total as f64 / 1e6,
        "billed_by_job": s.billed_by_job,
        "cost_micros_by_job": s.cost_by_job,
        "jobs_billed_more_than_once": twice,
        "abandoned_billed": s.abandoned_billed,
        "abandoned_cost_micros": s.abandoned_cost_micros,
        "abandoned_by_job": s.abandoned_by_job,
        "refused_for_shape": s.refused_for_shape,
        "shape_refusals": s.shape_refusals,
        "versions": s.versions,
        "base64_documents": s.base64_documents,
        "file_documents": s.file_documents,
        "files_uploaded": s.files_uploaded,
        "files_deleted": s.files_deleted,
        "files_stored": files_stored,
    }))
}

/// `POST /_sim/reset`: stats, batches, cache, counters and knobs back to the start.
pub async fn reset(State(sim): State<Sim>) -> Json<Value> {
    sim.reset();
    Json(json!({"ok": true}))
}

/// `GET /_sim/config`.
pub async fn get_config(State(sim): State<Sim>) -> Json<Knobs> {
    Json(sim.lock().knobs.clone())
}

/// `PUT /_sim/config`: replaces the knobs (absent fields take their defaults).
pub async fn put_config(
    State(sim): State<Sim>,
    body: Result<Json<Knobs>, JsonRejection>,
) -> Result<Json<Knobs>, SimError> {
    let Json(knobs) = body.map_err(|e| SimError::invalid(e.body_text()))?;
    apply(&sim, knobs)
}

/// `PATCH /_sim/config`: changes only the fields given.
pub async fn patch_config(
    State(sim): State<Sim>,
    body: Result<Json<Value>, JsonRejection>,
) -> Result<Json<Knobs>, SimError> {
    let Json(patch) = body.map_err(|e| SimError::invalid(e.body_text()))?;
    let Value::Object(patch) = patch else {
        return Err(SimError::invalid("the patch must be a JSON object"));
    };
    let mut merged = serde_json::to_value(sim.lock().knobs.clone())
        .map_err(|e| SimError::invalid(e.to_string()))?;
    for (k, v) in patch {
        merged[k] = v;
    }
    let knobs: Knobs =
        serde_json::from_value(merged).map_err(|e| SimError::invalid(e.to_string()))?;
    apply(&sim, knobs)
}

fn apply(sim: &Sim, knobs: Knobs) -> Result<Json<Knobs>, SimError> {
    knobs.validate().map_err(SimError::invalid)?;
    let mut inner = sim.lock();
    let old = inner.knobs.clone();
    if (old.rpm, old.itpm, old.otpm) != (knobs.rpm, knobs.itpm, knobs.otpm) {
        inner.limits = Limits::new(&knobs, now_ms());
    }
    if old.seed != knobs.seed {
        inner.rng = crate::faults::Rng::new(knobs.seed);
    }
    inner.knobs = knobs.clone();
    Ok(Json(knobs))
}

/// `POST /_sim/webhooks`: records a JSON notification (a stand-in for Slack in tests).
pub async fn receive_webhook(
    State(sim): State<Sim>,
    body: Result<Json<Value>, JsonRejection>,
) -> Result<Json<Value>, SimError> {
    let Json(v) = body.map_err(|e| SimError::invalid(e.body_text()))?;
    sim.lock().webhooks.push(v);
    Ok(Json(json!({"ok": true})))
}

/// `GET /_sim/webhooks`: every notification received since start or reset.
pub async fn webhooks(State(sim): State<Sim>) -> Json<Value> {
    Json(Value::Array(sim.lock().webhooks.clone()))
}
