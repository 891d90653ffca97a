//! JSON shapes shared by the Worker (which serves them) and the SPA (which reads them).

use crate::money::UsdMicros;
use serde::{Deserialize, Serialize};

mod machinery;
mod requests;
pub use machinery::{BatchMachinery, FlushReport, PollReport, RecoveryReport};
pub use requests::{FeedbackRequest, JobRequest, KeyRequest};

use crate::feedback::Analysis;
use crate::identity::{AuthMode, Role};
use crate::status::{Kind, Lane, Mode, Status};

/// `GET /api/health`: what the Worker found when it touched each binding. Users learn only
/// whether the service is up (and who they are); the checks, the Anthropic target and the
/// heartbeats are for admins.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HealthReport {
    /// True when every check passed.
    pub ok: bool,
    pub version: String,
    pub auth_mode: AuthMode,
    /// Who the caller was resolved as.
    pub user_id: String,
    pub role: Role,
    /// Where Anthropic calls go, and whether a real API key is configured (admins).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anthropic: Option<AnthropicTarget>,
    /// Every binding's check (admins).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<Check>,
    /// Last cron run (epoch ms), from its D1 heartbeat.
    pub cron_last_run_at: Option<i64>,
    /// Last health ping handled by the high-lane consumer (epoch ms)…
    pub queue_last_consumed_at: Option<i64>,
    /// …and when that ping was sent.
    pub queue_last_ping_sent_at: Option<i64>,
    pub now: i64,
}

/// One binding check of the health report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Check {
    /// `d1`, `r2`, `durable_object`, `queue_high`, …
    pub name: String,
    pub ok: bool,
    /// What was found (a count, an object size, the DO's answer) or the error.
    pub detail: String,
    pub latency_ms: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AnthropicTarget {
    pub base_url: String,
    /// `simulator` for a loopback base URL, `anthropic` otherwise.
    pub kind: String,
    pub key_configured: bool,
    /// PDFs go to the Files API and are read by `file_id`; `false`: as base64
    /// (`ANTHROPIC_FILES_API=off`, or this isolate saw the base URL answer 404 on `/v1/files`).
    #[serde(default)]
    pub files_api: bool,
}

impl AnthropicTarget {
    /// Describes the base URL: anything on loopback is the local simulator.
    pub fn describe(base_url: &str, key_configured: bool) -> AnthropicTarget {
        let host = base_url
            .split("://")
            .nth(1)
            .unwrap_or(base_url)
            .split(['/', ':'])
            .next()
            .unwrap_or_default();
        let local = matches!(host, "127.0.0.1" | "localhost" | "[::1]");
        AnthropicTarget {
            base_url: base_url.to_owned(),
            kind: if local { "simulator" } else { "anthropic" }.into(),
            key_configured,
            files_api: false,
        }
    }
}

/// Queue messages carry ids only (the claim-check: bodies live in D1 and R2, and Queues cap
/// messages at 128 KB).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum QueueMessage {
    /// A health ping: the consumer records a heartbeat and acks it.
    Ping { sent_at: i64 },
    /// Run this job.
    Job { id: String },
}

/// What a job (or an upload, summed over its files) has spent so far: tokens of each kind and
/// their cost. Views embed it flattened, so its fields sit at the top level of their JSON.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Spend {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_write_tokens: u64,
    pub cache_read_tokens: u64,
    pub cost_micros: UsdMicros,
    /// The model that answered is not in the price table: `cost_micros` is not its cost.
    #[serde(default)]
    pub cost_unknown: bool,
}

impl Spend {
    /// One answer's usage and its cost (`None`: the model has no price, the cost unknown).
    pub fn of(u: &crate::anthropic::Usage, cost: Option<UsdMicros>) -> Spend {
        Spend {
            input_tokens: u.input_tokens.into(),
            output_tokens: u.output_tokens.into(),
            cache_write_tokens: u.cache_creation_input_tokens.into(),
            cache_read_tokens: u.cache_read_input_tokens.into(),
            cost_micros: cost.unwrap_or_default(),
            cost_unknown: cost.is_none(),
        }
    }

    /// Token counts for people: `12 in · 40 out · 0 cache write · 3 cache read`.
    pub fn tokens_text(&self) -> String {
        format!(
            "{} in · {} out · {} cache write · {} cache read",
            self.input_tokens, self.output_tokens, self.cache_write_tokens, self.cache_read_tokens
        )
    }

    /// The cost for people: `$0.000303`, or `unknown` when the model has no price.
    pub fn cost_text(&self) -> String {
        if self.cost_unknown {
            "unknown".into()
        } else {
            self.cost_micros.usd()
        }
    }
}

