//! The OpenAPI 3.1 document of the JSON API, built from the route table below and the JSON
//! Schemas of the DTOs themselves (`schemars`, following their serde attributes), so a field
//! added to a DTO is in the document at the next build. The Worker's build script writes it and
//! the Worker serves it at `GET /api/openapi.json`; nothing of this module is in the wasm bundle.
//!
//! The route table is the contract's list of routes: a host test checks it against the
//! router's `.route(...)` calls, and the API suite sends every request example in it to the
//! running stack and checks each answer against the schema documented for its status.
//! OpenAPI 3.1: <https://spec.openapis.org/oas/v3.1.0> (its Schema Object is JSON Schema
//! draft 2020-12, which is what schemars writes).

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{json, Map, Value};

use pipeline::dto::*;
use pipeline::error::ErrorBody;
use pipeline::ops::budgets::BudgetSetting;
use pipeline::ops::bulk::{BulkAuditList, BulkReport, BulkRequest};
use pipeline::ops::cache_use::CacheReport;
use pipeline::ops::dlq::{DlqFilter, DlqList, ReplayAck, ReplayEdit};
use pipeline::ops::metrics::MetricsReport;
use pipeline::ops::reconcile::ReconciliationRun;
use pipeline::ops::rollups::{Rebuilt, RollupCheck};
use pipeline::ops::route_health::RoutesReport;
use pipeline::ops::spenders::SpendersReport;
use pipeline::ops::tag_usage::TagsReport;
use pipeline::ops::usage::UsageReport;
use pipeline::pause::{Pause, PauseList, PauseRequest, Resumed};
use pipeline::retention::{Removed, RetentionView};
use pipeline::routing::RoutingReport;

type SchemaFn = fn(&mut SchemaGenerator) -> Schema;

fn of<T: JsonSchema>(g: &mut SchemaGenerator) -> Schema {
    g.subschema_for::<T>()
}

/// Who may call a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Anyone, no key.
    Public,
    /// Any caller: a user's key (or, with `AUTH_MODE=open`, the `x-user-id` header).
    Caller,
    /// An admin's key.
    Admin,
    /// An admin's key or the scrape token (`METRICS_SCRAPE_TOKEN`) as a bearer.
    Scraper,
}

/// Where a parameter goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum In {
    Path,
    Query,
    Header,
}

/// One parameter: its place, name, JSON Schema type and meaning.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    pub place: In,
    pub name: &'static str,
    pub schema: fn() -> Value,
    pub description: &'static str,
}

/// What a route reads from its body.
#[derive(Debug, Clone, Copy)]
pub enum Body {
    None,
    /// A JSON body of this type; `required: false` when an empty body is accepted too.
    Json {
        schema: SchemaFn,
        example: fn() -> Value,
        required: bool,
    },
    /// `multipart/form-data` with the PDFs (`POST /batches`).
    PdfForm,
}

/// What an answer's body is.
#[derive(Debug, Clone, Copy)]
pub enum Content {
    Json(SchemaFn),
    Csv,
    Prometheus,
    /// A stored result: text, or the JSON of an extraction.
    Result,
}

/// One documented answer.
#[derive(Debug, Clone, Copy)]
pub struct Answer {
    pub status: u16,
    pub description: &'static str,
    pub content: Content,
}

/// One route of the JSON API.
#[derive(Debug, Clone, Copy)]
pub struct Route {
    pub method: &'static str,
    pub path: &'static str,
    pub operation_id: &'static str,
    pub tag: &'static str,
    pub summary: &'static str,
    pub access: Access,
    pub params: &'static [Param],
    pub body: Body,
    pub answers: &'static [Answer],
    /// Error statuses besides the ones every route of its access may answer.
    pub errors: &'static [u16],
}

impl Route {
    /// A route with no parameters, no body, no answers and no errors of its own yet.
    const fn new(
        method: &'static str,
        path: &'static str,
        operation_id: &'static str,
        tag: &'static str,
        access: Access,
        summary: &'static str,
    ) -> Route {
        Route {
            method,
            path,
            operation_id,
            tag,
            summary,
            access,
            params: &[],
            body: Body::None,
            answers: &[],
            errors: &[],
        }
    }

    const fn params(self, params: &'static [Param]) -> Route {
        Route { params, ..self }
    }

    const fn body(self, body: Body) -> Route {
        Route { body, ..self }
    }

    const fn answers(self, answers: &'static [Answer]) -> Route {
        Route { answers, ..self }
    }

    const fn errors(self, errors: &'static [u16]) -> Route {
        Route { errors, ..self }
    }
}

/// An answer with a JSON body of the schema `schema`.
const fn json(status: u16, description: &'static str, schema: SchemaFn) -> Answer {
    answer(status, description, Content::Json(schema))
}

