//! The typed client of the Worker's API. Pages call these functions and nothing else.

use gloo_net::http::{Request, Response};
use pipeline::dto::HealthReport;
use pipeline::error::ErrorBody;
use serde::de::DeserializeOwned;

/// A failed call, ready to show: the Worker's own message when it sent one.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub status: u16,
    pub message: String,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.status == 0 {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{} ({})", self.message, self.status)
        }
    }
}

fn network(e: gloo_net::Error) -> ApiError {
    ApiError {
        status: 0,
        message: format!("network error: {e}"),
    }
}

async fn error_of(resp: Response) -> ApiError {
    let status = resp.status();
    let message = match resp.json::<ErrorBody>().await {
        Ok(body) => body.error,
        Err(_) => format!("unexpected answer from the server ({})", resp.status_text()),
    };
    ApiError { status, message }
}

async fn decode<T: DeserializeOwned>(resp: Response) -> Result<T, ApiError> {
    resp.json::<T>().await.map_err(|e| ApiError {
        status: resp.status(),
        message: format!("could not read the answer: {e}"),
    })
}

/// `GET /api/health`. A degraded Worker answers 503 with the same report, so both are read.
pub async fn health() -> Result<HealthReport, ApiError> {
    let resp = Request::get("/api/health").send().await.map_err(network)?;
    match resp.status() {
        200 | 503 => decode(resp).await,
        _ => Err(error_of(resp).await),
    }
}