/// Tokens and cost as D1 answers them: a job's columns, or a group's sums under the same names.
/// Rows embed it flattened; [`SpendColumns::spend`] makes the view's [`Spend`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpendColumns {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_write_tokens: u64,
    #[serde(default)]
    pub cache_read_tokens: u64,
    #[serde(default)]
    pub cost_micros: UsdMicros,
}

impl SpendColumns {
    /// The spend these columns hold; `cost_unknown`: some of it has no price.
    pub fn spend(self, cost_unknown: bool) -> Spend {
        Spend {
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            cache_write_tokens: self.cache_write_tokens,
            cache_read_tokens: self.cache_read_tokens,
            cost_micros: self.cost_micros,
            cost_unknown,
        }
    }
}

impl std::ops::Add for Spend {
    type Output = Spend;
    fn add(self, o: Spend) -> Spend {
        Spend {
            input_tokens: self.input_tokens + o.input_tokens,
            output_tokens: self.output_tokens + o.output_tokens,
            cache_write_tokens: self.cache_write_tokens + o.cache_write_tokens,
            cache_read_tokens: self.cache_read_tokens + o.cache_read_tokens,
            cost_micros: self.cost_micros + o.cost_micros,
            cost_unknown: self.cost_unknown || o.cost_unknown,
        }
    }
}

impl std::iter::Sum for Spend {
    fn sum<I: Iterator<Item = Spend>>(iter: I) -> Spend {
        iter.fold(Spend::default(), |a, b| a + b)
    }
}

/// `POST /feedback` → 202, the seed's shape exactly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FeedbackAck {
    pub ok: bool,
    pub status: Status,
    pub id: String,
    pub mode: Mode,
    /// What the caller should know (a deprecated model with its retirement date).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// `GET /api/feedback/:id`: one feedback job as the API shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FeedbackView {
    pub id: String,
    pub kind: Kind,
    pub status: Status,
    pub mode: Mode,
    pub lane: Lane,
    pub source: String,
    /// The feedback itself.
    pub text: String,
    pub model: String,
    /// The structured analysis, once completed.
    pub analysis: Option<Analysis>,
    /// The model's raw answer, when there is one (also kept when it could not be parsed).
    pub raw_text: Option<String>,
    pub attempts: u32,
    pub anthropic_batch_id: Option<String>,
    /// Tokens and cost so far (flattened: the fields sit at the top level).
    #[serde(flatten)]
    pub spend: Spend,
    pub error: Option<String>,
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub completed_at: Option<i64>,
    /// When it expires if it has not run (`expires_in_s`).
    #[serde(default)]
    pub expires_at: Option<i64>,
    /// Held back by a pause since then (as on [`JobView`]).
    #[serde(default)]
    pub held_at: Option<i64>,
    /// Ticking while in flight, frozen at the real total once terminal.
    pub elapsed_ms: i64,
}

/// `POST /jobs` → 202, the seed's shape exactly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct JobAck {
    #[serde(rename = "jobId")]
    pub job_id: String,
    pub status: Status,
    #[serde(rename = "pollUrl")]
    pub poll_url: String,
    /// What the caller should know (a deprecated model with its retirement date).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl JobAck {
    pub fn queued(job_id: &str) -> JobAck {
        JobAck {
            job_id: job_id.to_owned(),
            status: Status::Queued,
            poll_url: format!("/jobs/{job_id}"),
            warnings: Vec::new(),
        }
    }

    /// With the warnings a job on `model` carries at `now_ms`, then `more`.
    pub fn warned(self, model: &str, now_ms: i64, more: &[String]) -> JobAck {
        let mut warnings = crate::models::job_warnings(model, now_ms);
        warnings.extend_from_slice(more);
        JobAck { warnings, ..self }
    }
}

/// A job's completion webhook (`pipeline::webhooks`): where it goes, its state (`pending`,
/// `delivered`, `failed`) and every attempt, re-sends included.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WebhookView {
    /// The `webhook-id` of every attempt.
    pub id: String,
    pub url: String,
    pub state: String,
    pub attempts_made: u32,
    /// When the next attempt is due (pending).
    pub next_at: Option<i64>,
    pub attempts: Vec<WebhookAttemptView>,
}

/// One attempt to post a webhook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WebhookAttemptView {
    pub n: u32,
    pub at: i64,
    /// The receiver's status, `None` when it did not answer (network error, timeout).
    pub status: Option<u16>,
    pub error: Option<String>,
    pub ms: i64,
    /// An admin's re-send.
    pub resend: bool,
}

