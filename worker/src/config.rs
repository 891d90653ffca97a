//! Binding names, mirroring `wrangler.toml`, and every var and secret the Worker reads — parsed
//! here, once per invocation, with one policy: a malformed value is an error that names it (the
//! entry point logs it and refuses to run on a guess), an unset one takes its default.

use pipeline::budget::{Limits, Settings};
use pipeline::identity::AuthMode;
use pipeline::lanes::LaneLimits;
use pipeline::timing::Timing;
use worker::Env;

/// D1 database.
pub const DB: &str = "DB";
/// R2 bucket for prompts, uploads and results.
pub const RESULTS: &str = "RESULTS";
/// Queue producers.
pub const QUEUE_HIGH: &str = "QUEUE_HIGH";
pub const QUEUE_BULK: &str = "QUEUE_BULK";
/// The token-budget Durable Object namespace.
pub const BUDGET: &str = "BUDGET";
/// The static assets (the SPA and `openapi.json`), for `GET /api/openapi.json`.
pub const ASSETS: &str = "ASSETS";

/// Vars and secrets.
pub const AUTH_MODE: &str = "AUTH_MODE";
pub const ANTHROPIC_BASE_URL: &str = "ANTHROPIC_BASE_URL";
pub const ANTHROPIC_API_KEY: &str = "ANTHROPIC_API_KEY";
/// An Admin API key (`sk-ant-admin…`, a secret): reconciliation reads the cost report with it.
pub const ANTHROPIC_ADMIN_KEY: &str = "ANTHROPIC_ADMIN_KEY";
pub const MODEL_FALLBACKS: &str = "MODEL_FALLBACKS";
/// The operator's refusal fallback per model: `model=fallback` pairs, comma-separated
/// (`pipeline::refusal`); a job's own `fallback_model` comes first.
pub const REFUSAL_FALLBACKS: &str = "REFUSAL_FALLBACKS";
pub const NOTIFY_WEBHOOK_URL: &str = "NOTIFY_WEBHOOK_URL";
pub const DLQ_ALERT_THRESHOLD: &str = "DLQ_ALERT_THRESHOLD";
pub const DLQ_REPLAY_PER_S: &str = "DLQ_REPLAY_PER_S";
/// The bearer token a Prometheus scraper may send to `/api/metrics/prometheus` instead of an
/// admin key (best set as a secret).
pub const METRICS_SCRAPE_TOKEN: &str = "METRICS_SCRAPE_TOKEN";
/// The signing secret (`whsec_…`) of webhooks of jobs submitted without an API key (open mode),
/// or with a key made before webhooks. Set it as a secret.
pub const WEBHOOK_SECRET: &str = "WEBHOOK_SECRET";
/// `on` (local stacks only): `callback_url` may name a loopback receiver over http.
pub const WEBHOOK_ALLOW_LOOPBACK: &str = "WEBHOOK_ALLOW_LOOPBACK";
/// `on`: when the DLQ alert fires, the lanes with open dead letters are paused too.
pub const DLQ_ALERT_PAUSES: &str = "DLQ_ALERT_PAUSES";
/// Var (or secret, to change it without a redeploy) naming the share of users, 0–100, whose
/// `POST /api/claude` calls take the queue path.
pub const QUEUE_ROLLOUT_PERCENT: &str = "QUEUE_ROLLOUT_PERCENT";
/// How long the queue path of `POST /api/claude` waits for its job before answering 202.
pub const ROLLOUT_WAIT_MS: &str = "ROLLOUT_WAIT_MS";
/// The token budget's limits and lane slots, and `off` to track without refusing.
pub const BUDGET_RPM: &str = "BUDGET_RPM";
pub const BUDGET_ITPM: &str = "BUDGET_ITPM";
pub const BUDGET_OTPM: &str = "BUDGET_OTPM";
pub const BUDGET_ENFORCE: &str = "BUDGET_ENFORCE";
pub const LANE_HIGH_CONCURRENCY: &str = "LANE_HIGH_CONCURRENCY";
pub const LANE_BULK_CONCURRENCY: &str = "LANE_BULK_CONCURRENCY";
/// Per-user limits on the producers: jobs waiting, and jobs made per minute (0: none).
pub const USER_MAX_QUEUED: &str = "USER_MAX_QUEUED";
pub const USER_MAX_PER_MIN: &str = "USER_MAX_PER_MIN";
/// How long a Message Batch may answer 404 before its jobs are released to a new batch.
pub const BATCH_LOST_AFTER_S: &str = "BATCH_LOST_AFTER_S";
/// The most result lines a poll reads and settles, over every batch it reads (the next poll
/// resumes after them).
pub const BATCH_RESULTS_PER_RUN: &str = "BATCH_RESULTS_PER_RUN";
/// Retention (`pipeline::retention::Retention`): days, hours, and rows per cron run.
pub const RETAIN_JOBS_DAYS: &str = "RETAIN_JOBS_DAYS";
pub const RETAIN_BLOBS_DAYS: &str = "RETAIN_BLOBS_DAYS";
pub const RETAIN_ATTEMPTS_DAYS: &str = "RETAIN_ATTEMPTS_DAYS";
pub const RETAIN_METRICS_DAYS: &str = "RETAIN_METRICS_DAYS";
pub const RETENTION_SLICE: &str = "RETENTION_SLICE";
/// `on`: every answer carries `x-d1-statements`, `x-d1-rows-read` and `x-d1-rows-written` (what
/// the request asked of D1), and background invocations log the same figures. Local stacks set
/// it; production leaves it off (the figures describe the database to whoever asks).
pub const D1_STATS: &str = "D1_STATS";
/// The production envelope (`pipeline::envelope`): the account's Workers plan (`paid`, the
/// default, or `free`); the `[limits]` of `wrangler.toml`, repeated as vars because a Worker
/// cannot read its own `[limits]`; and `on` to refuse, as production would, the subrequest
/// that passes a limit (the dev and test profiles set it: `wrangler dev` enforces none).
pub const WORKERS_PLAN: &str = "WORKERS_PLAN";
pub const LIMITS_SUBREQUESTS: &str = "LIMITS_SUBREQUESTS";
pub const LIMITS_CPU_MS: &str = "LIMITS_CPU_MS";
pub const ENVELOPE_STRICT: &str = "ENVELOPE_STRICT";
/// `off`: PDFs always travel as base64 (a base URL without the Files API); default `on`: each
/// PDF is uploaded once to the Files API and read by `file_id`.
pub const ANTHROPIC_FILES_API: &str = "ANTHROPIC_FILES_API";
/// The routes besides the Anthropic API (`pipeline::provider::config` lists their vars) and
/// their credentials, secrets: AWS keys for Bedrock, an OAuth access token for Vertex AI.
pub const AWS_ACCESS_KEY_ID: &str = "AWS_ACCESS_KEY_ID";
pub const AWS_SECRET_ACCESS_KEY: &str = "AWS_SECRET_ACCESS_KEY";
pub const AWS_SESSION_TOKEN: &str = "AWS_SESSION_TOKEN";
pub const VERTEX_ACCESS_TOKEN: &str = "VERTEX_ACCESS_TOKEN";
/// A service account's JSON key (a secret): the Worker mints its own Vertex AI tokens with it
/// (`pipeline::provider::google`); preferred over a fixed `VERTEX_ACCESS_TOKEN`, which lasts an
/// hour.
pub const VERTEX_SERVICE_ACCOUNT: &str = "VERTEX_SERVICE_ACCOUNT";
/// The routes' breakers (`pipeline::breaker::Policy`): failures in a row that open one, within
/// how many seconds, and the seconds it stays open before a probe.
pub const BREAKER_FAILURES: &str = "BREAKER_FAILURES";
pub const BREAKER_WINDOW_S: &str = "BREAKER_WINDOW_S";
pub const BREAKER_COOL_DOWN_S: &str = "BREAKER_COOL_DOWN_S";

