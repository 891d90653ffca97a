//! Prompt jobs: what `POST /jobs` accepts, the request it becomes, and the `Idempotency-Key`
//! rules (per user, 24 h, the same key with another body is a 422).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::anthropic::{
    CacheControl, Content, InputBlock, InputMessage, MessagesRequest, Metadata, OutputConfig, Role,
    Speed, Thinking, ToolChoice,
};
use crate::error::{json_object, ApiError};
use crate::models::{parse_model, DEFAULT_MAX_TOKENS};
use crate::status::{Lane, Mode};

/// Longest prompt (or all the text of `messages`), in Unicode scalar values.
pub const MAX_PROMPT_CHARS: usize = 200_000;
/// Longest system prompt.
pub const MAX_SYSTEM_CHARS: usize = 50_000;
/// Our own bounds where the API documents none: stop sequences, tools, `metadata.user_id`.
pub const MAX_STOP_SEQUENCES: usize = 32;
pub const MAX_TOOLS: usize = 128;
pub const MAX_USER_ID_CHARS: usize = 256;
/// A job may ask to expire after at most a week.
pub const MAX_EXPIRES_IN_S: u64 = 7 * 24 * 3600;

/// The rule of `expires_in_s`, the same for every kind of work (prompt jobs, feedback, each job
/// of an upload): a whole number of seconds from 1 to [`MAX_EXPIRES_IN_S`]; a job still queued
/// when it passes is `expired`, and costs nothing.
pub fn expires_in_s(n: Option<u64>) -> Result<Option<u64>, ApiError> {
    match n {
        None => Ok(None),
        Some(n) if (1..=MAX_EXPIRES_IN_S).contains(&n) => Ok(Some(n)),
        Some(_) => Err(ApiError::bad_request(
            "invalid_field",
            format!("expires_in_s must be from 1 to {MAX_EXPIRES_IN_S}"),
            Some("expires_in_s"),
        )),
    }
}
/// How long an idempotency key is remembered.
pub const IDEMPOTENCY_TTL_MS: i64 = 24 * 3600 * 1000;

/// A validated `POST /jobs` body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptInput {
    pub priority: Lane,
    pub mode: Mode,
    pub model: String,
    /// Retried once on this model if `model` refuses (`crate::refusal`).
    #[serde(default)]
    pub fallback_model: Option<String>,
    /// What the caller should know at submission (`crate::thinking::advice`).
    #[serde(default)]
    pub warnings: Vec<String>,
    pub expires_in_s: Option<u64>,
    /// Where to post the job's final view when it ends (checked by the Worker, which knows
    /// whether loopback receivers are allowed: `webhooks::check_url`).
    pub callback_url: Option<String>,
    /// Its tags, checked and sorted (`crate::tags`).
    #[serde(default)]
    pub tags: Vec<String>,
    /// When its answer is needed (epoch ms), from `deadline_s` or `deadline_at`: the Worker
    /// routes it (`crate::routing`) and `mode` is its answer.
    #[serde(default)]
    pub deadline_at: Option<i64>,
    /// The Messages request the job sends, checked against its model (kept in R2 as the
    /// claim-check).
    pub request: MessagesRequest,
}

impl PromptInput {
    /// The Messages request this job sends.
    pub fn request(&self) -> MessagesRequest {
        self.request.clone()
    }
}

fn field(name: &str, msg: impl Into<String>) -> ApiError {
    ApiError::bad_request("invalid_field", msg, Some(name))
}

/// A typed optional field: absent or null is `None`, a value that does not read is a 400
/// naming the field with serde's reason.
fn typed<T: serde::de::DeserializeOwned>(
    obj: &serde_json::Map<String, Value>,
    name: &str,
) -> Result<Option<T>, ApiError> {
    match obj.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(v.clone())
            .map(Some)
            .map_err(|e| field(name, format!("{name} is not valid: {e}"))),
    }
}