/// `GET /jobs/:id`: any job, as the jobs API shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct JobView {
    pub id: String,
    pub kind: Kind,
    pub status: Status,
    pub priority: Lane,
    pub mode: Mode,
    /// The model that answered (or will be asked).
    pub model: String,
    pub attempts: u32,
    /// Tokens and cost so far (flattened: the fields sit at the top level).
    #[serde(flatten)]
    pub spend: Spend,
    pub error: Option<String>,
    pub anthropic_batch_id: Option<String>,
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub completed_at: Option<i64>,
    pub expires_at: Option<i64>,
    /// Held back by a pause (a lane, its model or its user) since then: it waits, queued,
    /// until an admin resumes (`GET /api/pauses`).
    #[serde(default)]
    pub held_at: Option<i64>,
    pub elapsed_ms: i64,
    /// Where the result text is, once completed.
    pub result_url: Option<String>,
    /// A `POST /api/claude` call: the path that answered it (`direct` or `queue`).
    #[serde(default)]
    pub path: Option<crate::status::CallPath>,
    /// Its completion webhook, when it names a `callback_url`: the delivery and every attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<WebhookView>,
    /// Every call made for the job, oldest first.
    #[serde(default)]
    pub attempt_log: Vec<AttemptView>,
    /// Its `key=value` tags, sorted (`pipeline::tags`).
    #[serde(default)]
    pub tags: Vec<String>,
    /// When its answer is needed (epoch ms), if it set `deadline_s` or `deadline_at`.
    #[serde(default)]
    pub deadline_at: Option<i64>,
    /// Why the deadline router chose its path (`pipeline::routing::Reason`):
    /// `deadline_allows_batch`, `deadline_too_close_for_batch` or `batch_ran_late` (moved from
    /// its batch to a synchronous call); `mode` is the path that answered.
    #[serde(default)]
    pub route_reason: Option<String>,
    /// Whether it ended by its deadline (once ended, with a deadline).
    #[serde(default)]
    pub deadline_met: Option<bool>,
    /// The model it is retried on if its model refuses (its own, or the operator's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_model: Option<String>,
    /// Its refused attempt, once a refusal moved it to its fallback: the model that refused,
    /// `stop_details` and what that attempt cost (included in the totals above).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<RefusalView>,
    /// `fast` when fast mode answered it (`usage.speed`), priced at the model's fast rates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<crate::anthropic::Speed>,
    /// The provider whose route answered it, when not the Anthropic API (`bedrock`, `vertex`:
    /// the Anthropic API was down; priced at that route's price).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<crate::models::providers::Provider>,
    /// What the caller should know (a deprecated model with its retirement date).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// One call made for a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AttemptView {
    pub n: u32,
    pub model: Option<String>,
    pub started_at: i64,
    pub ended_at: i64,
    pub outcome: crate::outcome::AttemptOutcome,
    pub error: Option<String>,
    /// The provider the call went to, when not the Anthropic API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<crate::models::providers::Provider>,
}

/// `GET /jobs`: the caller's jobs, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct JobList {
    pub items: Vec<JobView>,
    pub next_cursor: Option<String>,
}

/// `GET /api/feedback`: newest first; `next_cursor` fetches the following page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FeedbackList {
    pub items: Vec<FeedbackView>,
    pub next_cursor: Option<String>,
}

/// The refused attempt kept on its job (`jobs.refusal`, JSON): what the job page shows and what
/// migration 0023's trigger counts under `model` in the usage rollups and against the caps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RefusalView {
    /// The model that refused.
    pub model: String,
    /// The attempt number of the refused call.
    pub n: u32,
    /// When it was settled (epoch ms).
    pub at: i64,
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "Option<serde_json::Value>"))]
    pub stop_details: Option<crate::anthropic::StopDetails>,
    /// The model it fell back to.
    pub fallback_model: String,
    /// Where the refused answer is kept in R2.
    pub result_key: String,
    /// What the refused attempt cost (flattened).
    #[serde(flatten)]
    pub spend: Spend,
}

impl RefusalView {
    /// `refused by claude-fable-5-2, category "cyber": Declined by a classifier; retried once
    /// on claude-opus-5-5`.
    pub fn describe(&self) -> String {
        let details = self
            .stop_details
            .as_ref()
            .map(|d| d.describe())
            .unwrap_or_default();
        format!(
            "refused by {}{}; retried once on {}",
            self.model,
            details.trim_end_matches('.'),
            self.fallback_model
        )
    }
}

#[cfg(test)]
mod tests;

/// `POST /batches` → 202, the seed's shape exactly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UploadAck {
    #[serde(rename = "batchId")]
    pub batch_id: String,
    pub total: u32,
    #[serde(rename = "pollUrl")]
    pub poll_url: String,
}

