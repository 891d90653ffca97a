//! Anthropic wire types: what the Worker sends and reads, and what the simulator serves.
//!
//! Field names and shapes follow the published Messages API (`POST /v1/messages`); optional
//! fields are skipped when absent so requests stay byte-minimal.

use serde::{Deserialize, Serialize};

/// The API version header every request carries.
pub const API_VERSION: &str = "2023-06-01";
/// Header names of the Messages API.
pub mod header {
    pub const API_KEY: &str = "x-api-key";
    pub const VERSION: &str = "anthropic-version";
    pub const REQUEST_ID: &str = "request-id";
    pub const RETRY_AFTER: &str = "retry-after";
}

/// `POST /v1/messages` request body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessagesRequest {
    pub model: String,
    pub max_tokens: u32,
    pub messages: Vec<InputMessage>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub system: Option<Content>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub temperature: Option<f32>,
}

/// One turn of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputMessage {
    pub role: Role,
    pub content: Content,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// Message content: a plain string or a list of blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Content {
    Text(String),
    Blocks(Vec<InputBlock>),
}

impl Content {
    /// The text of the content (text blocks joined; documents left out).
    pub fn text(&self) -> String {
        match self {
            Content::Text(t) => t.clone(),
            Content::Blocks(blocks) => blocks
                .iter()
                .filter_map(|b| match b {
                    InputBlock::Text { text, .. } => Some(text.as_str()),
                    InputBlock::Document { .. } => None,
                })
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}

/// An input content block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum InputBlock {
    Text {
        text: String,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        cache_control: Option<CacheControl>,
    },
    Document {
        source: DocumentSource,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        cache_control: Option<CacheControl>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheControl {
    #[serde(rename = "type")]
    pub kind: String,
    /// `5m` (the default when absent) or `1h`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub ttl: Option<String>,
}

impl CacheControl {
    /// `{"type":"ephemeral"}`: a 5-minute cache breakpoint.
    pub fn ephemeral() -> CacheControl {
        CacheControl {
            kind: "ephemeral".into(),
            ttl: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocumentSource {
    #[serde(rename = "type")]
    pub kind: String,
    pub media_type: String,
    pub data: String,
}

/// The Message object the API answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub role: Role,
    pub content: Vec<OutputBlock>,
    pub model: String,
    pub stop_reason: Option<StopReason>,
    pub stop_sequence: Option<String>,
    pub usage: Usage,
}

impl Message {
    /// All text blocks joined: the model's answer.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .map(|b| match b {
                OutputBlock::Text { text } => text.as_str(),
            })
            .collect()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum OutputBlock {
    Text { text: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    EndTurn,
    MaxTokens,
    StopSequence,
    ToolUse,
    PauseTurn,
    Refusal,
}

/// Token usage of one call; cache fields are absent on old responses, hence the defaults.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u32,
    pub output_tokens: u32,
    #[serde(default)]
    pub cache_creation_input_tokens: u32,
    #[serde(default)]
    pub cache_read_input_tokens: u32,
    /// The cache writes by lifetime (the API sends it beside the total).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation: Option<CacheCreation>,
}

/// `usage.cache_creation`: cache-write tokens by lifetime.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheCreation {
    #[serde(default)]
    pub ephemeral_5m_input_tokens: u32,
    #[serde(default)]
    pub ephemeral_1h_input_tokens: u32,
}

impl Usage {
    /// As string pairs, to travel as R2 custom metadata beside a stored answer.
    pub fn to_metadata(&self) -> Vec<(String, String)> {
        vec![
            ("input_tokens".into(), self.input_tokens.to_string()),
            ("output_tokens".into(), self.output_tokens.to_string()),
            (
                "cache_creation_input_tokens".into(),
                self.cache_creation_input_tokens.to_string(),
            ),
            (
                "cache_read_input_tokens".into(),
                self.cache_read_input_tokens.to_string(),
            ),
            (
                "cache_creation_1h_input_tokens".into(),
                self.cache_write_1h().to_string(),
            ),
        ]
    }

    /// Cache-write tokens with a one-hour lifetime (the rest of the writes are 5-minute).
    pub fn cache_write_1h(&self) -> u32 {
        self.cache_creation
            .map(|c| c.ephemeral_1h_input_tokens)
            .unwrap_or(0)
            .min(self.cache_creation_input_tokens)
    }

    /// Back from metadata; `None` if any field is missing or not a number.
    pub fn from_metadata(get: impl Fn(&str) -> Option<String>) -> Option<Usage> {
        let n = |k: &str| get(k)?.parse::<u32>().ok();
        Some(Usage {
            input_tokens: n("input_tokens")?,
            output_tokens: n("output_tokens")?,
            cache_creation_input_tokens: n("cache_creation_input_tokens")?,
            cache_read_input_tokens: n("cache_read_input_tokens")?,
            cache_creation: n("cache_creation_1h_input_tokens")
                .filter(|h| *h > 0)
                .map(|h| CacheCreation {
                    ephemeral_5m_input_tokens: n("cache_creation_input_tokens")
                        .unwrap_or(0)
                        .saturating_sub(h),
                    ephemeral_1h_input_tokens: h,
                }),
        })
    }
}

/// The error types of the API and the status each comes with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorType {
    InvalidRequestError,
    AuthenticationError,
    BillingError,
    PermissionError,
    NotFoundError,
    RequestTooLarge,
    RateLimitError,
    ApiError,
    TimeoutError,
    OverloadedError,
}

impl ErrorType {
    /// The type the API pairs with a status; other 5xx statuses are `api_error`.
    pub fn for_status(status: u16) -> ErrorType {
        match status {
            400 => ErrorType::InvalidRequestError,
            401 => ErrorType::AuthenticationError,
            402 => ErrorType::BillingError,
            403 => ErrorType::PermissionError,
            404 => ErrorType::NotFoundError,
            413 => ErrorType::RequestTooLarge,
            429 => ErrorType::RateLimitError,
            504 => ErrorType::TimeoutError,
            529 => ErrorType::OverloadedError,
            s if s < 500 => ErrorType::InvalidRequestError,
            _ => ErrorType::ApiError,
        }
    }

    pub fn status(self) -> u16 {
        match self {
            ErrorType::InvalidRequestError => 400,
            ErrorType::AuthenticationError => 401,
            ErrorType::BillingError => 402,
            ErrorType::PermissionError => 403,
            ErrorType::NotFoundError => 404,
            ErrorType::RequestTooLarge => 413,
            ErrorType::RateLimitError => 429,
            ErrorType::ApiError => 500,
            ErrorType::TimeoutError => 504,
            ErrorType::OverloadedError => 529,
        }
    }
}

/// `{"type":"error","error":{"type","message"},"request_id"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorResponse {
    #[serde(rename = "type")]
    pub kind: String,
    pub error: ErrorDetail,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub request_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorDetail {
    #[serde(rename = "type")]
    pub kind: ErrorType,
    pub message: String,
}

impl ErrorResponse {
    pub fn new(kind: ErrorType, message: impl Into<String>, request_id: Option<String>) -> Self {
        ErrorResponse {
            kind: "error".into(),
            error: ErrorDetail {
                kind,
                message: message.into(),
            },
            request_id,
        }
    }
}

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
}

/// `GET /v1/messages/batches`: a page of the account's batches, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchList {
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
    Succeeded { message: Message },
    Errored { error: ErrorResponse },
    Canceled,
    Expired,
}

