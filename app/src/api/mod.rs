//! The typed client of the Worker's API. Pages call these functions and nothing else.
//!
//! # Layout
//! - this module: the session's key and one function per call, over `gloo-net`.
//! - [`error`]: [`ApiError`], a failed call ready to show (next to a form's field or not).
//! - [`upload`]: `POST /batches` over `XMLHttpRequest`, for its upload progress.

use gloo_net::http::{Method, Request, RequestBuilder, Response};
use pipeline::dto::{
    BatchMachinery, FeedbackAck, FeedbackList, FeedbackRequest, HealthReport, JobAck, JobList,
    JobRequest, JobView, UploadList, UploadView, WebhookView,
};
use pipeline::error::ErrorBody;
use pipeline::ops::budgets::BudgetSetting;
use pipeline::ops::dlq::{DlqFilter, DlqList, ReplayAck, ReplayEdit};
use pipeline::ops::metrics::MetricsReport;
use pipeline::ops::spenders::SpendersReport;
use pipeline::ops::tag_usage::TagsReport;
use pipeline::ops::usage::UsageReport;
use pipeline::pause::{Pause, PauseList, Resumed};
use pipeline::rollout::RolloutReport;
use serde::de::DeserializeOwned;
use serde::Deserialize;

pub mod early;
mod error;
pub mod gets;
mod session;
mod upload;

pub use error::ApiError;
pub use session::api_key;
pub use upload::upload_pdfs;

use session::authed;

/// Signs in with `key`: kept for the session once the Worker accepts it (its health report
/// names who it is).
pub async fn sign_in(key: &str) -> Result<HealthReport, ApiError> {
    let key = key.trim();
    let rb = Request::get("/api/health").header("authorization", &format!("Bearer {key}"));
    let a = exchange(rb.build().map_err(network)?).await?;
    let report: HealthReport = match a.status {
        200 | 503 => a.parse()?,
        _ => return Err(a.failure()),
    };
    session::keep(key);
    Ok(report)
}

/// Forgets the session's key.
pub fn sign_out() {
    session::forget();
}

fn network(e: gloo_net::Error) -> ApiError {
    ApiError {
        status: 0,
        message: format!("network error: {e}"),
        field: None,
    }
}

/// A whole answer: its status and text. Every call goes through the one non-generic
/// [`exchange`] future; only the decoding of the text is per type (the SPA's size: a generic
/// `async fn` per answer type was an async state machine per type).
struct Answer {
    status: u16,
    status_text: String,
    text: String,
}

impl Answer {
    fn parse<T: DeserializeOwned>(&self) -> Result<T, ApiError> {
        serde_json::from_str(&self.text).map_err(|e| ApiError {
            status: self.status,
            message: format!("could not read the answer: {e}"),
            field: None,
        })
    }

    /// The contract's error envelope, or what little can be said without one.
    fn failure(&self) -> ApiError {
        match serde_json::from_str::<ErrorBody>(&self.text) {
            Ok(body) => ApiError {
                status: self.status,
                message: body.error,
                field: body.field,
            },
            Err(_) => ApiError {
                status: self.status,
                message: format!("unexpected answer from the server ({})", self.status_text),
                field: None,
            },
        }
    }

    /// Decodes a 2xx answer, or the contract's error envelope.
    fn decode<T: DeserializeOwned>(&self) -> Result<T, ApiError> {
        if (200..300).contains(&self.status) {
            self.parse()
        } else {
            Err(self.failure())
        }
    }
}

/// A `GET` of `url` (a path and query from [`gets`]). gloo-net appends its own query after a
/// `&` whenever the URL already has one, even an empty one (`?minutes=60&`), so the query is
/// handed to it as pairs: the URL sent is the one [`gets`] built, and the one `boot.js` asked.
fn get(url: &str) -> RequestBuilder {
    match url.split_once('?') {
        Some((path, query)) => {
            let pairs: Vec<_> = form_urlencoded::parse(query.as_bytes()).collect();
            Request::get(path).query(pairs.iter().map(|(k, v)| (k.as_ref(), v.as_ref())))
        }
        None => Request::get(url),
    }
}

/// Sends a request and reads its whole answer.
async fn exchange(req: Request) -> Result<Answer, ApiError> {
    read(req.send().await.map_err(network)?).await
}

/// Reads a whole answer.
async fn read(resp: Response) -> Result<Answer, ApiError> {
    Ok(Answer {
        status: resp.status(),
        status_text: resp.status_text(),
        text: resp.text().await.map_err(network)?,
    })
}

/// Sends an authenticated request (with a JSON body when given).
async fn send(rb: RequestBuilder, json: Option<String>) -> Result<Answer, ApiError> {
    let rb = authed(rb);
    let req = match json {
        Some(body) => rb
            .header("content-type", "application/json")
            .body(body)
            .map_err(network)?,
        None => rb.build().map_err(network)?,
    };
    // A page's first GETs may have been asked by `boot.js` already, with the same key.
    if req.method() == Method::GET {
        if let Some(answer) = early::take(&req.url(), api_key().as_deref()) {
            if let Some(resp) = early::response(answer).await {
                return read(resp).await;
            }
        }
    }
    exchange(req).await
}