/// One file of an upload, as `GET /batches/:id` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UploadFile {
    pub index: u32,
    pub job_id: String,
    /// Cleaned for display; never a path.
    pub file_name: String,
    pub file_size: u64,
    pub status: Status,
    pub error: Option<String>,
    /// Tokens and cost so far (flattened: the fields sit at the top level).
    #[serde(flatten)]
    pub spend: Spend,
    /// The structured extraction, once completed.
    pub extraction: Option<crate::pdf::Extraction>,
    /// `/jobs/<id>/result`, once completed.
    pub result_url: Option<String>,
    pub completed_at: Option<i64>,
}

/// `GET /batches/:id`: an upload's totals and its files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UploadView {
    pub id: String,
    pub mode: Mode,
    pub template: crate::pdf::Template,
    pub total: u32,
    /// Files in a terminal status.
    pub done: u32,
    /// Files by status.
    pub counts: std::collections::BTreeMap<String, u32>,
    /// The files' tokens and cost, summed (`cost_unknown` when any file's is).
    #[serde(flatten)]
    pub spend: Spend,
    pub created_at: i64,
    /// When the last file ended, once all have.
    pub completed_at: Option<i64>,
    /// Ticking until every file has ended, then frozen.
    pub elapsed_ms: i64,
    pub canceled_at: Option<i64>,
    pub files: Vec<UploadFile>,
}

/// One upload in `GET /batches`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UploadSummary {
    pub id: String,
    pub mode: Mode,
    pub template: crate::pdf::Template,
    pub total: u32,
    pub done: u32,
    pub completed: u32,
    pub cost_micros: UsdMicros,
    pub created_at: i64,
    pub canceled_at: Option<i64>,
}

/// `GET /batches`: newest first; `next_cursor` fetches the following page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UploadList {
    pub items: Vec<UploadSummary>,
    pub next_cursor: Option<String>,
}

/// An API key as admins see it (never the key itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct KeyView {
    pub id: String,
    pub user_id: String,
    pub role: Role,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
}

/// `POST /api/keys` → 201: the key, shown this once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct KeyCreated {
    pub id: String,
    pub key: String,
    pub user_id: String,
    pub role: Role,
    pub created_at: i64,
    /// The secret that signs this key's webhooks (`whsec_…`), shown once, like the key.
    #[serde(default)]
    pub webhook_secret: String,
    /// The key's default `callback_url` for the jobs it submits.
    #[serde(default)]
    pub callback_url: Option<String>,
}

/// `GET /api/keys`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct KeyList {
    pub items: Vec<KeyView>,
}

/// A completion webhook's body (`job.ended`, Standard Webhooks: a type, a timestamp, the data),
/// posted to the job's `callback_url` with `webhook-id`, `webhook-timestamp` and
/// `webhook-signature` headers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WebhookEvent {
    /// Always `job.ended`.
    #[serde(rename = "type")]
    pub kind: String,
    /// When the body was made (RFC 3339).
    pub timestamp: String,
    /// The job's final view (`null` if the job was deleted meanwhile).
    pub data: Option<JobView>,
}

impl WebhookEvent {
    pub const JOB_ENDED: &'static str = "job.ended";
}

/// The webhook's message about a dead-lettered job (Slack-compatible: `text` is what a channel
/// shows).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct DeadLetterEvent {
    /// Always `job.failed`.
    pub event: String,
    pub job_id: String,
    pub user_id: String,
    pub kind: Kind,
    pub created_at: i64,
    pub error: String,
    pub text: String,
}

/// `GET /api/budget` (admins): what the BUDGET Durable Object holds, and the spend-limit alerts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BudgetReport {
    pub enforce: bool,
    pub configured: crate::budget::Limits,
    pub classes: Vec<crate::budget::ClassView>,
    pub lanes: LanesInFlight,
    /// Calls reserved and not yet settled.
    pub reservations: u64,
    pub granted: u64,
    pub refused: u64,
    pub rate_limited: u64,
    pub alerts: BudgetAlerts,
}

/// Calls in flight per lane.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LanesInFlight {
    pub high: crate::budget::LaneView,
    pub bulk: crate::budget::LaneView,
}

/// Alerts the budget raised.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BudgetAlerts {
    /// 429s without `retry-after`: a spend limit, not a rate limit.
    pub spend_limit_429s: u64,
}

/// `POST /api/claude`'s answer when the call completed (on either path).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ClaudeAnswer {
    /// Which path answered.
    pub path: crate::status::CallPath,
    /// The job that recorded the call (on either path).
    #[serde(rename = "jobId")]
    pub job_id: Option<String>,
    pub text: String,
    pub model: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_micros: Option<UsdMicros>,
}

/// `POST /api/dlq/:id/discard`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Discarded {
    pub id: String,
    pub discarded_at: i64,
}