/// The fields of a `POST /jobs` body.
pub const FIELDS: &[&str] = &[
    "prompt",
    "messages",
    "system",
    "priority",
    "mode",
    "model",
    "fallback_model",
    "max_tokens",
    "expires_in_s",
    "callback_url",
    "stop_sequences",
    "metadata",
    "thinking",
    "output_config",
    "tools",
    "tool_choice",
    "tags",
    "deadline_s",
    "deadline_at",
    "speed",
];

/// Parses and validates a `POST /jobs` body at `now_ms`. Mode defaults follow the contract: sync
/// on the high lane, batch on the bulk lane. The model must be in the catalog and not retired,
/// and every Messages parameter is checked against it ([`crate::shape::check`]): a setting the
/// model refuses is a 400 naming the field, before anything is stored or paid.
pub fn parse_input(body: &[u8], now_ms: i64) -> Result<PromptInput, ApiError> {
    let obj = &json_object(body)?;
    crate::error::reject_unknown_fields(obj, FIELDS)?;
    let text = |name: &str| -> Result<Option<&String>, ApiError> {
        match obj.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(field(name, format!("{name} must be a string"))),
        }
    };
    let int = |name: &str| -> Result<Option<u64>, ApiError> {
        match obj.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| field(name, format!("{name} must be a whole number"))),
        }
    };
    let messages = match (text("prompt")?, obj.get("messages")) {
        (Some(_), Some(m)) if !m.is_null() => {
            return Err(field(
                "messages",
                "send either prompt or messages, not both",
            ))
        }
        (Some(prompt), _) => {
            if prompt.trim().is_empty() {
                return Err(field("prompt", "prompt must not be empty"));
            }
            vec![InputMessage::user(Content::Text(prompt.clone()))]
        }
        (None, _) => typed::<Vec<InputMessage>>(obj, "messages")?
            .ok_or_else(|| field("prompt", "prompt (or messages) is required"))?,
    };
    check_messages(&messages)?;
    let chars: usize = messages
        .iter()
        .map(|m| m.content.text().chars().count())
        .sum();
    if chars > MAX_PROMPT_CHARS {
        let name = if obj.contains_key("prompt") {
            "prompt"
        } else {
            "messages"
        };
        return Err(field(
            name,
            format!("{name} must be at most {MAX_PROMPT_CHARS} characters (got {chars})"),
        ));
    }
    let priority = match text("priority")?.map(String::as_str) {
        None | Some("high") => Lane::High,
        Some("bulk") => Lane::Bulk,
        Some(_) => return Err(field("priority", "priority must be \"high\" or \"bulk\"")),
    };
    let deadline_at = crate::routing::parse_deadline(obj, now_ms)?;
    let mode = match text("mode")?.map(String::as_str) {
        // Until the router answers: the dearer path, so the budget reserves the worst case.
        None if deadline_at.is_some() => Mode::Sync,
        None => match priority {
            Lane::High => Mode::Sync,
            Lane::Bulk => Mode::Batch,
        },
        Some("sync") => Mode::Sync,
        Some("batch") => Mode::Batch,
        Some(_) => return Err(field("mode", "mode must be \"sync\" or \"batch\"")),
    };
    let model = parse_model(obj.get("model"), now_ms)?;
    let fallback_model =
        crate::models::parse_fallback(obj.get("fallback_model"), model, now_ms)?.map(|m| m.id);
    let max_tokens = match int("max_tokens")? {
        None => (DEFAULT_MAX_TOKENS + model.thinking_room()).min(model.max_output),
        Some(n) if (1..=model.max_output as u64).contains(&n) => n as u32,
        Some(_) => {
            return Err(field(
                "max_tokens",
                format!(
                    "max_tokens must be from 1 to {} for {} (thinking and text together)",
                    model.max_output, model.id
                ),
            ))
        }
    };
    let system = match text("system")? {
        Some(s) if s.chars().count() > MAX_SYSTEM_CHARS => {
            return Err(field(
                "system",
                format!("system must be at most {MAX_SYSTEM_CHARS} characters"),
            ))
        }
        Some(s) if !s.trim().is_empty() => Some(s.clone()),
        _ => None,
    };
    let expires_in_s = expires_in_s(int("expires_in_s")?)?;
    let stop_sequences = typed::<Vec<String>>(obj, "stop_sequences")?;
    if let Some(stops) = &stop_sequences {
        if stops.len() > MAX_STOP_SEQUENCES || stops.iter().any(|s| s.trim().is_empty()) {
            return Err(field(
                "stop_sequences",
                format!("stop_sequences must be at most {MAX_STOP_SEQUENCES} non-blank strings"),
            ));
        }
    }
    let metadata = typed::<Metadata>(obj, "metadata")?;
    if metadata
        .as_ref()
        .and_then(|m| m.user_id.as_ref())
        .is_some_and(|u| u.chars().count() > MAX_USER_ID_CHARS)
    {
        return Err(field(
            "metadata",
            format!("metadata.user_id must be at most {MAX_USER_ID_CHARS} characters"),
        ));
    }
    let tools = typed::<Vec<serde_json::Map<String, Value>>>(obj, "tools")?;
    if let Some(tools) = &tools {
        if tools.len() > MAX_TOOLS
            || tools
                .iter()
                .any(|t| !t.get("name").is_some_and(Value::is_string))
        {
            return Err(field(
                "tools",
                format!("tools must be at most {MAX_TOOLS} objects, each with a name"),
            ));
        }
    }
    let tool_choice = typed::<ToolChoice>(obj, "tool_choice")?;
    if tool_choice.as_ref().is_some_and(ToolChoice::is_forced)
        && tools.as_ref().is_none_or(|t| t.is_empty())
    {
        return Err(field("tool_choice", "a forced tool_choice needs tools"));
    }
    let mut request = MessagesRequest::new(model.id, max_tokens, messages);
    // A job's system prompt is its fixed scaffolding: sent with a cache breakpoint, so jobs
    // that share a long one (≥ the model's minimum) read it from the cache.
    request.system = system.map(|text| {
        Content::Blocks(vec![InputBlock::text(
            text,
            Some(CacheControl::ephemeral()),
        )])
    });
    request.stop_sequences = stop_sequences;
    request.metadata = metadata;
    request.thinking = typed::<Thinking>(obj, "thinking")?;
    request.output_config = typed::<OutputConfig>(obj, "output_config")?;
    request.tools = tools.map(|t| t.into_iter().map(Value::Object).collect());
    request.tool_choice = tool_choice;
    request.speed = speed(text("speed")?, mode, deadline_at.is_some())?;
    crate::shape::check(&request, model)
        .map_err(|r| ApiError::bad_request("unsupported_by_model", r.message, Some(r.field)))?;
    Ok(PromptInput {
        priority,
        mode,
        model: model.id.to_owned(),
        fallback_model: fallback_model.map(str::to_owned),
        warnings: crate::thinking::advice(&request, model)
            .into_iter()
            .collect(),
        expires_in_s,
        callback_url: text("callback_url")?.cloned(),
        tags: crate::tags::from_json(obj.get("tags"))?,
        deadline_at,
        request,
    })
}