/// Configuration read from vars and secrets once per invocation.
#[derive(Debug, Clone)]
pub struct Config {
    pub auth_mode: AuthMode,
    pub anthropic_base_url: String,
    /// `ANTHROPIC_ADMIN_KEY`: with it, the cron reconciles our costs with the cost report.
    pub anthropic_admin_key: Option<String>,
    /// The secret `ANTHROPIC_API_KEY` (empty when not configured).
    pub anthropic_api_key: String,
    pub timing: Timing,
    /// The fallback chain, best first (`MODEL_FALLBACKS`, comma-separated), checked against the
    /// model catalog: unknown and retired models are left out.
    pub model_chain: Vec<String>,
    /// The refusal fallback per model (`REFUSAL_FALLBACKS`), checked against the catalog.
    pub refusal_fallbacks: pipeline::refusal::Fallbacks,
    /// What the check of the configured models found (an unknown or retired fallback, a default
    /// near retirement): shown by `/api/health` and on the Dashboard.
    pub model_warnings: Vec<String>,
    /// Where dead letters are announced (Slack-compatible JSON), if anywhere.
    pub notify_webhook_url: Option<String>,
    /// The webhook is called when the dead letters go above this many (`DLQ_ALERT_THRESHOLD`).
    pub dlq_alert_threshold: u64,
    /// `METRICS_SCRAPE_TOKEN`, if set.
    pub scrape_token: Option<String>,
    /// `DLQ_ALERT_PAUSES = "on"`: the DLQ alert pauses the lanes of the open dead letters.
    pub dlq_alert_pauses: bool,
    /// `WEBHOOK_SECRET`, if set.
    pub webhook_secret: Option<String>,
    /// `WEBHOOK_ALLOW_LOOPBACK = "on"`.
    pub webhook_loopback: bool,
    /// A bulk replay delivers at most this many jobs per second (`DLQ_REPLAY_PER_S`).
    pub replay_per_s: u32,
    /// The share of users whose `POST /api/claude` takes the queue path. Deliberately lenient
    /// (`rollout::parse_percent`): a typo is 0, so it never moves traffic.
    pub rollout_percent: u32,
    /// How long the queue path waits for its job (`ROLLOUT_WAIT_MS`, default 25 s).
    pub rollout_wait_ms: u64,
    /// Per-user limits on the producers (`USER_MAX_QUEUED`, default 2,000;
    /// `USER_MAX_PER_MIN`, default 1,200).
    pub user_limits: pipeline::ops::budgets::UserLimits,
    /// `BATCH_LOST_AFTER_S` (default an hour): a batch unknown to the API that long is given up.
    pub batch_lost_after_s: u64,
    /// What is kept and for how long (the `RETAIN_*` vars and `RETENTION_SLICE`).
    pub retention: pipeline::retention::Retention,
    /// `D1_STATS = "on"`.
    pub d1_stats: bool,
    /// `D1_STATS = "trace"`: besides the counts, one log line per D1 statement with its rows
    /// read and written and the head of its SQL (to see where a job's rows go).
    pub d1_trace: bool,
    /// `BATCH_RESULTS_PER_RUN` (default 5,000), per run over every batch: each chunk of 100
    /// lines is three D1 queries and up to 100 R2 writes (`pipeline::envelope::costs`); the
    /// invocation's share stops a run sooner when its limits would be passed (10,000
    /// subrequests and 1,000 D1 queries on Paid: developers.cloudflare.com/workers/platform/limits/,
    /// /d1/platform/limits/).
    pub batch_results_per_run: u64,
    /// `ANTHROPIC_FILES_API` (default on): PDFs through the Files API.
    pub files_api: bool,
    /// The plan and `[limits]` every invocation's envelope is figured from.
    pub plan: pipeline::envelope::Plan,
    pub configured_limits: pipeline::envelope::Configured,
    /// `ENVELOPE_STRICT = "on"`.
    pub envelope_strict: bool,
    /// Where Messages calls can go, the Anthropic API first (`ROUTES`), with each other
    /// route's credentials.
    pub routes: Routes,
}

