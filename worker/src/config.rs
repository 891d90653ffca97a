//! Binding names, mirroring `wrangler.toml`, and the vars every entry point reads.

use pipeline::identity::AuthMode;
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

/// Vars and secrets.
pub const AUTH_MODE: &str = "AUTH_MODE";
pub const ANTHROPIC_BASE_URL: &str = "ANTHROPIC_BASE_URL";
pub const ANTHROPIC_API_KEY: &str = "ANTHROPIC_API_KEY";
pub const MODEL_FALLBACKS: &str = "MODEL_FALLBACKS";
pub const NOTIFY_WEBHOOK_URL: &str = "NOTIFY_WEBHOOK_URL";
pub const DLQ_ALERT_THRESHOLD: &str = "DLQ_ALERT_THRESHOLD";
pub const DLQ_REPLAY_PER_S: &str = "DLQ_REPLAY_PER_S";

/// Configuration read from vars and secrets once per invocation.
#[derive(Debug, Clone)]
pub struct Config {
    pub auth_mode: AuthMode,
    pub anthropic_base_url: String,
    /// The secret `ANTHROPIC_API_KEY` (empty when not configured).
    pub anthropic_api_key: String,
    pub timing: Timing,
    /// The fallback chain, best first (`MODEL_FALLBACKS`, comma-separated), checked against the
    /// model catalog: unknown and retired models are left out.
    pub model_chain: Vec<String>,
    /// What the check of the configured models found (an unknown or retired fallback, a default
    /// near retirement): shown by `/api/health` and on the Dashboard.
    pub model_warnings: Vec<String>,
    /// Where dead letters are announced (Slack-compatible JSON), if anywhere.
    pub notify_webhook_url: Option<String>,
    /// The webhook is called when the dead letters go above this many (`DLQ_ALERT_THRESHOLD`).
    pub dlq_alert_threshold: u64,
    /// A bulk replay delivers at most this many jobs per second (`DLQ_REPLAY_PER_S`).
    pub replay_per_s: u32,
}

impl Config {
    /// Reads the configuration. A malformed timing var is an error that names it.
    pub fn from_env(env: &Env) -> Result<Config, String> {
        let var = |name: &str| env.var(name).ok().map(|v| v.to_string());
        let timing = Timing::from_vars(var)?;
        let configured: Vec<String> = var(MODEL_FALLBACKS)
            .unwrap_or_default()
            .split(',')
            .map(|m| m.trim().to_owned())
            .filter(|m| !m.is_empty())
            .collect();
        let (model_chain, mut model_warnings) =
            pipeline::models::checked_chain(&configured, now_ms());
        model_warnings.extend(pipeline::models::standings(
            std::iter::once(pipeline::models::DEFAULT_MODEL)
                .chain(model_chain.iter().map(String::as_str)),
            now_ms(),
        ));
        Ok(Config {
            auth_mode: AuthMode::from_var(var(AUTH_MODE).as_deref()),
            anthropic_base_url: var(ANTHROPIC_BASE_URL)
                .unwrap_or_else(|| "https://api.anthropic.com".into())
                .trim_end_matches('/')
                .to_owned(),
            anthropic_api_key: env
                .secret(ANTHROPIC_API_KEY)
                .map(|s| s.to_string())
                .unwrap_or_default(),
            timing,
            model_chain,
            model_warnings,
            notify_webhook_url: var(NOTIFY_WEBHOOK_URL)
                .or_else(|| env.secret(NOTIFY_WEBHOOK_URL).ok().map(|s| s.to_string()))
                .filter(|u| !u.trim().is_empty()),
            dlq_alert_threshold: number(var(DLQ_ALERT_THRESHOLD), DLQ_ALERT_THRESHOLD, 10)?,
            replay_per_s: number(var(DLQ_REPLAY_PER_S), DLQ_REPLAY_PER_S, 5)?.max(1) as u32,
        })
    }
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

/// Epoch milliseconds from the runtime clock; passed into `pipeline` as an argument.
pub fn now_ms() -> i64 {
    worker::Date::now().as_millis() as i64
}