/// Sends an authenticated request and decodes its answer (see [`Answer::decode`]).
async fn call<T: DeserializeOwned>(rb: RequestBuilder) -> Result<T, ApiError> {
    send(rb, None).await?.decode()
}

/// [`call`] with a JSON body.
async fn call_json<T: DeserializeOwned, B: serde::Serialize + ?Sized>(
    rb: RequestBuilder,
    body: &B,
) -> Result<T, ApiError> {
    let json = serde_json::to_string(body).map_err(|e| ApiError {
        status: 0,
        message: format!("could not write the request: {e}"),
        field: None,
    })?;
    send(rb, Some(json)).await?.decode()
}

/// [`call`] for an answer that is text (a result, a CSV).
async fn call_text(rb: RequestBuilder) -> Result<String, ApiError> {
    let a = send(rb, None).await?;
    if (200..300).contains(&a.status) {
        Ok(a.text)
    } else {
        Err(a.failure())
    }
}

/// `POST /feedback`.
pub async fn submit_feedback(request: &FeedbackRequest) -> Result<FeedbackAck, ApiError> {
    call_json(Request::post("/feedback"), request).await
}

/// `GET /api/feedback`: the newest page.
pub async fn list_feedback() -> Result<FeedbackList, ApiError> {
    call(get(&gets::feedback())).await
}

/// `POST /api/batches/poll`: settle ended Message Batches now.
pub async fn poll_batches() -> Result<BatchMachinery, ApiError> {
    call(Request::post("/api/batches/poll")).await
}

/// `GET /api/health`. A degraded Worker answers 503 with the same report, so both are read.
pub async fn health() -> Result<HealthReport, ApiError> {
    let a = send(get(&gets::health()), None).await?;
    match a.status {
        200 | 503 => a.parse(),
        _ => Err(a.failure()),
    }
}

/// `POST /jobs`.
pub async fn submit_prompt(request: &JobRequest) -> Result<JobAck, ApiError> {
    call_json(Request::post("/jobs"), request).await
}

/// `GET /jobs` with filters (`status`, `priority`, `kind`; empty means any).
pub async fn list_jobs(status: &str, priority: &str, kind: &str) -> Result<JobList, ApiError> {
    call(get(&gets::jobs(status, priority, kind))).await
}

/// `GET /jobs/:id`.
pub async fn get_job(id: &str) -> Result<JobView, ApiError> {
    call(Request::get(&format!("/jobs/{id}"))).await
}

/// `GET /jobs/:id/result`: the text.
pub async fn job_result(id: &str) -> Result<String, ApiError> {
    call_text(Request::get(&format!("/jobs/{id}/result"))).await
}

/// `POST /jobs/:id/cancel`.
pub async fn cancel_job(id: &str) -> Result<JobView, ApiError> {
    call(Request::post(&format!("/jobs/{id}/cancel"))).await
}

/// `GET /batches`: the newest uploads.
pub async fn list_batches() -> Result<UploadList, ApiError> {
    call(get(&gets::batches())).await
}

/// `GET /batches/:id`.
pub async fn get_upload(id: &str) -> Result<UploadView, ApiError> {
    call(Request::get(&format!("/batches/{id}"))).await
}

/// `POST /batches/:id/cancel`.
pub async fn cancel_upload(id: &str) -> Result<UploadView, ApiError> {
    call(Request::post(&format!("/batches/{id}/cancel"))).await
}

/// `GET /api/usage`: tokens and cost by day and model (`from`/`to` as `YYYY-MM-DD`; `user` is
/// for admins; empty means the default).
pub async fn usage(from: &str, to: &str, user: &str) -> Result<UsageReport, ApiError> {
    call(get(&gets::usage("/api/usage", from, to, user))).await
}

/// `GET /api/usage.csv`: the same report as CSV text (the page saves it as a file).
pub async fn usage_csv(from: &str, to: &str, user: &str) -> Result<String, ApiError> {
    call_text(get(&gets::usage("/api/usage.csv", from, to, user))).await
}

/// `GET /api/usage/tags`: cost by `key=value` tag (`user` for admins; an admin without one
/// gets every user's tags).
pub async fn tag_usage(from: &str, to: &str, user: &str) -> Result<TagsReport, ApiError> {
    call(get(&gets::usage("/api/usage/tags", from, to, user))).await
}

/// `GET /api/usage/tags/budgets`: every tag's daily cap and today's commitment.
pub async fn tag_budgets() -> Result<Vec<pipeline::ops::budgets::TagBudgetView>, ApiError> {
    call(Request::get("/api/usage/tags/budgets")).await
}

/// `GET /api/usage/cache`: prompt-cache use per template and model over the days.
pub async fn cache_use(
    from: &str,
    to: &str,
    user: &str,
) -> Result<pipeline::ops::cache_use::CacheReport, ApiError> {
    call(get(&gets::usage("/api/usage/cache", from, to, user))).await
}

