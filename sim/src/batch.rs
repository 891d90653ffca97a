//! One Message Batch as the simulator keeps it, its counts and its object (`crate::batches`
//! serves and processes them).

use pipeline::clock::format_rfc3339;
use serde_json::{json, Value};

/// At most 100,000 requests…
pub const MAX_REQUESTS: usize = 100_000;
/// …and 256 MB per batch.
pub const MAX_BATCH_BYTES: usize = 256 * 1024 * 1024;
/// Results are kept (and the batch listed) for 29 days; it expires after 24 hours.
pub const EXPIRES_MS: i64 = 24 * 3600 * 1000;
/// A canceled batch takes this long to go from `canceling` to `ended`.
pub const CANCEL_MS: i64 = 200;

/// One Message Batch.
#[derive(Debug, Clone)]
pub struct Batch {
    pub id: String,
    pub created_at: i64,
    pub ends_at: i64,
    pub cancel_initiated_at: Option<i64>,
    pub ended_at: Option<i64>,
    /// `(custom_id, params)`, emptied once processed.
    pub requests: Vec<(String, Value)>,
    pub total: u64,
    /// JSONL lines, once ended.
    pub results: Vec<Value>,
    pub counts: Counts,
    /// The `anthropic-version` of the create call: each request is read under it.
    pub version: String,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub succeeded: u64,
    pub errored: u64,
    pub canceled: u64,
    pub expired: u64,
}

impl Batch {
    pub fn status(&self) -> &'static str {
        match (self.ended_at, self.cancel_initiated_at) {
            (Some(_), _) => "ended",
            (None, Some(_)) => "canceling",
            (None, None) => "in_progress",
        }
    }

    /// The Message Batch object; `base` is the simulator's own URL, for `results_url`.
    pub fn view(&self, base: &str) -> Value {
        let processing = if self.ended_at.is_some() {
            0
        } else {
            self.total
        };
        let ts = |t: Option<i64>| t.map(format_rfc3339);
        json!({
            "id": self.id,
            "type": "message_batch",
            "processing_status": self.status(),
            "request_counts": {
                "processing": processing,
                "succeeded": self.counts.succeeded,
                "errored": self.counts.errored,
                "canceled": self.counts.canceled,
                "expired": self.counts.expired,
            },
            "ended_at": ts(self.ended_at),
            "created_at": format_rfc3339(self.created_at),
            "expires_at": format_rfc3339(self.created_at + EXPIRES_MS),
            "archived_at": null,
            "cancel_initiated_at": ts(self.cancel_initiated_at),
            "results_url": self.ended_at.map(|_| format!("{base}/v1/messages/batches/{}/results", self.id)),
        })
    }
}
