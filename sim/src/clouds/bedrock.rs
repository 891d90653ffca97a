//! `POST /model/{modelId}/invoke`: Claude on Amazon Bedrock's `InvokeModel`
//! (platform.claude.com/docs/en/build-with-claude/claude-on-amazon-bedrock-legacy; botocore's
//! service model of `bedrock-runtime`: `"requestUri":"/model/{modelId}/invoke"`,
//! `"signingName":"bedrock"`).
//!
//! The call is let in by its SigV4 signature (`super::signature`); the model id is an inference
//! profile's (`global.anthropic.claude-sonnet-5-5`: a base id alone is refused, "Invocation of
//! model ID … with on-demand throughput isn't supported"); the body carries
//! `anthropic_version: "bedrock-2023-05-31"` and no `model`. Errors are AWS's: the status, the
//! error's name in `x-amzn-ErrorType`, `{"message": …}` (`ThrottlingException` 429,
//! `ServiceUnavailableException` 503, `InternalServerException` 500, `ValidationException` 400,
//! `ResourceNotFoundException` 404, `AccessDeniedException` 403). Billed at the list price on
//! the global profile, 10% more on a geography's (PRICING, "Cloud platform pricing").

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use pipeline::models::providers::{model_of, Provider};
use serde_json::json;

use super::signature::{self, Arrived};
use super::{suffer, unwrap, Unwrap};
use crate::answering::Payer;
use crate::errors::{new_id, SimError};
use crate::messages::{answer, job_of, validate_elsewhere};
use crate::state::Sim;

/// Bedrock refuses request payloads over 20 MB (claude-on-amazon-bedrock-legacy).
pub const MAX_BYTES: usize = 20 * 1000 * 1000;

/// An error as Bedrock answers it.
#[derive(Debug, Clone)]
pub struct AwsError {
    pub status: u16,
    pub name: &'static str,
    pub message: String,
}

impl AwsError {
    fn new(status: u16, name: &'static str, message: impl Into<String>) -> AwsError {
        AwsError {
            status,
            name,
            message: message.into(),
        }
    }

    fn validation(message: impl Into<String>) -> AwsError {
        AwsError::new(400, "ValidationException", message)
    }

    /// What the model's own refusal (an Anthropic API error) becomes on Bedrock.
    fn of(e: SimError) -> AwsError {
        match e.status {
            400 | 413 => AwsError::validation(e.message),
            404 => AwsError::new(404, "ResourceNotFoundException", e.message),
            401 | 403 => AwsError::new(403, "AccessDeniedException", e.message),
            429 => AwsError::new(
                429,
                "ThrottlingException",
                "Too many requests, please wait before trying again.",
            ),
            529 | 503 => AwsError::new(
                503,
                "ServiceUnavailableException",
                "Bedrock is unable to process your request.",
            ),
            _ => AwsError::new(
                500,
                "InternalServerException",
                "The server encountered an internal error while processing the request.",
            ),
        }
    }
}

impl From<signature::Refused> for AwsError {
    fn from(r: signature::Refused) -> AwsError {
        AwsError::new(r.status, r.name, r.message)
    }
}

impl IntoResponse for AwsError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::BAD_REQUEST);
        let kind = format!(
            "{}:http://internal.amazon.com/coral/com.amazon.bedrock/",
            self.name
        );
        let mut resp = (status, axum::Json(json!({"message": self.message}))).into_response();
        let h = resp.headers_mut();
        if let Ok(v) = kind.parse() {
            h.insert("x-amzn-errortype", v);
        }
        if let Ok(v) = new_id("bedrock").parse() {
            h.insert("x-amzn-requestid", v);
        }
        resp
    }
}

/// `POST /model/{modelId}/invoke`.
pub async fn invoke(
    State(sim): State<Sim>,
    Path(model_id): Path<String>,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let result = handle(&sim, (&model_id, uri.path()), &headers, body).await;
    let status = result
        .as_ref()
        .map_or_else(|e| e.status, |r| r.status().as_u16());
    sim.lock().stats.call("bedrock", status);
    match result {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

async fn handle(
    sim: &Sim,
    (model_id, raw_path): (&str, &str),
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, AwsError> {
    let body = body.map_err(|_| AwsError::validation("Input is too long for requested model."))?;
    let arrived = Arrived {
        method: "POST",
        raw_path,
        headers,
        body: &body,
        now_ms: crate::clock::now_ms(),
    };
    let mut creds = sim.config.clouds.clone();
    if let Some(rotated) = sim.lock().knobs.aws_secret_access_key.clone() {
        creds.aws_secret_access_key = rotated;
    }
    signature::check(&arrived, &creds, pipeline::provider::BEDROCK_SERVICE)?;
    match suffer(sim, "bedrock").await {
        0 => {}
        status => return Err(AwsError::of(SimError::injected(status, 0))),
    }
    if body.len() > MAX_BYTES {
        return Err(AwsError::validation(
            "Input is too long for requested model.",
        ));
    }
    let (model, permille) = model_and_price(model_id)?;
    let value: serde_json::Value = serde_json::from_slice(&body)
        .map_err(|e| AwsError::validation(format!("Malformed input request: {e}")))?;
    let value = unwrap(value, pipeline::provider::BEDROCK_VERSION, model).map_err(|u| {
        AwsError::validation(match u {
            Unwrap::Missing(k) => format!("Malformed input request: #: required key [{k}] not found, please reformat your input and try again."),
            Unwrap::Extra(k) => format!("Malformed input request: #: extraneous key [{k}] is not permitted, please reformat your input and try again."),
            Unwrap::Wrong(why) => format!("Malformed input request: {why}, please reformat your input and try again."),
        })
    })?;
    let req = validate_elsewhere(sim, &value).map_err(AwsError::of)?;
    let payer = Payer::Cloud {
        route: "bedrock",
        permille,
    };
    answer(sim, req, job_of(headers), payer)
        .await
        .map_err(AwsError::of)
}

/// The catalog model an inference profile id names, and its price in thousandths of the list
/// price (the global profile's is the list price; a geography's 10% more).
fn model_and_price(id: &str) -> Result<(&'static str, u64), AwsError> {
    let invalid = || AwsError::validation("The provided model identifier is invalid.");
    let model = model_of(Provider::Bedrock, id).ok_or_else(invalid)?;
    let (profile, _) = id.split_once('.').ok_or_else(invalid)?;
    match profile {
        "anthropic" => Err(AwsError::validation(format!(
            "Invocation of model ID {id} with on-demand throughput isn't supported. Retry your \
             request with the ID or ARN of an inference profile that contains this model."
        ))),
        "global" => Ok((model.id, 1_000)),
        p if pipeline::provider::BEDROCK_PROFILES.contains(&p) => Ok((model.id, 1_100)),
        _ => Err(invalid()),
    }
}
