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

use crate::dto::*;
use crate::error::ErrorBody;
use crate::ops::budgets::BudgetSetting;
use crate::ops::cache_use::CacheReport;
use crate::ops::dlq::{DlqFilter, DlqList, ReplayAck, ReplayEdit};
use crate::ops::metrics::MetricsReport;
use crate::ops::reconcile::ReconciliationRun;
use crate::ops::rollups::{Rebuilt, RollupCheck};
use crate::ops::spenders::SpendersReport;
use crate::ops::tag_usage::TagsReport;
use crate::ops::usage::UsageReport;
use crate::pause::{Pause, PauseList, PauseRequest, Resumed};
use crate::retention::{Removed, RetentionView};
use crate::routing::RoutingReport;

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

const ACCEPTED_JOB: Answer = Answer {
    status: 202,
    description: "Queued (or the same key's earlier acknowledgement).",
    content: Content::Json(of::<JobAck>),
};

/// Every route of the JSON API, in the router's order.
pub const ROUTES: &[Route] = &[
    Route {
        method: "get",
        path: "/api/health",
        operation_id: "health",
        tag: "ops",
        summary: "The checks of D1, R2, the queues, the budget object, the cron and the model API",
        access: Access::Caller,
        params: &[],
        body: Body::None,
        answers: &[
            Answer {
                status: 200,
                description: "Every check passes.",
                content: Content::Json(of::<HealthReport>),
            },
            Answer {
                status: 503,
                description: "A check fails (named in `checks`).",
                content: Content::Json(of::<HealthReport>),
            },
        ],
        errors: &[],
    },
    Route {
        method: "post",
        path: "/feedback",
        operation_id: "submitFeedback",
        tag: "feedback",
        summary: "Submit a feedback text for analysis (sentiment, topics, summary)",
        access: Access::Caller,
        params: &[IDEMPOTENCY_KEY],
        body: Body::Json {
            schema: of::<FeedbackRequest>,
            example: feedback_example,
            required: true,
        },
        answers: &[Answer {
            status: 202,
            description: "Queued.",
            content: Content::Json(of::<FeedbackAck>),
        }],
        errors: &[413, 415, 422, 429],
    },
    Route {
        method: "get",
        path: "/api/feedback",
        operation_id: "listFeedback",
        tag: "feedback",
        summary: "The caller's feedback jobs, newest first",
        access: Access::Caller,
        params: &[CURSOR, LIMIT],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "A page.",
            content: Content::Json(of::<FeedbackList>),
        }],
        errors: &[],
    },
    Route {
        method: "get",
        path: "/api/feedback/{id}",
        operation_id: "getFeedback",
        tag: "feedback",
        summary: "One feedback job with its analysis once completed",
        access: Access::Caller,
        params: &[JOB_ID],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "The job.",
            content: Content::Json(of::<FeedbackView>),
        }],
        errors: &[404],
    },
    Route {
        method: "post",
        path: "/api/batches/poll",
        operation_id: "pollBatches",
        tag: "ops",
        summary: "Run the batch machinery now: flush what is due, poll submitted batches, recover",
        access: Access::Admin,
        params: &[],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "What the run did.",
            content: Content::Json(of::<BatchMachinery>),
        }],
        errors: &[],
    },
    Route {
        method: "post",
        path: "/api/batches/flush",
        operation_id: "flushBatches",
        tag: "ops",
        summary: "The same, with every waiting batch-mode job flushed now, due or not",
        access: Access::Admin,
        params: &[],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "What the run did.",
            content: Content::Json(of::<BatchMachinery>),
        }],
        errors: &[],
    },
    Route {
        method: "post",
        path: "/api/claude",
        operation_id: "callClaude",
        tag: "jobs",
        summary: "One synchronous Messages call, answered in the response (recorded as a job)",
        access: Access::Caller,
        params: &[],
        body: Body::Json {
            schema: of::<JobRequest>,
            example: claude_example,
            required: true,
        },
        answers: &[
            Answer {
                status: 200,
                description: "The model's answer.",
                content: Content::Json(of::<ClaudeAnswer>),
            },
            Answer {
                status: 202,
                description: "Inside the queue rollout and not done in time: poll the job.",
                content: Content::Json(of::<JobAck>),
            },
        ],
        errors: &[413, 415, 429, 502, 503],
    },
    Route {
        method: "get",
        path: "/api/rollout",
        operation_id: "getRollout",
        tag: "ops",
        summary: "Direct and queued calls compared over the last hours",
        access: Access::Admin,
        params: &[query(
            "hours",
            || json!({"type": "integer", "minimum": 1, "maximum": 720, "default": 48}),
            "The window, in hours.",
        )],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "The comparison.",
            content: Content::Json(of::<crate::rollout::RolloutReport>),
        }],
        errors: &[],
    },
    Route {
        method: "get",
        path: "/api/budget",
        operation_id: "getBudget",
        tag: "ops",
        summary: "The token budget object: limits, what is in use, lanes in flight, alerts",
        access: Access::Admin,
        params: &[],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "The budget.",
            content: Content::Json(of::<BudgetReport>),
        }],
        errors: &[],
    },
    Route {
        method: "post",
        path: "/api/keys",
        operation_id: "createKey",
        tag: "keys",
        summary: "Create an API key (shown once, with its webhook secret)",
        access: Access::Admin,
        params: &[],
        body: Body::Json {
            schema: of::<KeyRequest>,
            example: key_example,
            required: true,
        },
        answers: &[Answer {
            status: 201,
            description: "The key, shown this once.",
            content: Content::Json(of::<KeyCreated>),
        }],
        errors: &[413, 415],
    },
    Route {
        method: "get",
        path: "/api/keys",
        operation_id: "listKeys",
        tag: "keys",
        summary: "Every API key (never the secret)",
        access: Access::Admin,
        params: &[],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "The keys.",
            content: Content::Json(of::<KeyList>),
        }],
        errors: &[],
    },
    Route {
        method: "delete",
        path: "/api/keys/{id}",
        operation_id: "revokeKey",
        tag: "keys",
        summary: "Revoke an API key",
        access: Access::Admin,
        params: &[path("id", "The key's id (`key_…`).")],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "The revoked key.",
            content: Content::Json(of::<KeyView>),
        }],
        errors: &[404],
    },
    Route {
        method: "get",
        path: "/api/usage",
        operation_id: "getUsage",
        tag: "usage",
        summary: "A user's tokens, cost and jobs per day and model, with budgets",
        access: Access::Caller,
        params: &[
            FROM,
            TO,
            query(
                "user",
                string,
                "Another user's usage (admins); the caller's own by default.",
            ),
        ],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "The report.",
            content: Content::Json(of::<UsageReport>),
        }],
        errors: &[],
    },
    Route {
        method: "get",
        path: "/api/usage.csv",
        operation_id: "getUsageCsv",
        tag: "usage",
        summary: "The same report as CSV, a row per day and model",
        access: Access::Caller,
        params: &[
            FROM,
            TO,
            query("user", string, "Another user's usage (admins)."),
        ],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "The CSV (an attachment).",
            content: Content::Csv,
        }],
        errors: &[],
    },
    Route {
        method: "put",
        path: "/api/usage/budget",
        operation_id: "setBudget",
        tag: "usage",
        summary: "Set a user's daily and monthly caps and soft threshold (null removes one)",
        access: Access::Admin,
        params: &[],
        body: Body::Json {
            schema: of::<BudgetSetting>,
            example: budget_example,
            required: true,
        },
        answers: &[Answer {
            status: 200,
            description: "The setting stored.",
            content: Content::Json(of::<BudgetSetting>),
        }],
        errors: &[413, 415],
    },
    Route {
        method: "get",
        path: "/api/usage/spenders",
        operation_id: "getSpenders",
        tag: "usage",
        summary: "Cost, tokens and jobs by user and model over a range, top spenders first",
        access: Access::Admin,
        params: &[
            FROM,
            TO,
            query(
                "limit",
                || json!({"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}),
                "Users in the report; the rest are summed in `others`.",
            ),
        ],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "The report.",
            content: Content::Json(of::<SpendersReport>),
        }],
        errors: &[],
    },
    Route {
        method: "get",
        path: "/api/usage/spenders.csv",
        operation_id: "getSpendersCsv",
        tag: "usage",
        summary: "The same as CSV, a row per user and model",
        access: Access::Admin,
        params: &[FROM, TO],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "The CSV (an attachment).",
            content: Content::Csv,
        }],
        errors: &[],
    },
    Route {
        method: "put",
        path: "/api/usage/tags/budget",
        operation_id: "setTagBudget",
        tag: "usage",
        summary: "Set (or with null remove) a tag's daily cap",
        access: Access::Admin,
        params: &[],
        body: Body::Json {
            schema: of::<crate::ops::budgets::TagBudgetSetting>,
            example: tag_budget_example,
            required: true,
        },
        answers: &[Answer {
            status: 200,
            description: "The setting in force. Jobs whose reservation would take the tag past \
                          its cap are refused with a 429 `tag_budget_exceeded` naming `tags`.",
            content: Content::Json(of::<crate::ops::budgets::TagBudgetSetting>),
        }],
        errors: &[413, 415],
    },
    Route {
        method: "get",
        path: "/api/usage/tags/budgets",
        operation_id: "listTagBudgets",
        tag: "usage",
        summary: "Every tag's daily cap and what its jobs committed today",
        access: Access::Caller,
        params: &[],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "The caps, by tag.",
            content: Content::Json(of::<Vec<crate::ops::budgets::TagBudgetView>>),
        }],
        errors: &[],
    },
    Route {
        method: "get",
        path: "/api/usage/cache",
        operation_id: "getCacheUse",
        tag: "usage",
        summary: "Prompt-cache use per template and model: hit rate, tokens read, money saved",
        access: Access::Caller,
        params: &[
            FROM,
            TO,
            query(
                "user",
                string,
                "One user's jobs (admins; admins see every user's without it, users their own).",
            ),
        ],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "The lines, most saved first, with totals.",
            content: Content::Json(of::<CacheReport>),
        }],
        errors: &[],
    },
    Route {
        method: "get",
        path: "/api/usage/tags",
        operation_id: "getTagUsage",
        tag: "usage",
        summary: "Cost, tokens and jobs by key=value tag and model over a range, dearest first",
        access: Access::Caller,
        params: &[
            FROM,
            TO,
            query(
                "user",
                string,
                "One user's jobs (admins; admins see every user's without it, users their own).",
            ),
            query(
                "limit",
                || json!({"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}),
                "Tags in the report; the rest are counted in `others`.",
            ),
        ],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "The report. A job with two tags counts under each.",
            content: Content::Json(of::<TagsReport>),
        }],
        errors: &[],
    },
    Route {
        method: "get",
        path: "/api/usage/tags.csv",
        operation_id: "getTagUsageCsv",
        tag: "usage",
        summary: "The same as CSV, a row per tag and model",
        access: Access::Caller,
        params: &[FROM, TO, query("user", string, "One user's jobs (admins).")],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "The CSV (an attachment).",
            content: Content::Csv,
        }],
        errors: &[],
    },
    Route {
        method: "get",
        path: "/api/usage/rollups",
        operation_id: "checkRollups",
        tag: "usage",
        summary: "The usage rollup compared with a full scan of the jobs over a range",
        access: Access::Admin,
        params: &[FROM, TO],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "The comparison (`consistent`, and any difference).",
            content: Content::Json(of::<RollupCheck>),
        }],
        errors: &[],
    },
    Route {
        method: "get",
        path: "/api/retention",
        operation_id: "getRetention",
        tag: "ops",
        summary: "What is kept and for how long, and what the last run removed",
        access: Access::Admin,
        params: &[],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "The policy and the last run.",
            content: Content::Json(of::<RetentionView>),
        }],
        errors: &[],
    },
    Route {
        method: "get",
        path: "/api/routing",
        operation_id: "getRouting",
        tag: "ops",
        summary: "Deadline routing: jobs routed, deadlines met or missed, money saved",
        access: Access::Admin,
        params: &[query("days", string, "Days back, 1 to 90; default 7.")],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "The figures over the window, and the router's settings.",
            content: Content::Json(of::<RoutingReport>),
        }],
        errors: &[],
    },
    Route {
        method: "get",
        path: "/api/reconciliation",
        operation_id: "getReconciliation",
        tag: "ops",
        summary: "The last comparison of our costs with Anthropic's cost report",
        access: Access::Admin,
        params: &[],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "Per UTC day and model: ours, billed, the difference, flagged lines. \
                          404 before the first run; 409 `not_configured` without \
                          `ANTHROPIC_ADMIN_KEY`.",
            content: Content::Json(of::<ReconciliationRun>),
        }],
        errors: &[404, 409],
    },
    Route {
        method: "post",
        path: "/api/reconciliation/run",
        operation_id: "runReconciliation",
        tag: "ops",
        summary: "Compare our costs with Anthropic's cost report now (at most 31 days)",
        access: Access::Admin,
        params: &[FROM, TO],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "The comparison, also kept for `GET /api/reconciliation`; each \
                          flagged line raises an alert. 409 `not_configured` without \
                          `ANTHROPIC_ADMIN_KEY`, 502 when the report cannot be read.",
            content: Content::Json(of::<ReconciliationRun>),
        }],
        errors: &[400, 409, 502],
    },
    Route {
        method: "post",
        path: "/api/retention/run",
        operation_id: "runRetention",
        tag: "ops",
        summary: "Run one retention slice now",
        access: Access::Admin,
        params: &[],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "What it removed.",
            content: Content::Json(of::<Removed>),
        }],
        errors: &[],
    },
    Route {
        method: "post",
        path: "/api/usage/rollups/rebuild",
        operation_id: "rebuildRollups",
        tag: "usage",
        summary: "Rebuild the usage rollup of a range from the jobs (the backfill)",
        access: Access::Admin,
        params: &[FROM, TO],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "The days rebuilt.",
            content: Content::Json(of::<Rebuilt>),
        }],
        errors: &[],
    },
    Route {
        method: "get",
        path: "/api/metrics",
        operation_id: "getMetrics",
        tag: "ops",
        summary: "Per-minute metrics rows (per path), latest first, with the SLO warnings",
        access: Access::Admin,
        params: &[query(
            "minutes",
            || json!({"type": "integer", "minimum": 1, "maximum": 1440, "default": 60}),
            "How far back.",
        )],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "The metrics.",
            content: Content::Json(of::<MetricsReport>),
        }],
        errors: &[],
    },
    Route {
        method: "get",
        path: "/api/metrics/prometheus",
        operation_id: "scrapeMetrics",
        tag: "ops",
        summary:
            "Jobs, latency histograms, tokens, cost, budget use and dead letters for Prometheus",
        access: Access::Scraper,
        params: &[],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "The Prometheus text exposition format 0.0.4.",
            content: Content::Prometheus,
        }],
        errors: &[],
    },
    Route {
        method: "get",
        path: "/api/models",
        operation_id: "listModels",
        tag: "models",
        summary: "The model catalog: ids, limits, prices with their dates, standing",
        access: Access::Public,
        params: &[],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "The catalog, with the last check of the API's own model list \
                          (`watch`: models listed there and unknown here, catalog models no \
                          longer listed, differing limits) and the deprecated models' use.",
            content: Content::Json(of::<crate::models::CatalogView>),
        }],
        errors: &[],
    },
    Route {
        method: "post",
        path: "/api/models/check",
        operation_id: "checkModels",
        tag: "models",
        summary: "Compare the catalog with the API's model list (GET /v1/models) now",
        access: Access::Admin,
        params: &[],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "What the check found, also kept for `GET /api/models` and the \
                          Dashboard (the cron checks once a day). A list that could not be \
                          read keeps the previous findings, with `report.error`.",
            content: Content::Json(of::<crate::models::watch::WatchView>),
        }],
        errors: &[],
    },
    Route {
        method: "get",
        path: "/api/pauses",
        operation_id: "listPauses",
        tag: "ops",
        summary: "The pauses in force",
        access: Access::Admin,
        params: &[],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "The pauses.",
            content: Content::Json(of::<PauseList>),
        }],
        errors: &[],
    },
    Route {
        method: "put",
        path: "/api/pauses",
        operation_id: "pause",
        tag: "ops",
        summary: "Pause a lane, a model or a user: its jobs wait, spending no retry",
        access: Access::Admin,
        params: &[],
        body: Body::Json {
            schema: of::<PauseRequest>,
            example: pause_example,
            required: true,
        },
        answers: &[Answer {
            status: 200,
            description: "The pause in force.",
            content: Content::Json(of::<Pause>),
        }],
        errors: &[413, 415],
    },
    Route {
        method: "delete",
        path: "/api/pauses/{scope}/{value}",
        operation_id: "resume",
        tag: "ops",
        summary: "Resume: the held jobs are released at the normal pace",
        access: Access::Admin,
        params: &[
            Param {
                place: In::Path,
                name: "scope",
                schema: || json!({"type": "string", "enum": ["lane", "model", "user"]}),
                description: "What was paused.",
            },
            path("value", "The lane, model id or user id."),
        ],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "Whether a pause was lifted and how many jobs it released.",
            content: Content::Json(of::<Resumed>),
        }],
        errors: &[],
    },
    Route {
        method: "get",
        path: "/api/dlq",
        operation_id: "listDeadLetters",
        tag: "dlq",
        summary: "Dead-lettered and failed jobs to triage, with their last error and class",
        access: Access::Admin,
        params: &[
            query(
                "status",
                || json!({"type": "string", "enum": DlqFilter::STATUSES, "default": "dead_lettered"}),
                "Which ends to list.",
            ),
            query(
                "error_class",
                string,
                "One failure class (`rate_limited`, `overloaded`, `invalid_request`, …).",
            ),
            query("user", string, "One user's jobs."),
            query("model", string, "One model's jobs."),
            query(
                "from",
                || json!({"type": "integer"}),
                "Ended at or after (epoch ms).",
            ),
            query(
                "to",
                || json!({"type": "integer"}),
                "Ended before (epoch ms).",
            ),
            CURSOR,
            LIMIT,
        ],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "A page.",
            content: Content::Json(of::<DlqList>),
        }],
        errors: &[],
    },
    Route {
        method: "post",
        path: "/api/dlq/replay",
        operation_id: "replayDeadLetters",
        tag: "dlq",
        summary: "Replay every job the filter matches (at most 100 a call), paced",
        access: Access::Admin,
        params: &[],
        body: Body::Json {
            schema: of::<DlqFilter>,
            example: bulk_replay_example,
            required: false,
        },
        answers: &[Answer {
            status: 202,
            description: "The jobs replayed, and whether more match.",
            content: Content::Json(of::<ReplayAck>),
        }],
        errors: &[413, 415],
    },
    Route {
        method: "post",
        path: "/api/dlq/{id}/replay",
        operation_id: "replayDeadLetter",
        tag: "dlq",
        summary: "Replay one job, optionally on another model or with another max_tokens",
        access: Access::Admin,
        params: &[JOB_ID],
        body: Body::Json {
            schema: of::<ReplayEdit>,
            example: replay_example,
            required: false,
        },
        answers: &[Answer {
            status: 202,
            description: "Queued again.",
            content: Content::Json(of::<ReplayAck>),
        }],
        errors: &[404, 409, 413, 415, 429],
    },
    Route {
        method: "post",
        path: "/api/dlq/{id}/discard",
        operation_id: "discardDeadLetter",
        tag: "dlq",
        summary: "Take a job off the triage list",
        access: Access::Admin,
        params: &[JOB_ID],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "Discarded.",
            content: Content::Json(of::<Discarded>),
        }],
        errors: &[404, 409],
    },
    Route {
        method: "post",
        path: "/batches",
        operation_id: "uploadPdfs",
        tag: "uploads",
        summary: "Upload 1 to 100 PDFs, a job each (summary or extraction)",
        access: Access::Caller,
        params: &[IDEMPOTENCY_KEY],
        body: Body::PdfForm,
        answers: &[Answer {
            status: 202,
            description: "Queued.",
            content: Content::Json(of::<UploadAck>),
        }],
        errors: &[413, 415, 422, 429],
    },
    Route {
        method: "get",
        path: "/batches",
        operation_id: "listUploads",
        tag: "uploads",
        summary: "The caller's uploads, newest first",
        access: Access::Caller,
        params: &[CURSOR, LIMIT],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "A page.",
            content: Content::Json(of::<UploadList>),
        }],
        errors: &[],
    },
    Route {
        method: "get",
        path: "/batches/{id}",
        operation_id: "getUpload",
        tag: "uploads",
        summary: "One upload with each file's job",
        access: Access::Caller,
        params: &[path("id", "The upload's `batchId`.")],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "The upload.",
            content: Content::Json(of::<UploadView>),
        }],
        errors: &[404],
    },
    Route {
        method: "post",
        path: "/batches/{id}/cancel",
        operation_id: "cancelUpload",
        tag: "uploads",
        summary: "Cancel the upload's jobs that have not started",
        access: Access::Caller,
        params: &[path("id", "The upload's `batchId`.")],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "The upload after the cancel.",
            content: Content::Json(of::<UploadView>),
        }],
        errors: &[404],
    },
    Route {
        method: "post",
        path: "/jobs",
        operation_id: "submitJob",
        tag: "jobs",
        summary: "Submit a prompt job (sync on the high lane, batch on the bulk lane)",
        access: Access::Caller,
        params: &[IDEMPOTENCY_KEY],
        body: Body::Json {
            schema: of::<JobRequest>,
            example: job_example,
            required: true,
        },
        answers: &[ACCEPTED_JOB],
        errors: &[413, 415, 422, 429],
    },
    Route {
        method: "get",
        path: "/jobs",
        operation_id: "listJobs",
        tag: "jobs",
        summary: "The caller's jobs of every kind, newest first",
        access: Access::Caller,
        params: &[
            query(
                "status",
                || json!({"type": "string", "enum": crate::status::Status::ALL.map(|s| s.as_str())}),
                "One status.",
            ),
            query(
                "priority",
                || json!({"type": "string", "enum": crate::status::Lane::ALL.map(|l| l.as_str())}),
                "One lane.",
            ),
            query(
                "kind",
                || json!({"type": "string", "enum": crate::status::Kind::ALL.map(|k| k.as_str())}),
                "One kind.",
            ),
            query(
                "tag",
                string,
                "One `key=value` tag: the jobs that carry it.",
            ),
            CURSOR,
            LIMIT,
        ],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "A page.",
            content: Content::Json(of::<JobList>),
        }],
        errors: &[],
    },
    Route {
        method: "get",
        path: "/jobs/{id}",
        operation_id: "getJob",
        tag: "jobs",
        summary: "One job: status, times, tokens, cost, attempts and webhook deliveries",
        access: Access::Caller,
        params: &[JOB_ID],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "The job.",
            content: Content::Json(of::<JobView>),
        }],
        errors: &[404],
    },
    Route {
        method: "get",
        path: "/jobs/{id}/result",
        operation_id: "getJobResult",
        tag: "jobs",
        summary: "A completed job's result (or the raw answer kept of a paid failure)",
        access: Access::Caller,
        params: &[JOB_ID],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "The result as stored.",
            content: Content::Result,
        }],
        errors: &[404, 409, 410],
    },
    Route {
        method: "post",
        path: "/jobs/{id}/cancel",
        operation_id: "cancelJob",
        tag: "jobs",
        summary: "Cancel a job that has not run (a batch-mode job is taken out of its batch)",
        access: Access::Caller,
        params: &[JOB_ID],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "The job, canceled.",
            content: Content::Json(of::<JobView>),
        }],
        errors: &[404, 409],
    },
    Route {
        method: "post",
        path: "/api/webhooks/{id}/resend",
        operation_id: "resendWebhook",
        tag: "jobs",
        summary: "Send a job's webhook again now: the same webhook-id and body, signed anew",
        access: Access::Admin,
        params: &[JOB_ID],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "The job's webhook with this attempt.",
            content: Content::Json(of::<Option<WebhookView>>),
        }],
        errors: &[404, 409],
    },
    Route {
        method: "get",
        path: "/api/openapi.json",
        operation_id: "openapi",
        tag: "meta",
        summary: "This document",
        access: Access::Public,
        params: &[],
        body: Body::None,
        answers: &[Answer {
            status: 200,
            description: "OpenAPI 3.1.",
            content: Content::Json(|_| json!({"type": "object"}).try_into().expect("object")),
        }],
        errors: &[],
    },
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
            "required": [crate::pdf::FILES_FIELD],
            "properties": {
                crate::pdf::FILES_FIELD: {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": crate::pdf::MAX_FILES,
                    "items": {"type": "string", "contentMediaType": "application/pdf"},
                    "description": "The PDFs, one part each, named `files`.",
                },
                "mode": {"type": "string", "enum": crate::status::Mode::ALL.map(|m| m.as_str()), "default": "batch"},
                "template": {"type": "string", "description": "`summary` (default) or an extraction template."},
                "model": {"type": "string", "description": "A current catalog model."},
                "expires_in_s": {"type": "integer", "minimum": 1},
                "callback_url": {"type": "string", "format": "uri"},
            },
        },
        "encoding": {crate::pdf::FILES_FIELD: {"contentType": "application/pdf"}},
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
    use crate::webhooks::{MAX_ATTEMPTS, TIMEOUT_MS};
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
