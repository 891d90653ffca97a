//! JSON shapes shared by the Worker (which serves them) and the SPA (which reads them).

use serde::{Deserialize, Serialize};

use crate::identity::{AuthMode, Role};

/// `GET /api/health`: what the Worker found when it touched each binding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HealthReport {
    /// True when every check passed.
    pub ok: bool,
    pub version: String,
    pub auth_mode: AuthMode,
    /// Who the caller was resolved as.
    pub user_id: String,
    pub role: Role,
    /// Where Anthropic calls go, and whether a real API key is configured.
    pub anthropic: AnthropicTarget,
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
pub struct Check {
    /// `d1`, `r2`, `durable_object`, `queue_high`, …
    pub name: String,
    pub ok: bool,
    /// What was found (a count, an object size, the DO's answer) or the error.
    pub detail: String,
    pub latency_ms: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnthropicTarget {
    pub base_url: String,
    /// `simulator` for a loopback base URL, `anthropic` otherwise.
    pub kind: String,
    pub key_configured: bool,
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
        }
    }
}

/// The body of the messages that the health check sends through a queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum QueueMessage {
    /// A health ping: the consumer records a heartbeat and acks it.
    Ping { sent_at: i64 },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loopback_base_url_is_the_simulator() {
        assert_eq!(
            AnthropicTarget::describe("http://127.0.0.1:8788", false).kind,
            "simulator"
        );
        assert_eq!(
            AnthropicTarget::describe("http://localhost:9000/x", false).kind,
            "simulator"
        );
        assert_eq!(
            AnthropicTarget::describe("https://api.anthropic.com", true).kind,
            "anthropic"
        );
    }

    #[test]
    fn queue_messages_are_tagged_by_type() {
        let json = serde_json::to_value(QueueMessage::Ping { sent_at: 5 }).unwrap();
        assert_eq!(json, serde_json::json!({"type": "ping", "sent_at": 5}));
    }
}
