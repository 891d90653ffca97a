//! Who may call: every endpoint's first check — the API key (`x-api-key`, or `Authorization:
//! Bearer` as current SDKs send it) and the `anthropic-version` header.

use axum::http::HeaderMap;
use pipeline::anthropic::{header, ErrorType};

use crate::errors::SimError;
use crate::state::Sim;

/// The `anthropic-version` header (checked present by [`check_headers`]).
pub fn version(headers: &HeaderMap) -> &str {
    headers
        .get(header::VERSION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

/// The API key — `x-api-key`, or `Authorization: Bearer` as current SDKs send it — (401 when
/// missing or wrong) and `anthropic-version` (400 when missing).
pub fn check_headers(sim: &Sim, headers: &HeaderMap) -> Result<(), SimError> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let key = text(header::API_KEY)
        .or_else(|| {
            text("authorization").and_then(|a| {
                a.strip_prefix("Bearer ")
                    .or_else(|| a.strip_prefix("bearer "))
            })
        })
        .map(str::trim)
        .unwrap_or_default();
    if key.is_empty() {
        return Err(SimError::new(
            ErrorType::AuthenticationError,
            "x-api-key header is required",
        ));
    }
    if sim.config.api_key.as_deref().is_some_and(|k| k != key) {
        return Err(SimError::new(
            ErrorType::AuthenticationError,
            "invalid x-api-key",
        ));
    }
    match version(headers) {
        "" => Err(SimError::invalid("anthropic-version: header is required")),
        // api/versioning: the current version and the prior one.
        v @ ("2023-06-01" | crate::shape::VERSION_2026_10_21) => {
            *sim.lock().stats.versions.entry(v.to_string()).or_insert(0) += 1;
            Ok(())
        }
        other => Err(SimError::invalid(format!(
            "anthropic-version: \"{other}\" is not a valid version"
        ))),
    }
}
