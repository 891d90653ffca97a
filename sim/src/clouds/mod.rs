//! The other routes to Claude (issue 36): Amazon Bedrock's `InvokeModel` and Google Vertex AI's
//! `rawPredict`, answering the same model as the Anthropic API does but with their own way in
//! (an AWS Signature Version 4; an OAuth access token), their own request wrapping (the model in
//! the URL, `anthropic_version` in the body), their own errors and their own bill — and an
//! outage knob per route (`Knobs::outages`) for the Anthropic API too, so a suite can take one
//! down mid-run.
//!
//! Layout: `signature` checks a SigV4 `Authorization`; `bedrock` and `vertex` are the two
//! endpoints; this file is what they share: the outage of a route and the Anthropic request
//! each unwraps into.

use std::time::Duration;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::config::Outage;
use crate::errors::SimError;
use crate::state::Sim;

pub mod bedrock;
pub mod oauth;
pub mod signature;
pub mod vertex;

/// The outage set for `route`, if any.
pub fn outage(sim: &Sim, route: &str) -> Outage {
    sim.lock()
        .knobs
        .outages
        .get(route)
        .copied()
        .unwrap_or_default()
}

/// Waits out a slow route; answers the status a down route answers with (0: not down).
pub async fn suffer(sim: &Sim, route: &str) -> u16 {
    let o = outage(sim, route);
    if o.slow_ms > 0 {
        tokio::time::sleep(Duration::from_millis(o.slow_ms)).await;
    }
    o.status
}

/// The Anthropic API's outage, in front of every `/v1/…` endpoint: a down API answers every
/// call with the outage's status in its own error shape (`overloaded_error` for 529).
pub async fn anthropic_outage(State(sim): State<Sim>, req: Request, next: Next) -> Response {
    match suffer(&sim, "anthropic").await {
        0 => next.run(req).await,
        status => {
            let retry_after_s = sim.lock().knobs.retry_after_s;
            sim.lock().stats.call("anthropic outage", status);
            SimError::injected(status, retry_after_s).into_response()
        }
    }
}

/// Why a wrapped body cannot be unwrapped: what the route answers for it.
pub enum Unwrap {
    Missing(&'static str),
    Extra(&'static str),
    Wrong(String),
}

/// The Anthropic Messages request inside another route's body: `anthropic_version` must be
/// `version`, `model` must not be there (it is in the URL); the catalog id goes in its place.
pub fn unwrap(mut body: Value, version: &str, model: &str) -> Result<Value, Unwrap> {
    let obj = body
        .as_object_mut()
        .ok_or_else(|| Unwrap::Wrong("the body is not a JSON object".into()))?;
    match obj.remove("anthropic_version") {
        None => return Err(Unwrap::Missing("anthropic_version")),
        Some(Value::String(v)) if v == version => {}
        Some(other) => {
            return Err(Unwrap::Wrong(format!(
                "anthropic_version: {other} is not {version:?}"
            )))
        }
    }
    if obj.contains_key("model") {
        return Err(Unwrap::Extra("model"));
    }
    obj.insert("model".into(), model.into());
    Ok(body)
}