const fn answer(status: u16, description: &'static str, content: Content) -> Answer {
    Answer {
        status,
        description,
        content,
    }
}

fn string() -> Value {
    json!({"type": "string"})
}
fn day() -> Value {
    json!({"type": "string", "format": "date", "examples": ["2026-12-01"]})
}
fn limit() -> Value {
    json!({"type": "integer", "minimum": 1, "maximum": 100, "default": 20})
}

const fn path(name: &'static str, description: &'static str) -> Param {
    Param {
        place: In::Path,
        name,
        schema: string,
        description,
    }
}
const fn query(name: &'static str, schema: fn() -> Value, description: &'static str) -> Param {
    Param {
        place: In::Query,
        name,
        schema,
        description,
    }
}

const JOB_ID: Param = path("id", "A job id, as its acknowledgement gave it.");
const CURSOR: Param = query("cursor", string, "The `next_cursor` of the previous page.");
const LIMIT: Param = query("limit", limit, "Items per page: 1 to 100 (default 20).");
const FROM: Param = query(
    "from",
    day,
    "First UTC day (YYYY-MM-DD); default 30 days before `to`.",
);
const TO: Param = query(
    "to",
    day,
    "Last UTC day, included (YYYY-MM-DD); default today.",
);
const IDEMPOTENCY_KEY: Param = Param {
    place: In::Header,
    name: "Idempotency-Key",
    schema: string,
    description: "1 to 255 visible ASCII characters. The same key with the same body answers \
                  the first acknowledgement again (and nothing runs twice); with another body it \
                  is a 422. Kept 24 hours.",
};

fn feedback_example() -> Value {
    json!({"text": "The export to CSV crashes every time I pick more than a month.", "mode": "sync"})
}
fn job_example() -> Value {
    json!({"prompt": "Summarise these release notes in three bullet points: faster exports, \
                      a new dashboard, fixed sign-in loops.",
           "priority": "bulk", "max_tokens": 256})
}
fn claude_example() -> Value {
    json!({"prompt": "Name the three colours of the French flag.", "max_tokens": 1024})
}
fn key_example() -> Value {
    json!({"user_id": "alice", "role": "user"})
}
fn tag_budget_example() -> Value {
    json!({"tag": "team=search", "daily_cap_micros": 25_000_000})
}

fn budget_example() -> Value {
    json!({"user_id": "alice", "daily_cap_micros": 5_000_000, "monthly_cap_micros": 100_000_000,
           "soft_micros": 4_000_000})
}
fn pause_example() -> Value {
    json!({"scope": "model", "value": "claude-opus-5-5", "reason": "error rate above 20 %"})
}
fn replay_example() -> Value {
    json!({"model": "claude-sonnet-5-5", "max_tokens": 512})
}
fn bulk_replay_example() -> Value {
    json!({"status": "dead_lettered", "user": "alice"})
}
fn bulk_action_example() -> Value {
    json!({"action": "cancel", "filter": {"tag": "run=nightly", "lane": "bulk"},
           "dry_run": true, "reason": "the nightly run is no longer needed"})
}

const ACCEPTED_JOB: Answer = Answer {
    status: 202,
    description: "Queued (or the same key's earlier acknowledgement).",
    content: Content::Json(of::<JobAck>),
};