/// The configured routes and the credentials of those besides the Anthropic API.
#[derive(Debug, Clone)]
pub struct Routes {
    pub list: pipeline::provider::Routes,
    pub aws: Option<pipeline::sigv4::Credentials>,
    pub vertex: Option<VertexAuth>,
}

/// How the Vertex AI route proves who it is.
#[derive(Debug, Clone)]
pub enum VertexAuth {
    /// A fixed access token (`VERTEX_ACCESS_TOKEN`): for a trial; it lasts about an hour.
    Token(String),
    /// A service account's key (`VERTEX_SERVICE_ACCOUNT`): tokens minted as they expire.
    Account(pipeline::provider::google::ServiceAccount),
}

impl Routes {
    /// Reads `ROUTES` and the vars and secrets of the routes it names; a route named without
    /// its credentials is an error naming the missing secret.
    fn from_env(env: &Env, anthropic_base_url: &str) -> Result<Routes, String> {
        let var = |name: &str| var_or_secret(env, name).filter(|v| !v.trim().is_empty());
        let list = pipeline::provider::Routes::from_vars(anthropic_base_url, var)?;
        let needs = |p| list.get(p).is_some();
        let secret = |name: &str| {
            var(name).ok_or_else(|| format!("{name} is required by the route ROUTES names"))
        };
        let aws = match needs(pipeline::provider::Provider::Bedrock) {
            true => Some(pipeline::sigv4::Credentials {
                access_key_id: secret(AWS_ACCESS_KEY_ID)?,
                secret_access_key: secret(AWS_SECRET_ACCESS_KEY)?,
                session_token: var(AWS_SESSION_TOKEN),
            }),
            false => None,
        };
        let vertex = match needs(pipeline::provider::Provider::Vertex) {
            true => Some(
                match (var(VERTEX_SERVICE_ACCOUNT), var(VERTEX_ACCESS_TOKEN)) {
                    (Some(key), _) => VertexAuth::Account(
                        pipeline::provider::google::ServiceAccount::parse(&key)
                            .map_err(|e| format!("{VERTEX_SERVICE_ACCOUNT}: {e}"))?,
                    ),
                    (None, Some(token)) => VertexAuth::Token(token),
                    (None, None) => {
                        return Err(format!(
                        "{VERTEX_SERVICE_ACCOUNT} (or {VERTEX_ACCESS_TOKEN}) is required by the \
                         route ROUTES names"
                    ))
                    }
                },
            ),
            false => None,
        };
        Ok(Routes { list, aws, vertex })
    }
}

