//! Anthropic wire types: what the Worker sends and reads, and what the simulator serves.
//!
//! Field names and shapes follow the published Messages API (`POST /v1/messages`); optional
//! fields are skipped when absent so requests stay byte-minimal.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The API version header every request carries.
pub const API_VERSION: &str = "2023-06-01";
/// Header names of the Messages API.
pub mod header {
    pub const API_KEY: &str = "x-api-key";
    pub const VERSION: &str = "anthropic-version";
    pub const REQUEST_ID: &str = "request-id";
    pub const RETRY_AFTER: &str = "retry-after";
}

/// `POST /v1/messages` request body. Every optional parameter is skipped when absent, so a
/// request carries only what its model accepts (see [`crate::models`] for what each refuses).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MessagesRequest {
    pub model: String,
    pub max_tokens: u32,
    pub messages: Vec<InputMessage>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub system: Option<Content>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub stop_sequences: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub metadata: Option<Metadata>,
    /// Sampling: refused (400) by the 5.x models at any non-default value.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub top_p: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub top_k: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub thinking: Option<Thinking>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub output_config: Option<OutputConfig>,
    /// Tool definitions, passed through as the caller wrote them (client and server tools).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tools: Option<Vec<Value>>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tool_choice: Option<ToolChoice>,
}

impl MessagesRequest {
    /// A request with no optional parameter set.
    pub fn new(model: &str, max_tokens: u32, messages: Vec<InputMessage>) -> MessagesRequest {
        MessagesRequest {
            model: model.to_owned(),
            max_tokens,
            messages,
            ..MessagesRequest::default()
        }
    }

    /// The conversation ends with an assistant turn: a prefill, which the 5.5 models refuse.
    pub fn has_prefill(&self) -> bool {
        self.messages
            .last()
            .is_some_and(|m| m.role == Role::Assistant)
    }
}

/// `POST /v1/messages/count_tokens` body: the parts of a Messages request that are input (SDK
/// `MessageCountTokensParams`: no `max_tokens`, `metadata`, `stop_sequences` or sampling).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CountTokensRequest<'a> {
    pub model: &'a str,
    pub messages: &'a [InputMessage],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<&'a Content>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking: Option<&'a Thinking>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_config: Option<&'a OutputConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<&'a [Value]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<&'a ToolChoice>,
}

impl<'a> From<&'a MessagesRequest> for CountTokensRequest<'a> {
    fn from(r: &'a MessagesRequest) -> Self {
        CountTokensRequest {
            model: &r.model,
            messages: &r.messages,
            system: r.system.as_ref(),
            thinking: r.thinking.as_ref(),
            output_config: r.output_config.as_ref(),
            tools: r.tools.as_deref(),
            tool_choice: r.tool_choice.as_ref(),
        }
    }
}

/// `metadata`: an opaque id of the end user (no name, email or phone number, per the docs).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Metadata {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub user_id: Option<String>,
}

/// `thinking`: `{"type":"adaptive"}` (the 5.x default), `{"type":"enabled","budget_tokens":N}`
/// (the older manual budget) or `{"type":"disabled"}`; `display` is `summarized` or `omitted`
/// (SDK `ThinkingConfigParam`, anthropic-sdk-typescript `src/resources/messages/messages.ts`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Thinking {
    Adaptive {
        #[serde(skip_serializing_if = "Option::is_none", default)]
        display: Option<ThinkingDisplay>,
    },
    Enabled {
        budget_tokens: u32,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        display: Option<ThinkingDisplay>,
    },
    Disabled,
}

impl Thinking {
    pub fn kind(&self) -> &'static str {
        match self {
            Thinking::Adaptive { .. } => "adaptive",
            Thinking::Enabled { .. } => "enabled",
            Thinking::Disabled => "disabled",
        }
    }
}

/// `thinking.display`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThinkingDisplay {
    Summarized,
    Omitted,
}

/// `output_config`: how hard the model works (`effort`) and the shape of its answer (`format`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputConfig {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub effort: Option<Effort>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub format: Option<OutputFormat>,
}

/// Effort levels, least to most (platform.claude.com/docs/en/build-with-claude/effort).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effort {
    Low,
    Medium,
    High,
    Xhigh,
    Max,
}

impl Effort {
    pub const ALL: [Effort; 5] = [
        Effort::Low,
        Effort::Medium,
        Effort::High,
        Effort::Xhigh,
        Effort::Max,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High => "high",
            Effort::Xhigh => "xhigh",
            Effort::Max => "max",
        }
    }
}

/// `output_config.format`: structured outputs, `{"type":"json_schema","schema":{…}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum OutputFormat {
    JsonSchema { schema: Value },
}