/// Parses JSONL results; a line that cannot be read is returned as an error with its number.
pub fn parse_results(jsonl: &str) -> Vec<Result<BatchResultLine, String>> {
    jsonl
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("result line {}: {e}", i + 1)))
        .collect()
}

/// The `anthropic-ratelimit-*` header families: `<prefix>-limit`, `-remaining`, `-reset`.
pub const RATE_LIMIT_FAMILIES: [&str; 3] = [
    "anthropic-ratelimit-requests",
    "anthropic-ratelimit-input-tokens",
    "anthropic-ratelimit-output-tokens",
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_request_with_string_and_block_content_parses() {
        let req: MessagesRequest = serde_json::from_value(json!({
            "model": "claude-sonnet-4-5", "max_tokens": 100,
            "system": "be brief",
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
            ]
        }))
        .unwrap();
        assert_eq!(req.messages.len(), 2);
        assert_eq!(req.system, Some(Content::Text("be brief".into())));
    }

    #[test]
    fn a_message_without_cache_fields_still_parses() {
        let m: Message = serde_json::from_value(json!({
            "id": "msg_1", "type": "message", "role": "assistant",
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            "model": "m", "stop_reason": "end_turn", "stop_sequence": null,
            "usage": {"input_tokens": 3, "output_tokens": 2}
        }))
        .unwrap();
        assert_eq!(m.text(), "ab");
        assert_eq!(m.usage.cache_read_input_tokens, 0);
    }

    #[test]
    fn usage_survives_a_trip_through_metadata() {
        let u = Usage {
            input_tokens: 1,
            output_tokens: 2,
            cache_creation_input_tokens: 3,
            cache_read_input_tokens: 4,
            cache_creation: None,
        };
        let m: std::collections::HashMap<String, String> = u.to_metadata().into_iter().collect();
        assert_eq!(Usage::from_metadata(|k| m.get(k).cloned()), Some(u));
        assert_eq!(Usage::from_metadata(|_| None), None);
    }

    #[test]
    fn batch_results_of_every_kind_parse() {
        let jsonl = concat!(
            r#"{"custom_id":"a","result":{"type":"succeeded","message":{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"model":"m","stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}}"#,
            "\n",
            r#"{"custom_id":"b","result":{"type":"errored","error":{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}}}"#,
            "\n",
            r#"{"custom_id":"c","result":{"type":"canceled"}}"#,
            "\n",
            r#"{"custom_id":"d","result":{"type":"expired"}}"#,
            "\n",
            "not json\n",
        );
        let lines = parse_results(jsonl);
        assert_eq!(lines.len(), 5);
        assert!(matches!(
            lines[0].as_ref().unwrap().result,
            BatchResult::Succeeded { .. }
        ));
        match &lines[1].as_ref().unwrap().result {
            BatchResult::Errored { error } => {
                assert_eq!(error.error.kind, ErrorType::InvalidRequestError)
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(lines[2].as_ref().unwrap().result, BatchResult::Canceled);
        assert_eq!(lines[3].as_ref().unwrap().result, BatchResult::Expired);
        assert!(lines[4].as_ref().unwrap_err().contains("line 5"));
    }

    #[test]
    fn error_bodies_have_the_published_shape() {
        let e = ErrorResponse::new(ErrorType::OverloadedError, "Overloaded", None);
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
        );
        assert_eq!(ErrorType::OverloadedError.status(), 529);
        for t in [
            ErrorType::InvalidRequestError,
            ErrorType::AuthenticationError,
            ErrorType::PermissionError,
            ErrorType::NotFoundError,
            ErrorType::RequestTooLarge,
            ErrorType::RateLimitError,
            ErrorType::ApiError,
            ErrorType::OverloadedError,
        ] {
            assert_eq!(ErrorType::for_status(t.status()), t);
        }
        assert_eq!(ErrorType::RequestTooLarge.status(), 413);
    }
}