impl Config {
    /// Reads the configuration. A malformed timing var is an error that names it.
    pub fn from_env(env: &Env) -> Result<Config, String> {
        let var = |name: &str| env.var(name).ok().map(|v| v.to_string());
        let timing = Timing::from_vars(var)?;
        let (plan, configured_limits) = envelope(&var, &timing)?;
        let models = Models::from_vars(&var);
        let anthropic_base_url = var(ANTHROPIC_BASE_URL)
            .unwrap_or_else(|| "https://api.anthropic.com".into())
            .trim_end_matches('/')
            .to_owned();
        let routes = Routes::from_env(env, &anthropic_base_url)?;
        let (model_chain, refusal_fallbacks, model_warnings) =
            (models.chain, models.refusal_fallbacks, models.warnings);
        Ok(Config {
            auth_mode: AuthMode::from_var(var(AUTH_MODE).as_deref()),
            anthropic_base_url,
            anthropic_api_key: env
                .secret(ANTHROPIC_API_KEY)
                .map(|s| s.to_string())
                .unwrap_or_default(),
            anthropic_admin_key: var_or_secret(env, ANTHROPIC_ADMIN_KEY)
                .filter(|k| !k.trim().is_empty()),
            timing,
            model_chain,
            refusal_fallbacks,
            model_warnings,
            notify_webhook_url: var_or_secret(env, NOTIFY_WEBHOOK_URL)
                .filter(|u| !u.trim().is_empty()),
            dlq_alert_threshold: number(var(DLQ_ALERT_THRESHOLD), DLQ_ALERT_THRESHOLD, 10)?,
            scrape_token: var_or_secret(env, METRICS_SCRAPE_TOKEN).filter(|t| !t.trim().is_empty()),
            dlq_alert_pauses: var(DLQ_ALERT_PAUSES).is_some_and(|v| v.trim() == "on"),
            webhook_secret: var_or_secret(env, WEBHOOK_SECRET).filter(|s| !s.trim().is_empty()),
            webhook_loopback: var(WEBHOOK_ALLOW_LOOPBACK).is_some_and(|v| v.trim() == "on"),
            replay_per_s: number(var(DLQ_REPLAY_PER_S), DLQ_REPLAY_PER_S, 5)?.max(1) as u32,
            rollout_percent: pipeline::rollout::parse_percent(
                var_or_secret(env, QUEUE_ROLLOUT_PERCENT).as_deref(),
            ),
            rollout_wait_ms: number(var(ROLLOUT_WAIT_MS), ROLLOUT_WAIT_MS, 25_000)?,
            user_limits: pipeline::ops::budgets::UserLimits {
                max_queued: number(var(USER_MAX_QUEUED), USER_MAX_QUEUED, 2_000)?,
                max_per_min: number(var(USER_MAX_PER_MIN), USER_MAX_PER_MIN, 1_200)?,
            },
            batch_lost_after_s: number(var(BATCH_LOST_AFTER_S), BATCH_LOST_AFTER_S, 3_600)?,
            retention: retention(&var)?,
            d1_stats: var(D1_STATS).is_some_and(|v| matches!(v.trim(), "on" | "trace")),
            d1_trace: var(D1_STATS).is_some_and(|v| v.trim() == "trace"),
            batch_results_per_run: number(
                var(BATCH_RESULTS_PER_RUN),
                BATCH_RESULTS_PER_RUN,
                5_000,
            )?
            .max(100),
            files_api: !var(ANTHROPIC_FILES_API)
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("off")),
            plan,
            configured_limits,
            envelope_strict: var(ENVELOPE_STRICT).is_some_and(|v| v.trim() == "on"),
            routes,
        })
    }
}

