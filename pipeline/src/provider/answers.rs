//! What Bedrock and Vertex AI answer when they refuse a call, read into the
//! [`CallOutcome`] every decision of the pipeline takes — and which of those answers say the
//! route's credentials are wrong (a configuration error: never retried in a storm).
//!
//! - Bedrock (botocore's service model of `bedrock-runtime`, and docs.aws.amazon.com/bedrock/
//!   latest/userguide/troubleshooting-api-error-codes.html): `ThrottlingException` 429,
//!   `ModelNotReadyException` 429, `ServiceUnavailableException` 503, `InternalServerException`
//!   500, `ModelTimeoutException` 408 ("Processing time exceeded the model timeout length"),
//!   `ModelErrorException` 424, `ValidationException` 400, `AccessDeniedException` 403, and
//!   AWS's common `ExpiredTokenException`, `UnrecognizedClientException` 403 (docs.aws.amazon.com
//!   /…/common-errors.html); the body is `{"message": "…"}`, the error's name in the
//!   `x-amzn-ErrorType` header (restJson1) or the body's `__type`.
//! - Vertex AI (docs.cloud.google.com/vertex-ai/generative-ai/docs/model-reference/api-errors):
//!   Google's `{"error": {"code", "message", "status"}}` — `UNAUTHENTICATED` 401,
//!   `PERMISSION_DENIED` 403, `RESOURCE_EXHAUSTED` 429 ("Resource exhausted, please try again
//!   later.") — and, for what the model itself answers, the Anthropic API's own error body.

use serde::Deserialize;

use crate::anthropic::Message;
use crate::breaker::Signal;
use crate::models::providers::Provider;
use crate::models::Model;
use crate::outcome::CallOutcome;

#[derive(Deserialize)]
struct AwsError {
    #[serde(alias = "Message")]
    message: Option<String>,
    #[serde(rename = "__type")]
    kind: Option<String>,
}

#[derive(Deserialize)]
struct GoogleError {
    error: GoogleDetail,
}

#[derive(Deserialize)]
struct GoogleDetail {
    #[serde(default)]
    message: String,
    /// Google's status name; Anthropic's error body has none, which tells the two apart.
    status: String,
}

/// The outcome of an error answer (`status`, `body`, headers through `header`) from `provider`
/// (Bedrock or Vertex AI; the Anthropic API's are read by its own client).
pub fn failure(
    provider: Provider,
    status: u16,
    body: &str,
    header: impl Fn(&str) -> Option<String>,
) -> CallOutcome {
    let retry_after_s = header("retry-after").and_then(|v| v.trim().parse().ok());
    let message = match provider {
        Provider::Bedrock => {
            let aws: Option<AwsError> = serde_json::from_str(body).ok();
            let name = header("x-amzn-errortype")
                .or_else(|| aws.as_ref().and_then(|e| e.kind.clone()))
                .map(|t| error_name(&t).to_owned())
                .unwrap_or_else(|| "Error".into());
            let text = aws.and_then(|e| e.message).unwrap_or_else(|| clip(body));
            // The model behind the endpoint ran out of time, or failed: not the request's fault.
            match status {
                408 => return CallOutcome::Timeout,
                424 => {
                    return CallOutcome::Http {
                        status: 502,
                        message: format!("Amazon Bedrock {name} (424): {text}"),
                        retry_after_s,
                    }
                }
                _ => format!("Amazon Bedrock {name}: {text}"),
            }
        }
        Provider::Vertex => match serde_json::from_str::<GoogleError>(body) {
            Ok(g) => format!("Google Vertex AI {}: {}", g.error.status, g.error.message),
            Err(_) => match serde_json::from_str::<crate::anthropic::ErrorResponse>(body) {
                Ok(a) => {
                    let kind = serde_json::to_value(a.error.kind).unwrap_or_default();
                    let kind = kind.as_str().unwrap_or("error");
                    format!("Google Vertex AI {kind}: {}", a.error.message)
                }
                Err(_) => format!("Google Vertex AI: {}", clip(body)),
            },
        },
        Provider::Anthropic => clip(body),
    };
    CallOutcome::Http {
        status,
        message,
        retry_after_s,
    }
}

/// `ThrottlingException:http://internal.amazon.com/coral/…` or `com.amazon…#ThrottlingException`:
/// the name alone.
fn error_name(raw: &str) -> &str {
    let raw = raw.split(':').next().unwrap_or(raw);
    raw.rsplit('#').next().unwrap_or(raw).trim()
}

fn clip(body: &str) -> String {
    body.chars().take(300).collect()
}

/// Whether the route refused who we are: Bedrock's 403 (a bad or expired signature or key,
/// no access to the model), Vertex AI's 401 and 403 (an invalid or expired token, no
/// permission). A configuration error: the route's breaker opens at once, the job moves on.
/// The Anthropic API's 401 keeps today's meaning (the job fails: the only route is unusable).
pub fn refuses_credentials(provider: Provider, outcome: &CallOutcome) -> bool {
    let CallOutcome::Http { status, .. } = outcome else {
        return false;
    };
    match provider {
        Provider::Anthropic => false,
        Provider::Bedrock => *status == 403,
        Provider::Vertex => matches!(status, 401 | 403),
    }
}

/// What a call's outcome on `provider` tells its breaker.
pub fn signal(provider: Provider, outcome: &CallOutcome) -> Signal {
    if refuses_credentials(provider, outcome) {
        Signal::Refused
    } else {
        Signal::of(outcome)
    }
}

/// An answer from another provider names the model by that provider's id (or not at all):
/// it is priced, stored and shown under the catalog's.
pub fn as_catalog_model(mut message: Message, model: &Model) -> Message {
    message.model = model.id.to_owned();
    message
}