/// `tool_choice`: `auto` and `none` leave the choice to the model; `any` and `tool` force a
/// tool call (refused by the 5.5 models).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ToolChoice {
    Auto {
        #[serde(skip_serializing_if = "Option::is_none", default)]
        disable_parallel_tool_use: Option<bool>,
    },
    Any {
        #[serde(skip_serializing_if = "Option::is_none", default)]
        disable_parallel_tool_use: Option<bool>,
    },
    Tool {
        name: String,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        disable_parallel_tool_use: Option<bool>,
    },
    None,
}

impl ToolChoice {
    /// `any` or `tool`: the model must call a tool.
    pub fn is_forced(&self) -> bool {
        matches!(self, ToolChoice::Any { .. } | ToolChoice::Tool { .. })
    }
}

/// One turn of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputMessage {
    pub role: Role,
    pub content: Content,
}

impl InputMessage {
    pub fn user(content: Content) -> InputMessage {
        InputMessage {
            role: Role::User,
            content,
        }
    }
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
    /// The text of the content (text blocks joined; documents and other blocks left out).
    pub fn text(&self) -> String {
        match self {
            Content::Text(t) => t.clone(),
            Content::Blocks(blocks) => blocks
                .iter()
                .filter_map(|b| match b {
                    InputBlock::Text { text, .. } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}

/// An input content block. Text and documents are built by the product; any other block a
/// caller sends in a prompt job's `messages` (images, tool results…) is carried as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum InputBlock {
    Text {
        #[serde(rename = "type")]
        kind: TextTag,
        text: String,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        cache_control: Option<CacheControl>,
    },
    Document {
        #[serde(rename = "type")]
        kind: DocumentTag,
        source: DocumentSource,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        cache_control: Option<CacheControl>,
    },
    Other(Value),
}

/// The `"type":"text"` tag of an input text block (a unit type, so `untagged` can match it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TextTag {
    #[default]
    Text,
}

/// The `"type":"document"` tag.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DocumentTag {
    #[default]
    Document,
}

impl InputBlock {
    /// A text block, behind a cache breakpoint when `cache_control` is given.
    pub fn text(text: impl Into<String>, cache_control: Option<CacheControl>) -> InputBlock {
        InputBlock::Text {
            kind: TextTag::Text,
            text: text.into(),
            cache_control,
        }
    }

    /// A base64 PDF document block.
    pub fn pdf(data: String, cache_control: Option<CacheControl>) -> InputBlock {
        InputBlock::Document {
            kind: DocumentTag::Document,
            source: DocumentSource {
                kind: "base64".into(),
                media_type: "application/pdf".into(),
                data,
            },
            cache_control,
        }
    }
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

/// The Message object the API answers. Read by content-block type: [`Message::text`] is the
/// answer, whatever thinking, tool or server-tool blocks come around it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub role: Role,
    pub content: Vec<OutputBlock>,
    pub model: String,
    pub stop_reason: Option<StopReason>,
    #[serde(default)]
    pub stop_sequence: Option<String>,
    pub usage: Usage,
}

impl Message {
    /// The `text` blocks joined: the model's answer (thinking and tool blocks are not part of it).
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|b| match b {
                OutputBlock::Known(KnownBlock::Text { text, .. }) => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// Whether any `text` block with content came back.
    pub fn has_text(&self) -> bool {
        !self.text().trim().is_empty()
    }
}

/// A content block of an answer: one this client knows by type, or any other kept raw, so a
/// block type added to the API tomorrow never breaks a decode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OutputBlock {
    Known(KnownBlock),
    Other(Value),
}

impl OutputBlock {
    /// A plain text block.
    pub fn text(text: impl Into<String>) -> OutputBlock {
        OutputBlock::Known(KnownBlock::Text {
            text: text.into(),
            citations: None,
        })
    }

    /// The block's `type`.
    pub fn kind(&self) -> &str {
        match self {
            OutputBlock::Known(k) => k.kind(),
            OutputBlock::Other(v) => v.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }
}

/// The documented content blocks of a Messages answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum KnownBlock {
    Text {
        text: String,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        citations: Option<Value>,
    },
    /// Adaptive or manual thinking; its tokens are part of `output_tokens` and billed as output.
    Thinking {
        thinking: String,
        #[serde(default)]
        signature: String,
    },
    RedactedThinking {
        data: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    /// A server tool (web search, web fetch, code execution…) the API ran itself.
    ServerToolUse {
        id: String,
        name: String,
        input: Value,
    },
}

impl KnownBlock {
    pub fn kind(&self) -> &'static str {
        match self {
            KnownBlock::Text { .. } => "text",
            KnownBlock::Thinking { .. } => "thinking",
            KnownBlock::RedactedThinking { .. } => "redacted_thinking",
            KnownBlock::ToolUse { .. } => "tool_use",
            KnownBlock::ServerToolUse { .. } => "server_tool_use",
        }
    }
}

/// Why the model stopped. Unknown reasons are kept as sent rather than failing the decode.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum StopReason {
    EndTurn,
    MaxTokens,
    StopSequence,
    ToolUse,
    /// A server-tool turn was paused; the caller may continue it.
    PauseTurn,
    /// The model declined to answer (safety): the answer is not usable.
    Refusal,
    /// The context window filled up before `max_tokens`.
    ModelContextWindowExceeded,
    Other(String),
}

