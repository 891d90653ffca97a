//! The Message Batches API: create, retrieve, list, and the JSONL results.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::errors::ErrorResponse;
use super::request::MessagesRequest;
use super::response::Message;

/// `POST /v1/messages/batches` body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateBatch {
    pub requests: Vec<BatchRequest>,
}

/// One request of a Message Batch: `custom_id` is our job id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchRequest {
    pub custom_id: String,
    pub params: MessagesRequest,
}

/// The Message Batch object (the fields the pipeline reads).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageBatch {
    pub id: String,
    /// `in_progress`, `canceling` or `ended`.
    pub processing_status: String,
    pub request_counts: RequestCounts,
    #[serde(default)]
    pub results_url: Option<String>,
    /// RFC 3339.
    #[serde(default)]
    pub created_at: Option<String>,
    /// RFC 3339, once processing has ended (`null` before).
    #[serde(default)]
    pub ended_at: Option<String>,
}

/// `GET /v1/messages/batches`: a page of the account's batches, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageBatchList {
    pub data: Vec<MessageBatch>,
    #[serde(default)]
    pub has_more: bool,
    #[serde(default)]
    pub last_id: Option<String>,
}

impl MessageBatch {
    pub fn ended(&self) -> bool {
        self.processing_status == "ended"
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestCounts {
    pub processing: u64,
    pub succeeded: u64,
    pub errored: u64,
    pub canceled: u64,
    pub expired: u64,
}

/// One line of a batch's JSONL results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchResultLine {
    pub custom_id: String,
    pub result: BatchResult,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BatchResult {
    Succeeded {
        message: Message,
    },
    Errored {
        error: ErrorResponse,
    },
    Canceled,
    Expired,
    /// A line naming its request whose result could not be read (never sent by the API; made
    /// by [`parse_results`] so the job fails with the reason instead of going missing).
    #[serde(skip)]
    Unreadable {
        reason: String,
    },
    /// A result type this client does not know.
    #[serde(other)]
    Unknown,
}

/// Parses JSONL results. A line that cannot be read but names its `custom_id` becomes
/// [`BatchResult::Unreadable`]; one that names nothing is an error with its number.
pub fn parse_results(jsonl: &str) -> Vec<Result<BatchResultLine, String>> {
    jsonl
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| parse_result_line(l, i as u64 + 1))
        .collect()
}

/// One line of the results (`number` counts from 1, for the error).
pub fn parse_result_line(l: &str, number: u64) -> Result<BatchResultLine, String> {
    serde_json::from_str::<BatchResultLine>(l).or_else(|e| {
        let custom_id = serde_json::from_str::<Value>(l)
            .ok()
            .and_then(|v| v.get("custom_id")?.as_str().map(str::to_owned))
            .ok_or_else(|| format!("result line {number}: {e}"))?;
        Ok(BatchResultLine {
            custom_id,
            result: BatchResult::Unreadable {
                reason: format!("its batch result could not be read: {e}"),
            },
        })
    })
}
