//! What the Worker sends: the Messages request and its parameters, and `count_tokens`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    /// Fast mode (`"fast"`), on the models whose pages offer it (`crate::models::FastMode`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub speed: Option<Speed>,
}

impl MessagesRequest {
    /// Every cache breakpoint of the request with the 1-hour lifetime: what a request sent in
    /// a Message Batch uses. The batch-processing guide: "Since batches can take longer than 5
    /// minutes to process, consider using the 1-hour cache duration with prompt caching for
    /// better cache hit rates when processing batches with shared context"
    /// (<https://docs.anthropic.com/en/docs/build-with-claude/batch-processing>). A 1-hour write
    /// costs 2× the input price instead of 1.25×, reads still 0.1× (the pricing page). All
    /// breakpoints get it, so that no 5-minute one comes before a 1-hour one (the prompt-caching
    /// guide requires the longer lifetimes first).
    pub fn with_one_hour_cache(mut self) -> MessagesRequest {
        fn block(b: &mut InputBlock) {
            match b {
                InputBlock::Text { cache_control, .. }
                | InputBlock::Document { cache_control, .. } => {
                    if let Some(c) = cache_control {
                        c.ttl = Some("1h".into());
                    }
                }
                InputBlock::Other(v) => {
                    if let Some(c) = v.get_mut("cache_control").and_then(Value::as_object_mut) {
                        c.insert("ttl".into(), Value::String("1h".into()));
                    }
                }
            }
        }
        fn content(c: &mut Content) {
            if let Content::Blocks(blocks) = c {
                blocks.iter_mut().for_each(block);
            }
        }
        if let Some(system) = self.system.as_mut() {
            content(system);
        }
        for m in &mut self.messages {
            content(&mut m.content);
        }
        for t in self.tools.iter_mut().flatten() {
            if let Some(c) = t.get_mut("cache_control").and_then(Value::as_object_mut) {
                c.insert("ttl".into(), Value::String("1h".into()));
            }
        }
        self
    }

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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Metadata {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub user_id: Option<String>,
}

/// `thinking`: `{"type":"adaptive"}` (the 5.x default), `{"type":"enabled","budget_tokens":N}`
/// (the older manual budget) or `{"type":"disabled"}`; `display` is `summarized` or `omitted`
/// (SDK `ThinkingConfigParam`, anthropic-sdk-typescript `src/resources/messages/messages.ts`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ThinkingDisplay {
    Summarized,
    Omitted,
}

/// `output_config`: how hard the model works (`effort`) and the shape of its answer (`format`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct OutputConfig {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub effort: Option<Effort>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub format: Option<OutputFormat>,
}

/// The `speed` of a request and of its answer's `usage.speed`
/// (platform.claude.com/docs/en/build-with-claude/fast-mode, read 2026-12-06: "Fast mode is
/// available on Claude Fable 5.2, Claude Mythos 5.2, and Claude Opus 5.5"). A value this client
/// does not know reads as [`Speed::Other`] and is priced as standard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Speed {
    Standard,
    Fast,
    #[serde(other)]
    Other,
}

impl Speed {
    pub fn as_str(self) -> &'static str {
        match self {
            Speed::Standard => "standard",
            Speed::Fast => "fast",
            Speed::Other => "other",
        }
    }
}

/// Effort levels, least to most (platform.claude.com/docs/en/build-with-claude/effort).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum OutputFormat {
    JsonSchema { schema: Value },
}

/// `tool_choice`: `auto` and `none` leave the choice to the model; `any` and `tool` force a
/// tool call (refused by the 5.5 models).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "MessageRole"))]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// Message content: a plain string or a list of blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum Content {
    Text(String),
    Blocks(Vec<InputBlock>),
}

impl Content {
    /// Whether a block of it reads a file of the Files API ([`InputBlock::reads_a_file`]).
    pub fn reads_a_file(&self) -> bool {
        match self {
            Content::Text(_) => false,
            Content::Blocks(b) => b.iter().any(InputBlock::reads_a_file),
        }
    }

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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum InputBlock {
    Text {
        #[serde(rename = "type")]
        kind: TextTag,
        text: String,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        cache_control: Option<CacheControl>,
        /// Kept as a caller sent it, so that what the API version refuses (citations in a user
        /// message) is refused with its field named, not dropped.
        #[serde(skip_serializing_if = "Option::is_none", default)]
        citations: Option<Value>,
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum TextTag {
    #[default]
    Text,
}

/// The `"type":"document"` tag.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
            citations: None,
        }
    }