impl StopReason {
    pub fn as_str(&self) -> &str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::MaxTokens => "max_tokens",
            StopReason::StopSequence => "stop_sequence",
            StopReason::ToolUse => "tool_use",
            StopReason::PauseTurn => "pause_turn",
            StopReason::Refusal => "refusal",
            StopReason::ModelContextWindowExceeded => "model_context_window_exceeded",
            StopReason::Other(s) => s,
        }
    }
}

impl From<String> for StopReason {
    fn from(s: String) -> StopReason {
        match s.as_str() {
            "end_turn" => StopReason::EndTurn,
            "max_tokens" => StopReason::MaxTokens,
            "stop_sequence" => StopReason::StopSequence,
            "tool_use" => StopReason::ToolUse,
            "pause_turn" => StopReason::PauseTurn,
            "refusal" => StopReason::Refusal,
            "model_context_window_exceeded" => StopReason::ModelContextWindowExceeded,
            _ => StopReason::Other(s),
        }
    }
}

impl From<StopReason> for String {
    fn from(r: StopReason) -> String {
        r.as_str().to_owned()
    }
}

/// Token usage of one call; cache fields are absent on old responses, hence the defaults. Other
/// fields the API adds (`service_tier`, `inference_geo`, `server_tool_use`,
/// `output_tokens_details`…) are tolerated and ignored: `output_tokens` already counts thinking.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u32,
    pub output_tokens: u32,
    #[serde(default, deserialize_with = "zero_if_null")]
    pub cache_creation_input_tokens: u32,
    #[serde(default, deserialize_with = "zero_if_null")]
    pub cache_read_input_tokens: u32,
    /// The cache writes by lifetime (the API sends it beside the total).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation: Option<CacheCreation>,
}

/// A token count the API may send as `null`.
fn zero_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    Ok(Option::<u32>::deserialize(d)?.unwrap_or(0))
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

    /// The `usage` of an answer whose body did not decode as a Message, when it can be read, so
    /// what was paid is still recorded.
    pub fn from_raw_answer(raw: &str) -> Option<Usage> {
        let v: Value = serde_json::from_str(raw).ok()?;
        serde_json::from_value(v.get("usage")?.clone()).ok()
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
    /// 409 (platform.claude.com/docs/en/api/errors: "The request conflicts with the current
    /// state of a resource").
    ConflictError,
    RequestTooLarge,
    RateLimitError,
    ApiError,
    TimeoutError,
    OverloadedError,
    /// A type added after this client ("it is possible that the type values will grow over
    /// time", the errors page): the HTTP status still decides what happens.
    #[serde(other)]
    Other,
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
            409 => ErrorType::ConflictError,
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
            ErrorType::ConflictError => 409,
            ErrorType::RequestTooLarge => 413,
            ErrorType::RateLimitError => 429,
            ErrorType::ApiError => 500,
            ErrorType::TimeoutError => 504,
            ErrorType::OverloadedError => 529,
            ErrorType::Other => 500,
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
        .map(|(i, l)| {
            serde_json::from_str::<BatchResultLine>(l).or_else(|e| {
                let custom_id = serde_json::from_str::<Value>(l)
                    .ok()
                    .and_then(|v| v.get("custom_id")?.as_str().map(str::to_owned))
                    .ok_or_else(|| format!("result line {}: {e}", i + 1))?;
                Ok(BatchResultLine {
                    custom_id,
                    result: BatchResult::Unreadable {
                        reason: format!("its batch result could not be read: {e}"),
                    },
                })
            })
        })
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
    fn a_count_tokens_body_carries_only_the_input() {
        let mut r = MessagesRequest::new(
            "m",
            10,
            vec![InputMessage::user(Content::Text("hi".into()))],
        );
        r.stop_sequences = Some(vec!["END".into()]);
        r.metadata = Some(Metadata {
            user_id: Some("u".into()),
        });
        r.thinking = Some(Thinking::Adaptive { display: None });
        let v = serde_json::to_value(CountTokensRequest::from(&r)).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["messages", "model", "thinking"]);
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