/// `speed`: `standard` (the default, sent as nothing) or `fast` (fast mode, on the models that
/// offer it: [`crate::shape::check`]). Fast mode is for a synchronous call: a batch job, or one
/// with a deadline the router may send to a batch, is refused naming the field.
fn speed(raw: Option<&String>, mode: Mode, deadline: bool) -> Result<Option<Speed>, ApiError> {
    match raw.map(String::as_str) {
        None | Some("standard") => Ok(None),
        Some("fast") if mode == Mode::Batch || deadline => Err(field(
            "speed",
            "fast mode is for synchronous calls: send it with mode \"sync\" and no deadline",
        )),
        Some("fast") => Ok(Some(Speed::Fast)),
        Some(_) => Err(field("speed", "speed must be \"standard\" or \"fast\"")),
    }
}

/// `messages`: at least one, starting with a user turn, roles alternating, no empty content.
fn check_messages(messages: &[InputMessage]) -> Result<(), ApiError> {
    let Some(first) = messages.first() else {
        return Err(field("messages", "messages must hold at least one message"));
    };
    if first.role != Role::User {
        return Err(field(
            "messages",
            "the first message must be a user message",
        ));
    }
    if messages.windows(2).any(|w| w[0].role == w[1].role) {
        return Err(field(
            "messages",
            "message roles must alternate between user and assistant",
        ));
    }
    let empty = |c: &Content| match c {
        Content::Text(t) => t.trim().is_empty(),
        Content::Blocks(b) => b.is_empty(),
    };
    if messages.iter().any(|m| empty(&m.content)) {
        return Err(field("messages", "every message must have content"));
    }
    // Files of the Files API are shared by the whole workspace, our users' PDFs among them:
    // "Never accept `file_id` values from end users or other untrusted sources"
    // (platform.claude.com/docs/en/build-with-claude/files). A document comes inline.
    if messages.iter().any(|m| m.content.reads_a_file()) {
        return Err(field(
            "messages",
            "file_id sources are not accepted: send the document inline (base64), or upload \
             PDFs with POST /batches",
        ));
    }
    Ok(())
}