/// The plan and the `[limits]` figures every invocation's envelope is figured from. A figure
/// the plan does not allow is refused here, naming it; so is a flush size whose one flush
/// cannot fit a cron run.
fn envelope(
    var: &impl Fn(&str) -> Option<String>,
    timing: &Timing,
) -> Result<(pipeline::envelope::Plan, pipeline::envelope::Configured), String> {
    let plan = pipeline::envelope::Plan::from_var(var(WORKERS_PLAN).as_deref())?;
    let optional = |name: &str| -> Result<Option<u32>, String> {
        match var(name).filter(|v| !v.trim().is_empty()) {
            None => Ok(None),
            v => Ok(Some(number(v, name, 0)? as u32)),
        }
    };
    let configured = pipeline::envelope::Configured {
        subrequests: optional(LIMITS_SUBREQUESTS)?,
        cpu_ms: optional(LIMITS_CPU_MS)?,
    };
    let cron = pipeline::envelope::Limits::of(plan, pipeline::envelope::Entry::Cron, configured)
        .map_err(|e| e.to_string())?;
    pipeline::envelope::check_flush_size(&cron, pipeline::batching::flush_size(timing))
        .map_err(|e| e.to_string())?;
    Ok((plan, configured))
}

/// The models the configuration names: the fallback chain, the refusal fallbacks, and the
/// warnings about them (unknown, retiring, or the default's own standing).
struct Models {
    chain: Vec<String>,
    refusal_fallbacks: pipeline::refusal::Fallbacks,
    warnings: Vec<String>,
}

impl Models {
    fn from_vars(var: &impl Fn(&str) -> Option<String>) -> Models {
        let configured: Vec<String> = var(MODEL_FALLBACKS)
            .unwrap_or_default()
            .split(',')
            .map(|m| m.trim().to_owned())
            .filter(|m| !m.is_empty())
            .collect();
        let (chain, mut warnings) = pipeline::models::checked_chain(&configured, now_ms());
        let (refusal_fallbacks, refusal_problems) = pipeline::refusal::Fallbacks::parse(
            &var(REFUSAL_FALLBACKS).unwrap_or_default(),
            now_ms(),
        );
        warnings.extend(refusal_problems);
        warnings.extend(pipeline::models::standings(
            std::iter::once(pipeline::models::DEFAULT_MODEL)
                .chain(chain.iter().map(String::as_str)),
            now_ms(),
        ));
        Models {
            chain,
            refusal_fallbacks,
            warnings,
        }
    }
}

