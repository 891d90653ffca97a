//! What a model answers: the Message, its content blocks (known, and any other kind read
//! without breaking), stop reasons and usage.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::request::*;

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
    /// What the API says beside `stop_reason` (a refusal's policy area): kept in the job's
    /// error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_details: Option<StopDetails>,
    pub usage: Usage,
}

/// `stop_details` of an answer (platform.claude.com/docs/en/build-with-claude/refusals-and-fallback,
/// read 2026-12-06: on a refusal "Its stop_details.category names the policy area"; the SDKs'
/// `RefusalStopDetails` has `type`, `category` and `explanation`, either of the last two null).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StopDetails {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub category: Option<String>,
    #[serde(default)]
    pub explanation: Option<String>,
}

impl StopDetails {
    /// ` (category "cyber": explanation)`, or nothing when the API said neither.
    pub fn describe(&self) -> String {
        match (&self.category, &self.explanation) {
            (None, None) => String::new(),
            (Some(c), None) => format!(", category \"{c}\""),
            (None, Some(e)) => format!(": {e}"),
            (Some(c), Some(e)) => format!(", category \"{c}\": {e}"),
        }
    }
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
    /// `fast` when fast mode answered (priced at the model's fast rates), else `standard` or
    /// absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<Speed>,
}

impl Usage {
    /// Answered in fast mode.
    pub fn is_fast(&self) -> bool {
        self.speed == Some(Speed::Fast)
    }
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
        let speed = self
            .speed
            .map(|s| ("speed".to_owned(), s.as_str().to_owned()));
        [
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
        .into_iter()
        .chain(speed)
        .collect()
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
            speed: get("speed").and_then(|s| serde_json::from_value(Value::String(s)).ok()),
        })
    }
}
