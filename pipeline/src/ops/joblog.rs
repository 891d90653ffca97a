//! Structured logs: every log line about a job is one JSON object with the same fields, so
//! Workers Logs, Logpush and an OpenTelemetry backend can filter and add them up
//! (`$.event = "job.attempt" AND $.outcome = "dead_lettered"`, the sum of `$.cost_micros` by
//! `$.user_id`). A Message Batch's results are logged as one line per settled chunk instead of
//! one per job: a chunk settles up to `BATCH_RESULTS_PER_RUN` (5,000) jobs in one invocation,
//! and Workers Logs keeps at most 256 KB of log events per invocation
//! (https://developers.cloudflare.com/changelog/2025-04-07-increase-trace-events-limit).

use serde::Serialize;

use crate::anthropic::Usage;
use crate::money::UsdMicros;

/// One line about one job.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct JobLog<'a> {
    /// `job.attempt` (a call ended), `job.expired` (it expired before it ran).
    pub event: &'a str,
    pub job_id: &'a str,
    pub user_id: &'a str,
    pub kind: &'a str,
    pub lane: &'a str,
    pub mode: &'a str,
    pub model: Option<&'a str>,
    /// `completed`, `failed`, `retry`, `dead_lettered`, `expired`.
    pub outcome: &'a str,
    /// The attempt (1 for the first call), 0 when no call was made.
    pub attempt: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_write_tokens: u64,
    pub cache_read_tokens: u64,
    pub cost_micros: u64,
    /// How long it took: the call's duration, or the job's age when it expired.
    pub ms: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'a str>,
}

impl<'a> JobLog<'a> {
    /// The tokens and cost of an answer.
    pub fn with_usage(mut self, usage: Option<&Usage>, cost: Option<UsdMicros>) -> Self {
        if let Some(u) = usage {
            self.input_tokens = u.input_tokens as u64;
            self.output_tokens = u.output_tokens as u64;
            self.cache_write_tokens = u.cache_creation_input_tokens as u64;
            self.cache_read_tokens = u.cache_read_input_tokens as u64;
        }
        self.cost_micros = cost.map_or(0, |c| c.micros());
        self
    }

    /// The line.
    pub fn line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// One line about a chunk of a Message Batch's results.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct BatchChunkLog<'a> {
    /// `batch.chunk`.
    pub event: &'a str,
    pub batch_id: &'a str,
    /// Result lines read in this chunk.
    pub lines: u64,
    pub completed: u64,
    pub failed: u64,
    /// Jobs sent again in a new batch, or dead-lettered.
    pub retried: u64,
    pub dead_lettered: u64,
    pub ms: i64,
}

impl BatchChunkLog<'_> {
    pub fn line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_line_has_every_field_even_when_zero() {
        let usage = Usage {
            input_tokens: 12,
            output_tokens: 30,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 4,
            cache_creation: None,
            speed: None,
        };
        let line = JobLog {
            event: "job.attempt",
            job_id: "j1",
            user_id: "ann",
            kind: "prompt",
            lane: "high",
            mode: "sync",
            model: Some("claude-sonnet-5-5"),
            outcome: "completed",
            attempt: 1,
            ms: 812,
            ..JobLog::default()
        }
        .with_usage(Some(&usage), Some(UsdMicros::new(531)))
        .line();
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        for key in [
            "event",
            "job_id",
            "user_id",
            "kind",
            "lane",
            "mode",
            "model",
            "outcome",
            "attempt",
            "input_tokens",
            "output_tokens",
            "cache_write_tokens",
            "cache_read_tokens",
            "cost_micros",
            "ms",
        ] {
            assert!(v.get(key).is_some(), "{key} in {line}");
        }
        assert_eq!(v["cost_micros"], 531);
        assert_eq!(v["cache_read_tokens"], 4);
        assert!(v.get("error").is_none(), "no error, no key");
        assert!(!line.contains('\n'), "one line");
    }
}