/// The retention policy: each var a whole number (days, hours, rows), unset for the default.
fn retention(
    var: &impl Fn(&str) -> Option<String>,
) -> Result<pipeline::retention::Retention, String> {
    let d = pipeline::retention::Retention::default();
    let n = |name: &str, default: i64| number(var(name), name, default as u64).map(|v| v as i64);
    Ok(pipeline::retention::Retention {
        jobs_days: n(RETAIN_JOBS_DAYS, d.jobs_days)?,
        blobs_days: n(RETAIN_BLOBS_DAYS, d.blobs_days)?,
        attempts_days: n(RETAIN_ATTEMPTS_DAYS, d.attempts_days)?,
        idempotency_hours: d.idempotency_hours,
        metrics_days: n(RETAIN_METRICS_DAYS, d.metrics_days)?,
        slice: n(RETENTION_SLICE, d.slice as i64)? as u32,
    }
    .normalized())
}

/// The token budget's settings (read by the `TokenBudget` object): a limit of 0 or unset is the
/// default.
pub fn budget_settings(env: &Env) -> Result<Settings, String> {
    let var = |name: &str| env.var(name).ok().map(|v| v.to_string());
    let read = |name: &str, default: u64| {
        number(var(name), name, 0).map(|n| if n == 0 { default } else { n })
    };
    let l = Limits::default();
    let d = LaneLimits::default();
    Ok(Settings {
        limits: Limits {
            rpm: read(BUDGET_RPM, l.rpm)?,
            itpm: read(BUDGET_ITPM, l.itpm)?,
            otpm: read(BUDGET_OTPM, l.otpm)?,
        },
        lanes: LaneLimits {
            high: read(LANE_HIGH_CONCURRENCY, d.high as u64)? as u32,
            bulk: read(LANE_BULK_CONCURRENCY, d.bulk as u64)? as u32,
        },
        enforce: !var(BUDGET_ENFORCE).is_some_and(|v| v.trim().eq_ignore_ascii_case("off")),
        breaker: breaker_policy(&var)?,
    })
}

/// The breakers' policy: `BREAKER_FAILURES`, `BREAKER_WINDOW_S`, `BREAKER_COOL_DOWN_S`, each
/// unset or 0 for the default (5 failures within 60 s; 30 s open).
fn breaker_policy(
    var: &impl Fn(&str) -> Option<String>,
) -> Result<pipeline::breaker::Policy, String> {
    let d = pipeline::breaker::Policy::default();
    let read = |name: &str, default: u64| {
        number(var(name), name, 0).map(|n| if n == 0 { default } else { n })
    };
    Ok(pipeline::breaker::Policy {
        failures: read(BREAKER_FAILURES, d.failures as u64)? as u32,
        window_ms: read(BREAKER_WINDOW_S, (d.window_ms / 1000) as u64)? as i64 * 1000,
        cool_down_ms: read(BREAKER_COOL_DOWN_S, (d.cool_down_ms / 1000) as u64)? as i64 * 1000,
        probe_lease_ms: d.probe_lease_ms,
    })
}

fn var_or_secret(env: &Env, name: &str) -> Option<String> {
    env.var(name)
        .ok()
        .map(|v| v.to_string())
        .or_else(|| env.secret(name).ok().map(|s| s.to_string()))
}

/// A whole-number var, `default` when unset; anything else is an error naming it.
fn number(raw: Option<String>, name: &str, default: u64) -> Result<u64, String> {
    match raw.as_deref().map(str::trim) {
        None | Some("") => Ok(default),
        Some(v) => v
            .parse()
            .map_err(|_| format!("{name} must be a whole number, not {v:?}")),
    }
}

impl Config {
    /// The limits of an invocation started by `entry` (checked at parse: they exist).
    pub fn limits(&self, entry: pipeline::envelope::Entry) -> pipeline::envelope::Limits {
        pipeline::envelope::Limits::of(self.plan, entry, self.configured_limits).unwrap_or_else(
            |_| {
                pipeline::envelope::Limits::of(self.plan, entry, Default::default())
                    .expect("a plan's defaults are allowed")
            },
        )
    }
}

/// Epoch milliseconds from the runtime clock; passed into `pipeline` as an argument.
pub fn now_ms() -> i64 {
    worker::Date::now().as_millis() as i64
}
