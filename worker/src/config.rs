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

/// Configuration read from vars and secrets once per invocation.
#[derive(Debug, Clone)]
pub struct Config {
    pub auth_mode: AuthMode,
    pub anthropic_base_url: String,
    /// The secret `ANTHROPIC_API_KEY` (empty when not configured).
    pub anthropic_api_key: String,
    pub timing: Timing,
}

impl Config {
    /// Reads the configuration. A malformed timing var is an error that names it.
    pub fn from_env(env: &Env) -> Result<Config, String> {
        let var = |name: &str| env.var(name).ok().map(|v| v.to_string());
        let timing = Timing::from_vars(var)?;
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
        })
    }
}

/// Epoch milliseconds from the runtime clock; passed into `pipeline` as an argument.
pub fn now_ms() -> i64 {
    worker::Date::now().as_millis() as i64
}
