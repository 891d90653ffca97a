//! The typed client of the Worker's API. Pages call these functions and nothing else.

use gloo_net::http::{Request, Response};
use pipeline::dto::{FeedbackAck, FeedbackList, HealthReport, JobAck, JobList, JobView};
use pipeline::error::ErrorBody;
use pipeline::status::Mode;
use serde::de::DeserializeOwned;

/// A failed call, ready to show: the Worker's own message when it sent one, and the field it
/// names (so a form can show it next to that field).
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub status: u16,
    pub message: String,
    pub field: Option<String>,
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
        field: None,
    }
}

async fn error_of(resp: Response) -> ApiError {
    let status = resp.status();
    match resp.json::<ErrorBody>().await {
        Ok(body) => ApiError {
            status,
            message: body.error,
            field: body.field,
        },
        Err(_) => ApiError {
            status,
            message: format!("unexpected answer from the server ({})", resp.status_text()),
            field: None,
        },
    }
}

async fn decode<T: DeserializeOwned>(resp: Response) -> Result<T, ApiError> {
    resp.json::<T>().await.map_err(|e| ApiError {
        status: resp.status(),
        message: format!("could not read the answer: {e}"),
        field: None,
    })
}

/// Decodes a 2xx answer, or the contract's error envelope.
async fn answer<T: DeserializeOwned>(resp: Response) -> Result<T, ApiError> {
    if resp.ok() {
        decode(resp).await
    } else {
        Err(error_of(resp).await)
    }
}

/// `POST /feedback`.
pub async fn submit_feedback(
    source: &str,
    text: &str,
    mode: Mode,
) -> Result<FeedbackAck, ApiError> {
    let body = serde_json::json!({"source": source, "text": text, "mode": mode});
    let resp = Request::post("/feedback")
        .json(&body)
        .map_err(network)?
        .send()
        .await
        .map_err(network)?;
    answer(resp).await
}

/// `GET /api/feedback`: the newest page.
pub async fn list_feedback() -> Result<FeedbackList, ApiError> {
    let resp = Request::get("/api/feedback?limit=20")
        .send()
        .await
        .map_err(network)?;
    answer(resp).await
}

/// `POST /api/batches/poll`: settle ended Message Batches now.
pub async fn poll_batches() -> Result<serde_json::Value, ApiError> {
    let resp = Request::post("/api/batches/poll")
        .send()
        .await
        .map_err(network)?;
    answer(resp).await
}

/// `GET /api/health`. A degraded Worker answers 503 with the same report, so both are read.
pub async fn health() -> Result<HealthReport, ApiError> {
    let resp = Request::get("/api/health").send().await.map_err(network)?;
    match resp.status() {
        200 | 503 => decode(resp).await,
        _ => Err(error_of(resp).await),
    }
}

/// `POST /jobs`.
pub async fn submit_prompt(body: &serde_json::Value) -> Result<JobAck, ApiError> {
    let resp = Request::post("/jobs")
        .json(body)
        .map_err(network)?
        .send()
        .await
        .map_err(network)?;
    answer(resp).await
}

/// `GET /jobs` with filters (`status`, `priority`, `kind`; empty means any).
pub async fn list_jobs(status: &str, priority: &str, kind: &str) -> Result<JobList, ApiError> {
    let mut q = vec!["limit=50".to_string()];
    for (k, v) in [("status", status), ("priority", priority), ("kind", kind)] {
        if !v.is_empty() {
            q.push(format!("{k}={v}"));
        }
    }
    let resp = Request::get(&format!("/jobs?{}", q.join("&")))
        .send()
        .await
        .map_err(network)?;
    answer(resp).await
}

/// `GET /jobs/:id`.
pub async fn get_job(id: &str) -> Result<JobView, ApiError> {
    let resp = Request::get(&format!("/jobs/{id}"))
        .send()
        .await
        .map_err(network)?;
    answer(resp).await
}

/// `GET /jobs/:id/result`: the text.
pub async fn job_result(id: &str) -> Result<String, ApiError> {
    let resp = Request::get(&format!("/jobs/{id}/result"))
        .send()
        .await
        .map_err(network)?;
    if resp.ok() {
        resp.text().await.map_err(network)
    } else {
        Err(error_of(resp).await)
    }
}

/// `POST /jobs/:id/cancel`.
pub async fn cancel_job(id: &str) -> Result<JobView, ApiError> {
    let resp = Request::post(&format!("/jobs/{id}/cancel"))
        .send()
        .await
        .map_err(network)?;
    answer(resp).await
}