/// Every route of the JSON API, in the router's order: a table, one line per route's
/// method, path, operation id, tag, access and summary (kept so by `rustfmt::skip`).
#[rustfmt::skip]
pub const ROUTES: &[Route] = &[
    Route::new("get", "/api/health", "health", "ops", Access::Caller, "The checks of D1, R2, the queues, the budget object, the cron and the model API")
    .answers(&[
        json(200, "Every check passes.", of::<HealthReport>),
        json(503, "A check fails (named in `checks`).", of::<HealthReport>),
    ]),
    Route::new("post", "/feedback", "submitFeedback", "feedback", Access::Caller, "Submit a feedback text for analysis (sentiment, topics, summary)")
    .params(&[IDEMPOTENCY_KEY])
    .body(Body::Json {
        schema: of::<FeedbackRequest>,
        example: feedback_example,
        required: true,
    })
    .answers(&[json(202, "Queued.", of::<FeedbackAck>)])
    .errors(&[413, 415, 422, 429]),
    Route::new("get", "/api/feedback", "listFeedback", "feedback", Access::Caller, "The caller's feedback jobs, newest first")
    .params(&[CURSOR, LIMIT])
    .answers(&[json(200, "A page.", of::<FeedbackList>)]),
    Route::new("get", "/api/feedback/{id}", "getFeedback", "feedback", Access::Caller, "One feedback job with its analysis once completed")
    .params(&[JOB_ID])
    .answers(&[json(200, "The job.", of::<FeedbackView>)])
    .errors(&[404]),
    Route::new("post", "/api/batches/poll", "pollBatches", "ops", Access::Admin, "Run the batch machinery now: flush what is due, poll submitted batches, recover")
    .answers(&[json(200, "What the run did.", of::<BatchMachinery>)]),
    Route::new("post", "/api/batches/flush", "flushBatches", "ops", Access::Admin, "The same, with every waiting batch-mode job flushed now, due or not")
    .answers(&[json(200, "What the run did.", of::<BatchMachinery>)]),
    Route::new("post", "/api/claude", "callClaude", "jobs", Access::Caller, "One synchronous Messages call, answered in the response (recorded as a job)")
    .body(Body::Json {
        schema: of::<JobRequest>,
        example: claude_example,
        required: true,
    })
    .answers(&[
        json(200, "The model's answer.", of::<ClaudeAnswer>),
        json(202, "Inside the queue rollout and not done in time: poll the job.", of::<JobAck>),
    ])
    .errors(&[413, 415, 429, 502, 503]),
    Route::new("get", "/api/rollout", "getRollout", "ops", Access::Admin, "Direct and queued calls compared over the last hours")
    .params(&[query("hours", || json!({"type": "integer", "minimum": 1, "maximum": 720, "default": 48}), "The window, in hours.")])
    .answers(&[json(200, "The comparison.", of::<pipeline::rollout::RolloutReport>)]),
    Route::new("get", "/api/budget", "getBudget", "ops", Access::Admin, "The token budget object: limits, what is in use, lanes in flight, alerts")
    .answers(&[json(200, "The budget.", of::<BudgetReport>)]),
    Route::new("post", "/api/keys", "createKey", "keys", Access::Admin, "Create an API key (shown once, with its webhook secret)")
    .body(Body::Json {
        schema: of::<KeyRequest>,
        example: key_example,
        required: true,
    })
    .answers(&[json(201, "The key, shown this once.", of::<KeyCreated>)])
    .errors(&[413, 415]),
    Route::new("get", "/api/keys", "listKeys", "keys", Access::Admin, "Every API key (never the secret)")
    .answers(&[json(200, "The keys.", of::<KeyList>)]),
    Route::new("delete", "/api/keys/{id}", "revokeKey", "keys", Access::Admin, "Revoke an API key")
    .params(&[path("id", "The key's id (`key_…`).")])
    .answers(&[json(200, "The revoked key.", of::<KeyView>)])
    .errors(&[404]),
    Route::new("get", "/api/usage", "getUsage", "usage", Access::Caller, "A user's tokens, cost and jobs per day and model, with budgets")
    .params(&[FROM, TO, query("user", string, "Another user's usage (admins); the caller's own by default.")])
    .answers(&[json(200, "The report.", of::<UsageReport>)]),
    Route::new("get", "/api/usage.csv", "getUsageCsv", "usage", Access::Caller, "The same report as CSV, a row per day and model")
    .params(&[FROM, TO, query("user", string, "Another user's usage (admins).")])
    .answers(&[answer(200, "The CSV (an attachment).", Content::Csv)]),
    Route::new("put", "/api/usage/budget", "setBudget", "usage", Access::Admin, "Set a user's daily and monthly caps and soft threshold (null removes one)")
    .body(Body::Json {
        schema: of::<BudgetSetting>,
        example: budget_example,
        required: true,
    })
    .answers(&[json(200, "The setting stored.", of::<BudgetSetting>)])
    .errors(&[413, 415]),
    Route::new("get", "/api/usage/spenders", "getSpenders", "usage", Access::Admin, "Cost, tokens and jobs by user and model over a range, top spenders first")
    .params(&[
        FROM,
        TO,
        query("limit", || json!({"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}), "Users in the report; the rest are summed in `others`."),
    ])
    .answers(&[json(200, "The report.", of::<SpendersReport>)]),
    Route::new("get", "/api/usage/spenders.csv", "getSpendersCsv", "usage", Access::Admin, "The same as CSV, a row per user and model")
    .params(&[FROM, TO])
    .answers(&[answer(200, "The CSV (an attachment).", Content::Csv)]),
    Route::new("put", "/api/usage/tags/budget", "setTagBudget", "usage", Access::Admin, "Set (or with null remove) a tag's daily cap")
    .body(Body::Json {
        schema: of::<pipeline::ops::budgets::TagBudgetSetting>,
        example: tag_budget_example,
        required: true,
    })
    .answers(&[json(200, "The setting in force. Jobs whose reservation would take the tag past its cap are refused with a 429 `tag_budget_exceeded` naming `tags`.", of::<pipeline::ops::budgets::TagBudgetSetting>)])
    .errors(&[413, 415]),
    Route::new("get", "/api/usage/tags/budgets", "listTagBudgets", "usage", Access::Caller, "Every tag's daily cap and what its jobs committed today")
    .answers(&[json(200, "The caps, by tag.", of::<Vec<pipeline::ops::budgets::TagBudgetView>>)]),
    Route::new("get", "/api/usage/cache", "getCacheUse", "usage", Access::Caller, "Prompt-cache use per template and model: hit rate, tokens read, money saved")
    .params(&[FROM, TO, query("user", string, "One user's jobs (admins; admins see every user's without it, users their own).")])
    .answers(&[json(200, "The lines, most saved first, with totals.", of::<CacheReport>)]),
    Route::new("get", "/api/usage/tags", "getTagUsage", "usage", Access::Caller, "Cost, tokens and jobs by key=value tag and model over a range, dearest first")
    .params(&[
        FROM,
        TO,
        query("user", string, "One user's jobs (admins; admins see every user's without it, users their own)."),
        query("limit", || json!({"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}), "Tags in the report; the rest are counted in `others`."),
    ])
    .answers(&[json(200, "The report. A job with two tags counts under each.", of::<TagsReport>)]),
    Route::new("get", "/api/usage/tags.csv", "getTagUsageCsv", "usage", Access::Caller, "The same as CSV, a row per tag and model")
    .params(&[FROM, TO, query("user", string, "One user's jobs (admins).")])
    .answers(&[answer(200, "The CSV (an attachment).", Content::Csv)]),
    Route::new("get", "/api/usage/rollups", "checkRollups", "usage", Access::Admin, "The usage rollup compared with a full scan of the jobs over a range")
    .params(&[FROM, TO])
    .answers(&[json(200, "The comparison (`consistent`, and any difference).", of::<RollupCheck>)]),
    Route::new("get", "/api/retention", "getRetention", "ops", Access::Admin, "What is kept and for how long, and what the last run removed")
    .answers(&[json(200, "The policy and the last run.", of::<RetentionView>)]),
    Route::new("get", "/api/routing", "getRouting", "ops", Access::Admin, "Deadline routing: jobs routed, deadlines met or missed, money saved")
    .params(&[query("days", string, "Days back, 1 to 90; default 7.")])
    .answers(&[json(200, "The figures over the window, and the router's settings.", of::<RoutingReport>)]),
    Route::new("get", "/api/reconciliation", "getReconciliation", "ops", Access::Admin, "The last comparison of our costs with Anthropic's cost report")
    .answers(&[json(200, "Per UTC day and model: ours, billed, the difference, flagged lines. 404 before the first run; 409 `not_configured` without `ANTHROPIC_ADMIN_KEY`.", of::<ReconciliationRun>)])
    .errors(&[404, 409]),
    Route::new("post", "/api/reconciliation/run", "runReconciliation", "ops", Access::Admin, "Compare our costs with Anthropic's cost report now (at most 31 days)")
    .params(&[FROM, TO])
    .answers(&[json(200, "The comparison, also kept for `GET /api/reconciliation`; each flagged line raises an alert. 409 `not_configured` without `ANTHROPIC_ADMIN_KEY`, 502 when the report cannot be read.", of::<ReconciliationRun>)])
    .errors(&[400, 409, 502]),
    Route::new("post", "/api/retention/run", "runRetention", "ops", Access::Admin, "Run one retention slice now")
    .answers(&[json(200, "What it removed.", of::<Removed>)]),
    Route::new("post", "/api/usage/rollups/rebuild", "rebuildRollups", "usage", Access::Admin, "Rebuild the usage rollup of a range from the jobs (the backfill)")
    .params(&[FROM, TO])
    .answers(&[json(200, "The days rebuilt.", of::<Rebuilt>)]),
    Route::new("get", "/api/metrics", "getMetrics", "ops", Access::Admin, "Per-minute metrics rows (per path), latest first, with the SLO warnings")
    .params(&[query("minutes", || json!({"type": "integer", "minimum": 1, "maximum": 1440, "default": 60}), "How far back.")])
    .answers(&[json(200, "The metrics.", of::<MetricsReport>)]),
    Route::new("get", "/api/metrics/prometheus", "scrapeMetrics", "ops", Access::Scraper, "Jobs, latency histograms, tokens, cost, budget use and dead letters for Prometheus")
    .answers(&[answer(200, "The Prometheus text exposition format 0.0.4.", Content::Prometheus)]),
    Route::new("get", "/api/models", "listModels", "models", Access::Public, "The model catalog: ids, limits, prices with their dates, standing")
    .answers(&[json(200, "The catalog, with the last check of the API's own model list (`watch`: models listed there and unknown here, catalog models no longer listed, differing limits) and the deprecated models' use.", of::<pipeline::models::view::CatalogView>)]),
    Route::new("post", "/api/models/check", "checkModels", "models", Access::Admin, "Compare the catalog with the API's model list (GET /v1/models) now")
    .answers(&[json(200, "What the check found, also kept for `GET /api/models` and the Dashboard (the cron checks once a day). A list that could not be read keeps the previous findings, with `report.error`.", of::<pipeline::models::watch::WatchView>)]),
    Route::new("get", "/api/pauses", "listPauses", "ops", Access::Admin, "The pauses in force")
    .answers(&[json(200, "The pauses.", of::<PauseList>)]),
    Route::new("put", "/api/pauses", "pause", "ops", Access::Admin, "Pause a lane, a model or a user: its jobs wait, spending no retry")
    .body(Body::Json {
        schema: of::<PauseRequest>,
        example: pause_example,
        required: true,
    })
    .answers(&[json(200, "The pause in force.", of::<Pause>)])
    .errors(&[413, 415]),
    Route::new("delete", "/api/pauses/{scope}/{value}", "resume", "ops", Access::Admin, "Resume: the held jobs are released at the normal pace")
    .params(&[
        Param {
            place: In::Path,
            name: "scope",
            schema: || json!({"type": "string", "enum": ["lane", "model", "user"]}),
            description: "What was paused.",
        },
        path("value", "The lane, model id or user id."),
    ])
    .answers(&[json(200, "Whether a pause was lifted and how many jobs it released.", of::<Resumed>)]),
    Route::new("get", "/api/dlq", "listDeadLetters", "dlq", Access::Admin, "Dead-lettered and failed jobs to triage, with their last error and class")
    .params(&[
        query("status", || json!({"type": "string", "enum": DlqFilter::STATUSES, "default": "dead_lettered"}), "Which ends to list."),
        query("error_class", string, "One failure class (`rate_limited`, `overloaded`, `invalid_request`, …)."),
        query("user", string, "One user's jobs."),
        query("model", string, "One model's jobs."),
        query("from", || json!({"type": "integer"}), "Ended at or after (epoch ms)."),
        query("to", || json!({"type": "integer"}), "Ended before (epoch ms)."),
        CURSOR,
        LIMIT,
    ])
    .answers(&[json(200, "A page.", of::<DlqList>)]),
    Route::new("post", "/api/dlq/replay", "replayDeadLetters", "dlq", Access::Admin, "Replay every job the filter matches (at most 100 a call), paced")
    .body(Body::Json {
        schema: of::<DlqFilter>,
        example: bulk_replay_example,
        required: false,
    })
    .answers(&[json(202, "The jobs replayed, and whether more match.", of::<ReplayAck>)])
    .errors(&[413, 415]),
    Route::new("post", "/api/ops/bulk", "actInBulk", "ops", Access::Admin, "Cancel, expire, replay or pause every job a filter matches: a dry run by default, one bounded slice per call, audited")
    .body(Body::Json {
        schema: of::<BulkRequest>,
        example: bulk_action_example,
        required: true,
    })
    .answers(&[json(200, "What the filter matched and what this call did; send it again while `remaining` is above 0.", of::<BulkReport>)])
    .errors(&[413, 415]),
    Route::new("get", "/api/routes", "routes", "ops", Access::Admin, "Each configured route (the Anthropic API, Bedrock, Vertex AI): its breakers, its calls and errors and its jobs' cost over the last hour")
    .answers(&[json(200, "The routes in failover order.", of::<RoutesReport>)]),
    Route::new("get", "/api/ops/bulk", "listBulkActions", "ops", Access::Admin, "The bulk actions' audit, newest first")
    .answers(&[json(200, "The last 100 bulk requests.", of::<BulkAuditList>)]),
    Route::new("post", "/api/dlq/{id}/replay", "replayDeadLetter", "dlq", Access::Admin, "Replay one job, optionally on another model or with another max_tokens")
    .params(&[JOB_ID])
    .body(Body::Json {
        schema: of::<ReplayEdit>,
        example: replay_example,
        required: false,
    })
    .answers(&[json(202, "Queued again.", of::<ReplayAck>)])
    .errors(&[404, 409, 413, 415, 429]),
    Route::new("post", "/api/dlq/{id}/discard", "discardDeadLetter", "dlq", Access::Admin, "Take a job off the triage list")
    .params(&[JOB_ID])
    .answers(&[json(200, "Discarded.", of::<Discarded>)])
    .errors(&[404, 409]),
    Route::new("post", "/batches", "uploadPdfs", "uploads", Access::Caller, "Upload 1 to 100 PDFs, a job each (summary or extraction)")
    .params(&[IDEMPOTENCY_KEY])
    .body(Body::PdfForm)
    .answers(&[json(202, "Queued.", of::<UploadAck>)])
    .errors(&[413, 415, 422, 429]),
    Route::new("get", "/batches", "listUploads", "uploads", Access::Caller, "The caller's uploads, newest first")
    .params(&[CURSOR, LIMIT])
    .answers(&[json(200, "A page.", of::<UploadList>)]),
    Route::new("get", "/batches/{id}", "getUpload", "uploads", Access::Caller, "One upload with each file's job")
    .params(&[path("id", "The upload's `batchId`.")])
    .answers(&[json(200, "The upload.", of::<UploadView>)])
    .errors(&[404]),
    Route::new("post", "/batches/{id}/cancel", "cancelUpload", "uploads", Access::Caller, "Cancel the upload's jobs that have not started")
    .params(&[path("id", "The upload's `batchId`.")])
    .answers(&[json(200, "The upload after the cancel.", of::<UploadView>)])
    .errors(&[404]),
    Route::new("post", "/jobs", "submitJob", "jobs", Access::Caller, "Submit a prompt job (sync on the high lane, batch on the bulk lane)")
    .params(&[IDEMPOTENCY_KEY])
    .body(Body::Json {
        schema: of::<JobRequest>,
        example: job_example,
        required: true,
    })
    .answers(&[ACCEPTED_JOB])
    .errors(&[413, 415, 422, 429]),
    Route::new("get", "/jobs", "listJobs", "jobs", Access::Caller, "The caller's jobs of every kind, newest first")
    .params(&[
        query("status", || json!({"type": "string", "enum": pipeline::status::Status::ALL.map(|s| s.as_str())}), "One status."),
        query("priority", || json!({"type": "string", "enum": pipeline::status::Lane::ALL.map(|l| l.as_str())}), "One lane."),
        query("kind", || json!({"type": "string", "enum": pipeline::status::Kind::ALL.map(|k| k.as_str())}), "One kind."),
        query("tag", string, "One `key=value` tag: the jobs that carry it."),
        CURSOR,
        LIMIT,
    ])
    .answers(&[json(200, "A page.", of::<JobList>)]),
    Route::new("get", "/jobs/{id}", "getJob", "jobs", Access::Caller, "One job: status, times, tokens, cost, attempts and webhook deliveries")
    .params(&[JOB_ID])
    .answers(&[json(200, "The job.", of::<JobView>)])
    .errors(&[404]),
    Route::new("get", "/jobs/{id}/result", "getJobResult", "jobs", Access::Caller, "A completed job's result (or the raw answer kept of a paid failure)")
    .params(&[JOB_ID])
    .answers(&[answer(200, "The result as stored.", Content::Result)])
    .errors(&[404, 409, 410]),
    Route::new("post", "/jobs/{id}/cancel", "cancelJob", "jobs", Access::Caller, "Cancel a job that has not run (a batch-mode job is taken out of its batch)")
    .params(&[JOB_ID])
    .answers(&[json(200, "The job, canceled.", of::<JobView>)])
    .errors(&[404, 409]),
    Route::new("post", "/api/webhooks/{id}/resend", "resendWebhook", "jobs", Access::Admin, "Send a job's webhook again now: the same webhook-id and body, signed anew")
    .params(&[JOB_ID])
    .answers(&[json(200, "The job's webhook with this attempt.", of::<Option<WebhookView>>)])
    .errors(&[404, 409]),
    Route::new("get", "/api/openapi.json", "openapi", "meta", Access::Public, "This document")
    .answers(&[json(200, "OpenAPI 3.1.", |_| {
        json!({"type": "object"}).try_into().expect("object")
    })]),
];

/// The statuses every route of this access may answer, besides its own.
fn common_errors(r: &Route) -> Vec<u16> {
    let mut out = match r.access {
        Access::Public => vec![],
        Access::Caller => vec![401],
        Access::Admin | Access::Scraper => vec![401, 403],
    };
    let takes_input = !r.params.is_empty() || !matches!(r.body, Body::None);
    if takes_input {
        out.push(400);
    }
    out.extend_from_slice(r.errors);
    out.push(405);
    out.sort_unstable();
    out.dedup();
    out
}

fn error_text(status: u16) -> &'static str {
    match status {
        400 => "Malformed or invalid input (`field` names it).",
        401 => "No key, or a key that is unknown or revoked.",
        403 => "Not allowed: an admin's key is needed.",
        404 => "Unknown, or not the caller's.",
        405 => "Wrong method for this path.",
        409 => "Not in a state that allows it.",
        410 => "Gone: removed by retention.",
        413 => "Body too large.",
        415 => "Wrong content type.",
        422 => "Idempotency-Key reused with another body.",
        429 => "Over a budget or a rate limit (`retry-after`).",
        502 => "The model call failed.",
        503 => "Not available now (`retry-after`).",
        _ => "Error.",
    }
}

fn content_of(c: &Content, g: &mut SchemaGenerator) -> Value {
    match c {
        Content::Json(f) => json!({"application/json": {"schema": f(g)}}),
        Content::Csv => json!({"text/csv": {"schema": {"type": "string"}}}),
        Content::Prometheus => json!({"text/plain": {"schema": {"type": "string"}}}),
        Content::Result => json!({
            "text/plain": {"schema": {"type": "string"}},
            "application/json": {"schema": {}},
        }),
    }
}

fn pdf_form() -> Value {
    json!({"multipart/form-data": {
        "schema": {
            "type": "object",
            "required": [pipeline::pdf::FILES_FIELD],
            "properties": {
                pipeline::pdf::FILES_FIELD: {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": pipeline::pdf::MAX_FILES,
                    "items": {"type": "string", "contentMediaType": "application/pdf"},
                    "description": "The PDFs, one part each, named `files`.",
                },
                "mode": {"type": "string", "enum": pipeline::status::Mode::ALL.map(|m| m.as_str()), "default": "batch"},
                "template": {"type": "string", "description": "`summary` (default) or an extraction template."},
                "model": {"type": "string", "description": "A current catalog model."},
                "expires_in_s": {"type": "integer", "minimum": 1},
                "callback_url": {"type": "string", "format": "uri"},
            },
        },
        "encoding": {pipeline::pdf::FILES_FIELD: {"contentType": "application/pdf"}},
    }})
}

fn operation(r: &Route, g: &mut SchemaGenerator, requests: &mut SchemaGenerator) -> Value {
    let mut op = Map::new();
    op.insert("operationId".into(), json!(r.operation_id));
    op.insert("tags".into(), json!([r.tag]));
    op.insert("summary".into(), json!(r.summary));
    let params: Vec<Value> = r
        .params
        .iter()
        .map(|p| {
            json!({
                "name": p.name,
                "in": match p.place { In::Path => "path", In::Query => "query", In::Header => "header" },
                "required": p.place == In::Path,
                "description": p.description,
                "schema": (p.schema)(),
            })
        })
        .collect();
    if !params.is_empty() {
        op.insert("parameters".into(), Value::Array(params));
    }
    match r.body {
        Body::None => {}
        Body::Json {
            schema,
            example,
            required,
        } => {
            op.insert(
                "requestBody".into(),
                json!({
                    "required": required,
                    "content": {"application/json": {"schema": schema(requests), "example": example()}},
                }),
            );
        }
        Body::PdfForm => {
            op.insert(
                "requestBody".into(),
                json!({"required": true, "content": pdf_form()}),
            );
        }
    }
    let mut responses = Map::new();
    for a in r.answers {
        responses.insert(
            a.status.to_string(),
            json!({"description": a.description, "content": content_of(&a.content, g)}),
        );
    }
    for s in common_errors(r) {
        responses.insert(
            s.to_string(),
            json!({"description": error_text(s),
                   "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}}),
        );
    }
    op.insert("responses".into(), Value::Object(responses));
    let security = match r.access {
        Access::Public => json!([]),
        Access::Caller => json!([{"bearer": []}, {"openMode": []}]),
        Access::Admin => json!([{"bearer": []}, {"openMode": []}]),
        Access::Scraper => json!([{"bearer": []}, {"scrapeToken": []}]),
    };
    op.insert("security".into(), security);
    if r.access == Access::Admin {
        op.insert("x-admin".into(), json!(true));
    }
    Value::Object(op)
}

/// What the Worker posts: completion webhooks to a job's `callback_url`, and the dead-letter
/// notice to `NOTIFY_WEBHOOK_URL`.
fn webhooks(g: &mut SchemaGenerator) -> Value {
    use pipeline::webhooks::{MAX_ATTEMPTS, TIMEOUT_MS};
    let header = |name: &str, description: &str| {
        json!({"name": name, "in": "header", "required": true, "description": description,
               "schema": {"type": "string"}})
    };
    json!({
        "jobEnded": {"post": {
            "operationId": "jobEnded",
            "summary": "A job ended: its final view, signed as Standard Webhooks describes",
            "description": format!(
                "Posted to the job's `callback_url` (or its API key's default) once the job is \
                 terminal. The signature is `v1,` + base64(HMAC-SHA256(secret, \
                 `{{webhook-id}}.{{webhook-timestamp}}.{{body}}`)), the secret being the key's \
                 `webhook_secret` (`whsec_…`, shown once). Anything but a 2xx within {} s is \
                 retried with backoff, {MAX_ATTEMPTS} attempts in all; a re-send repeats the \
                 same `webhook-id` and body.", TIMEOUT_MS / 1000),
            "parameters": [
                header("webhook-id", "The delivery's id: the same on every attempt (deduplicate on it)."),
                header("webhook-timestamp", "Seconds since the epoch when this attempt was signed."),
                header("webhook-signature", "`v1,<base64>`: see the description."),
            ],
            "requestBody": {"required": true, "content": {"application/json": {"schema": g.subschema_for::<WebhookEvent>()}}},
            "responses": {"2XX": {"description": "Delivered."}},
        }},
        "deadLetter": {"post": {
            "operationId": "deadLetter",
            "summary": "A job was dead-lettered (to NOTIFY_WEBHOOK_URL; Slack-compatible `text`)",
            "requestBody": {"required": true, "content": {"application/json": {"schema": g.subschema_for::<DeadLetterEvent>()}}},
            "responses": {"2XX": {"description": "Received (best effort: not retried)."}},
        }},
    })
}

fn generator(deserialize: bool) -> SchemaGenerator {
    let s = SchemaSettings::draft2020_12().with(|s| {
        s.definitions_path = "/components/schemas".into();
        s.meta_schema = None;
    });
    if deserialize {
        s.for_deserialize().into_generator()
    } else {
        s.for_serialize().into_generator()
    }
}

/// Renames `$ref`s to request-side schemas that differ from the answer-side ones of the same
/// name (an `Option` field is required in an answer, optional in a request).
fn rename_refs(v: &mut Value, renamed: &[String]) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get_mut("$ref") {
                if let Some(name) = r.strip_prefix("#/components/schemas/") {
                    if renamed.iter().any(|n| n == name) {
                        *r = format!("#/components/schemas/{name}Input");
                    }
                }
            }
            m.values_mut().for_each(|x| rename_refs(x, renamed));
        }
        Value::Array(a) => a.iter_mut().for_each(|x| rename_refs(x, renamed)),
        _ => {}
    }
}

/// The whole document, for this release.
pub fn document(version: &str) -> Value {
    let mut answers = generator(false);
    answers.subschema_for::<ErrorBody>();
    let mut requests = generator(true);
    let mut paths = Map::new();
    for r in ROUTES {
        let op = operation(r, &mut answers, &mut requests);
        let item = paths
            .entry(r.path.to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        item.as_object_mut()
            .expect("a path item")
            .insert(r.method.to_owned(), op);
    }
    let webhooks = webhooks(&mut answers);
    let mut schemas = answers.take_definitions(true);
    let inputs = requests.take_definitions(true);
    let renamed: Vec<String> = inputs
        .iter()
        .filter(|(k, v)| schemas.get(*k).is_some_and(|s| s != *v))
        .map(|(k, _)| k.clone())
        .collect();
    for (k, mut v) in inputs {
        rename_refs(&mut v, &renamed);
        let name = if renamed.contains(&k) {
            format!("{k}Input")
        } else {
            k
        };
        schemas.insert(name, v);
    }
    for r in ROUTES {
        if let Body::Json { .. } = r.body {
            let body = &mut paths[r.path][r.method]["requestBody"]["content"]["application/json"]
                ["schema"];
            rename_refs(body, &renamed);
        }
    }
    let mut sorted: Vec<(String, Value)> = schemas.into_iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    json!({
        "openapi": "3.1.0",
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "info": {
            "title": "claude-pipeline",
            "version": version,
            "description": "LLM jobs over HTTP: feedback texts, prompt jobs and PDF uploads, run \
                through Cloudflare Queues on a high and a bulk lane, synchronously (Messages API) \
                or through the Message Batches API, with usage, budgets, dead-letter triage and \
                ops. Errors are `{error, code, field?}` with the status the contract names; \
                every time is epoch milliseconds, every amount integer micro-dollars.",
            "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"},
        },
        "servers": [{"url": "/", "description": "The Worker that serves this document."}],
        "tags": [
            {"name": "feedback", "description": "Feedback texts analysed by a model."},
            {"name": "jobs", "description": "Prompt jobs, every kind's job view, results, cancel, webhooks."},
            {"name": "uploads", "description": "Multi-PDF uploads."},
            {"name": "usage", "description": "Tokens, cost, budgets and spenders."},
            {"name": "dlq", "description": "Dead-letter triage and replay (admins)."},
            {"name": "ops", "description": "Health, metrics, budget, pauses, retention, batch machinery."},
            {"name": "keys", "description": "API keys (admins)."},
            {"name": "models", "description": "The model catalog."},
            {"name": "meta", "description": "This description."},
        ],
        "paths": paths,
        "webhooks": webhooks,
        "components": {
            "schemas": Map::from_iter(sorted),
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer",
                           "description": "An API key (`POST /api/keys`). Required with AUTH_MODE=keys, the production default."},
                "openMode": {"type": "apiKey", "in": "header", "name": "x-user-id",
                             "description": "Only with AUTH_MODE=open (local demo): names the user; every caller is an admin."},
                "scrapeToken": {"type": "http", "scheme": "bearer",
                                "description": "METRICS_SCRAPE_TOKEN, for /api/metrics/prometheus only."},
            },
        },
    })
}

#[cfg(test)]
mod tests;