    /// A document block (the product's, or one a caller wrote).
    pub fn is_document(&self) -> bool {
        match self {
            InputBlock::Document { .. } => true,
            InputBlock::Other(v) => v["type"] == "document",
            InputBlock::Text { .. } => false,
        }
    }

    /// A text block carrying a non-empty `citations` array.
    pub fn has_citations(&self) -> bool {
        match self {
            InputBlock::Text { citations, .. } => citations
                .as_ref()
                .and_then(Value::as_array)
                .is_some_and(|c| !c.is_empty()),
            _ => false,
        }
    }

    /// A base64 PDF document block.
    pub fn pdf(data: String, cache_control: Option<CacheControl>) -> InputBlock {
        InputBlock::Document {
            kind: DocumentTag::Document,
            source: DocumentSource::Base64 {
                media_type: "application/pdf".into(),
                data,
            },
            cache_control,
        }
    }

    /// A document block reading an uploaded file: `{"type": "document", "source": {"type":
    /// "file", "file_id": …}}` (platform.claude.com/docs/en/build-with-claude/files, "Document
    /// blocks").
    pub fn file(file_id: String, cache_control: Option<CacheControl>) -> InputBlock {
        InputBlock::Document {
            kind: DocumentTag::Document,
            source: DocumentSource::File { file_id },
            cache_control,
        }
    }

    /// Whether the block reads a file of the Files API (a document or image `file` source, a
    /// `container_upload`): what a caller's prompt may not carry, since files are shared by
    /// the whole workspace ("Never accept `file_id` values from end users", the Files guide).
    pub fn reads_a_file(&self) -> bool {
        match self {
            InputBlock::Document { source, .. } => matches!(source, DocumentSource::File { .. }),
            InputBlock::Text { .. } => false,
            InputBlock::Other(v) => {
                v.get("type").and_then(Value::as_str) == Some("container_upload")
                    || v.pointer("/source/type").and_then(Value::as_str) == Some("file")
                    || v.get("file_id").is_some()
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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

/// Where a document block's content comes from: inline base64, or a file uploaded to the
/// Files API, or plain text. (Other sources — `url`, `content` — are carried as
/// [`InputBlock::Other`].)
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DocumentSource {
    Base64 {
        media_type: String,
        data: String,
    },
    /// Plain text (`media_type` `text/plain`), read as text.
    Text {
        media_type: String,
        data: String,
    },
    File {
        file_id: String,
    },
}

#[cfg(test)]
mod one_hour_cache_tests {
    use super::*;

    #[test]
    fn every_breakpoint_of_a_batch_request_lives_an_hour() {
        let mut req = MessagesRequest::new(
            "claude-sonnet-5-5",
            100,
            vec![InputMessage::user(Content::Blocks(vec![
                InputBlock::text("long shared context", Some(CacheControl::ephemeral())),
                InputBlock::text("the question", None),
                InputBlock::Other(serde_json::json!({
                    "type": "image", "source": {"type": "url", "url": "https://example.com/a.png"},
                    "cache_control": {"type": "ephemeral"}
                })),
            ]))],
        );
        req.system = Some(Content::Blocks(vec![InputBlock::text(
            "system",
            Some(CacheControl::ephemeral()),
        )]));
        req.tools = Some(vec![serde_json::json!({
            "name": "lookup", "input_schema": {"type": "object"},
            "cache_control": {"type": "ephemeral"}
        })]);
        let v = serde_json::to_value(req.with_one_hour_cache()).unwrap();
        assert_eq!(v["system"][0]["cache_control"]["ttl"], "1h");
        assert_eq!(v["messages"][0]["content"][0]["cache_control"]["ttl"], "1h");
        // A block without a breakpoint gets none.
        assert!(v["messages"][0]["content"][1]
            .get("cache_control")
            .is_none());
        assert_eq!(v["messages"][0]["content"][2]["cache_control"]["ttl"], "1h");
        assert_eq!(v["tools"][0]["cache_control"]["ttl"], "1h");
    }
}