/// An `Idempotency-Key`: at most 255 printable ASCII characters.
pub fn idempotency_key(raw: Option<&str>) -> Result<Option<String>, ApiError> {
    match raw {
        None => Ok(None),
        Some(k)
            if !k.is_empty() && k.len() <= 255 && k.bytes().all(|b| (0x20..0x7f).contains(&b)) =>
        {
            Ok(Some(k.to_owned()))
        }
        Some(_) => Err(ApiError::bad_request(
            "invalid_idempotency_key",
            "Idempotency-Key must be 1 to 255 printable ASCII characters",
            Some("Idempotency-Key"),
        )),
    }
}

/// The fingerprint of a request body, to tell "the same request again" from "another request
/// with a reused key". Byte-identical bodies only.
pub fn body_hash(body: &[u8]) -> String {
    Sha256::digest(body)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// [`body_hash`] of a body read in chunks (a streamed upload): the same hex digest as the
/// whole body's.
#[derive(Default)]
pub struct BodyHasher(Sha256);

impl BodyHasher {
    pub fn update(&mut self, chunk: &[u8]) {
        self.0.update(chunk);
    }

    pub fn finish(self) -> String {
        self.0
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// What a stored key means for a new request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Idempotency {
    /// No live record: create the job.
    Fresh,
    /// The same body again: answer the original acknowledgement for this job.
    Replay { job_id: String },
    /// Another body under the same key: 422.
    Conflict,
}

/// The stored record of a user's key, with what became of its job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredKey<'a> {
    pub body_hash: &'a str,
    pub job_id: &'a str,
    pub created_at: i64,
    /// The job's message was never queued (`enqueue_failed`): the job will never run.
    pub never_queued: bool,
}

impl StoredKey<'_> {
    /// Whether the record still holds its key at `now`: younger than the TTL, and its job
    /// real. An expired record, or one whose job could not be queued, gives the key up — the
    /// caller's retry with the same key makes a real job.
    pub fn holds(&self, now: i64) -> bool {
        now - self.created_at < IDEMPOTENCY_TTL_MS && !self.never_queued
    }
}

/// Decides from the stored record for this user and key, if any.
pub fn idempotency(stored: Option<StoredKey<'_>>, body_hash: &str, now: i64) -> Idempotency {
    match stored {
        Some(k) if !k.holds(now) => Idempotency::Fresh,
        Some(k) if k.body_hash == body_hash => Idempotency::Replay {
            job_id: k.job_id.to_owned(),
        },
        Some(_) => Idempotency::Conflict,
        None => Idempotency::Fresh,
    }
}

#[cfg(test)]
mod tests;