/// `GET /api/usage/spenders` (admins): every user's spend over the days, top spenders first.
pub async fn spenders(from: &str, to: &str) -> Result<SpendersReport, ApiError> {
    call(get(&gets::usage("/api/usage/spenders", from, to, ""))).await
}

/// `GET /api/usage/spenders.csv` (admins): the same, one line per user and model.
pub async fn spenders_csv(from: &str, to: &str) -> Result<String, ApiError> {
    call_text(get(&gets::usage("/api/usage/spenders.csv", from, to, ""))).await
}

/// `PUT /api/usage/budget` (admins): a user's daily cap and soft threshold.
pub async fn set_budget(setting: &BudgetSetting) -> Result<BudgetSetting, ApiError> {
    call_json(Request::put("/api/usage/budget"), setting).await
}

/// `POST /api/webhooks/{job_id}/resend` (admins): the job's webhook once more.
pub async fn resend_webhook(job_id: &str) -> Result<Option<WebhookView>, ApiError> {
    call(Request::post(&format!("/api/webhooks/{job_id}/resend"))).await
}

/// `GET /api/pauses` (admins): what is paused.
pub async fn pauses() -> Result<PauseList, ApiError> {
    call(get(&gets::pauses())).await
}

/// `PUT /api/pauses` (admins): pauses a lane, a model or a user.
pub async fn pause(scope: &str, value: &str, reason: &str) -> Result<Pause, ApiError> {
    let reason = Some(reason.trim()).filter(|r| !r.is_empty());
    let body = serde_json::json!({"scope": scope, "value": value.trim(), "reason": reason});
    call_json(Request::put("/api/pauses"), &body).await
}

/// `DELETE /api/pauses/{scope}/{value}` (admins): resumes it.
pub async fn resume(scope: &str, value: &str) -> Result<Resumed, ApiError> {
    let value = String::from(js_sys::encode_uri_component(value));
    let path = format!("/api/pauses/{scope}/{value}");
    call(Request::delete(&path)).await
}

/// `GET /api/metrics` (admins): the last `minutes` of metrics rows.
pub async fn metrics(minutes: u32) -> Result<MetricsReport, ApiError> {
    call(get(&gets::metrics(minutes))).await
}

/// `GET /api/rollout` (admins): the two paths of `POST /api/claude` over the last `hours`.
pub async fn rollout(hours: u32) -> Result<RolloutReport, ApiError> {
    call(get(&gets::rollout(hours))).await
}

/// `GET /api/routing` (admins): the deadline router's figures over the last `days`.
pub async fn routing(days: u32) -> Result<pipeline::routing::RoutingReport, ApiError> {
    call(get(&gets::routing(days))).await
}

/// `GET /api/routes` (admins): each route's breakers, errors and cost over the last hour.
pub async fn routes() -> Result<pipeline::ops::route_health::RoutesReport, ApiError> {
    call(get(&gets::routes())).await
}

/// `GET /api/reconciliation` (admins): the last comparison with Anthropic's cost report.
pub async fn reconciliation() -> Result<pipeline::ops::reconcile::ReconciliationRun, ApiError> {
    call(get(&gets::reconciliation())).await
}

/// `GET /api/dlq` (admins): one page of dead letters (or failed jobs) matching `filter`, from
/// `cursor` on.
pub async fn list_dlq(filter: &DlqFilter, cursor: Option<&str>) -> Result<DlqList, ApiError> {
    call(get(&gets::dlq(filter, cursor))).await
}

/// `POST /api/dlq/:id/replay` (admins): a new job from a dead letter, with optional edits.
pub async fn replay_dlq(id: &str, edit: Option<&ReplayEdit>) -> Result<ReplayAck, ApiError> {
    let rb = Request::post(&format!("/api/dlq/{id}/replay"));
    match edit {
        Some(e) => call_json(rb, e).await,
        None => call(rb).await,
    }
}

/// `POST /api/dlq/replay` (admins): replays up to 100 jobs matching `filter` (`more` says
/// whether others remain).
pub async fn replay_matching(filter: &DlqFilter) -> Result<ReplayAck, ApiError> {
    call_json(Request::post("/api/dlq/replay"), filter).await
}

/// `POST /api/ops/bulk` (admins): counts, or acts on one slice of, the jobs a filter matches.
pub async fn bulk(
    req: &pipeline::ops::bulk::BulkRequest,
) -> Result<pipeline::ops::bulk::BulkReport, ApiError> {
    call_json(Request::post("/api/ops/bulk"), req).await
}

/// The answer of a discard: the job stays for the record, out of the triage list.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Discarded {
    pub id: String,
    pub discarded_at: i64,
}

/// `POST /api/dlq/:id/discard` (admins).
pub async fn discard_dlq(id: &str) -> Result<Discarded, ApiError> {
    call(Request::post(&format!("/api/dlq/{id}/discard"))).await
}
