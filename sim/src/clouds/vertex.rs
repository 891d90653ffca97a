//! `POST /v1/projects/{project}/locations/{location}/publishers/anthropic/models/{model}:rawPredict`:
//! Claude on Google Vertex AI (platform.claude.com/docs/en/build-with-claude/claude-on-vertex-ai:
//! "`model` is not passed in the request body. Instead, it is specified in the Google Cloud
//! endpoint URL", "`anthropic_version` … must be set to the value `vertex-2023-10-16`").
//!
//! Let in by `Authorization: Bearer <access token>`: a missing, unknown or expired token is
//! Google's 401 `UNAUTHENTICATED`; a model the publisher does not list is a 404 `NOT_FOUND`;
//! quota is Google's 429 `RESOURCE_EXHAUSTED` ("Resource exhausted, please try again later.",
//! docs.cloud.google.com/vertex-ai/generative-ai/docs/provisioned-throughput/error-code-429);
//! what the model itself refuses comes back in the Anthropic API's own error body. Billed at
//! the list price on the `global` location, 10% more on a multi-region or a region (PRICING).

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use pipeline::models::providers::{model_of, Provider};
use serde_json::json;

use super::{suffer, unwrap, Unwrap};
use crate::answering::Payer;
use crate::errors::SimError;
use crate::messages::{answer, job_of, validate_elsewhere};
use crate::state::Sim;

/// Vertex AI limits request payloads to 30 MB (claude-on-vertex-ai).
pub const MAX_BYTES: usize = 30 * 1000 * 1000;

/// An error as Vertex AI answers it: Google's shape, or the model's own (Anthropic's).
pub enum VertexError {
    Google {
        code: u16,
        status: &'static str,
        message: String,
    },
    Model(SimError),
}

impl VertexError {
    fn google(code: u16, status: &'static str, message: impl Into<String>) -> VertexError {
        VertexError::Google {
            code,
            status,
            message: message.into(),
        }
    }

    fn code(&self) -> u16 {
        match self {
            VertexError::Google { code, .. } => *code,
            VertexError::Model(e) => e.status,
        }
    }

    /// A quota refusal is Google's; anything else the model answered is its own.
    fn of(e: SimError) -> VertexError {
        match e.status {
            429 => VertexError::google(
                429,
                "RESOURCE_EXHAUSTED",
                "Resource exhausted, please try again later.",
            ),
            503 => VertexError::google(503, "UNAVAILABLE", "The service is currently unavailable."),
            _ => VertexError::Model(e),
        }
    }
}

impl IntoResponse for VertexError {
    fn into_response(self) -> Response {
        match self {
            VertexError::Google {
                code,
                status,
                message,
            } => {
                let body = json!({"error": {"code": code, "message": message, "status": status}});
                let code = StatusCode::from_u16(code).unwrap_or(StatusCode::BAD_REQUEST);
                (code, axum::Json(body)).into_response()
            }
            VertexError::Model(e) => e.into_response(),
        }
    }
}

const INVALID_CREDENTIALS: &str = "Request had invalid authentication credentials. Expected \
    OAuth 2 access token, login cookie or other valid authentication credential. See \
    https://developers.google.com/identity/sign-in/web/devconsole-project.";

/// The publisher model's path segments.
#[derive(serde::Deserialize)]
pub struct Segments {
    project: String,
    location: String,
    /// `{model}:rawPredict`.
    action: String,
}

/// `POST …/publishers/anthropic/models/{model}:rawPredict`.
pub async fn raw_predict(
    State(sim): State<Sim>,
    Path(at): Path<Segments>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let result = handle(&sim, &at, &headers, body).await;
    let status = result
        .as_ref()
        .map_or_else(VertexError::code, |r| r.status().as_u16());
    sim.lock().stats.call("vertex", status);
    match result {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

async fn handle(
    sim: &Sim,
    at: &Segments,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, VertexError> {
    authenticate(sim, headers)?;
    match suffer(sim, "vertex").await {
        0 => {}
        status => return Err(VertexError::of(SimError::injected(status, 0))),
    }
    let not_found = || {
        VertexError::google(
            404,
            "NOT_FOUND",
            format!(
                "Publisher Model `projects/{}/locations/{}/publishers/anthropic/models/{}` not \
                 found.",
                at.project, at.location, at.action
            ),
        )
    };
    let (model_id, action) = at.action.split_once(':').ok_or_else(not_found)?;
    if action != "rawPredict" {
        return Err(not_found());
    }
    let model = model_of(Provider::Vertex, model_id).ok_or_else(not_found)?;
    let too_large = || {
        SimError::new(
            pipeline::anthropic::ErrorType::RequestTooLarge,
            "Request exceeds the maximum allowed number of bytes.",
        )
    };
    let value = crate::answering::json_body(body, MAX_BYTES)
        .map_err(|e| VertexError::Model(if e.status == 413 { too_large() } else { e }))?;
    let value = unwrap(value, pipeline::provider::VERTEX_VERSION, model.id).map_err(|u| {
        VertexError::Model(SimError::invalid(match u {
            Unwrap::Missing(k) => format!("{k}: Field required"),
            Unwrap::Extra(k) => format!("{k}: Extra inputs are not permitted"),
            Unwrap::Wrong(why) => why,
        }))
    })?;
    let req = validate_elsewhere(sim, &value).map_err(VertexError::of)?;
    let permille = if at.location == "global" {
        1_000
    } else {
        1_100
    };
    let payer = Payer::Cloud {
        route: "vertex",
        permille,
    };
    answer(sim, req, job_of(headers), payer)
        .await
        .map_err(VertexError::of)
}

/// The bearer token must be the configured one or one the token endpoint minted, and not past
/// its expiry.
fn authenticate(sim: &Sim, headers: &HeaderMap) -> Result<(), VertexError> {
    let token = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|a| a.strip_prefix("Bearer "));
    let Some(token) = token else {
        return Err(VertexError::google(
            401,
            "UNAUTHENTICATED",
            "Request is missing required authentication credential. Expected OAuth 2 access \
             token, login cookie or other valid authentication credential. See \
             https://developers.google.com/identity/sign-in/web/devconsole-project.",
        ));
    };
    let now = crate::clock::now_ms();
    let inner = sim.lock();
    let expired = inner
        .knobs
        .vertex_token_expires_at
        .is_some_and(|at| now >= at);
    let minted = inner
        .issued_tokens
        .get(token)
        .is_some_and(|until| now < *until);
    if !(token == sim.config.clouds.vertex_token || minted) || expired {
        return Err(VertexError::google(
            401,
            "UNAUTHENTICATED",
            INVALID_CREDENTIALS,
        ));
    }
    Ok(())
}
