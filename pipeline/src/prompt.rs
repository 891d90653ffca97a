//! Prompt jobs: what `POST /jobs` accepts, the request it becomes, and the `Idempotency-Key`
//! rules (per user, 24 h, the same key with another body is a 422).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::anthropic::{CacheControl, Content, InputBlock, InputMessage, MessagesRequest, Role};
use crate::error::{json_object, ApiError};
use crate::pricing::{price_of, DEFAULT_MODEL};
use crate::status::{Lane, Mode};

/// Longest prompt, in Unicode scalar values.
pub const MAX_PROMPT_CHARS: usize = 200_000;
/// Longest system prompt.
pub const MAX_SYSTEM_CHARS: usize = 50_000;
pub const DEFAULT_MAX_TOKENS: u32 = 1024;
pub const MAX_MAX_TOKENS: u32 = 64_000;
/// A job may ask to expire after at most a week.
pub const MAX_EXPIRES_IN_S: u64 = 7 * 24 * 3600;
/// How long an idempotency key is remembered.
pub const IDEMPOTENCY_TTL_MS: i64 = 24 * 3600 * 1000;

/// A validated `POST /jobs` body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptInput {
    pub prompt: String,
    pub priority: Lane,
    pub mode: Mode,
    pub model: String,
    pub max_tokens: u32,
    pub system: Option<String>,
    pub expires_in_s: Option<u64>,
}

impl PromptInput {
    /// The Messages request this job sends (kept in R2 as the claim-check).
    pub fn request(&self) -> MessagesRequest {
        MessagesRequest {
            model: self.model.clone(),
            max_tokens: self.max_tokens,
            // A job's system prompt is its fixed scaffolding: sent with a cache breakpoint, so
            // jobs that share a long one (≥ the model's minimum) read it from the cache.
            system: self.system.clone().map(|text| {
                Content::Blocks(vec![InputBlock::Text {
                    text,
                    cache_control: Some(CacheControl::ephemeral()),
                }])
            }),
            messages: vec![InputMessage {
                role: Role::User,
                content: Content::Text(self.prompt.clone()),
            }],
            temperature: None,
        }
    }
}

fn field(name: &str, msg: impl Into<String>) -> ApiError {
    ApiError::bad_request("invalid_field", msg, Some(name))
}

/// Parses and validates a `POST /jobs` body. Mode defaults follow the contract: sync on the high
/// lane, batch on the bulk lane.
pub fn parse_input(body: &[u8]) -> Result<PromptInput, ApiError> {
    let obj = &json_object(body)?;
    crate::error::reject_unknown_fields(
        obj,
        &[
            "prompt",
            "priority",
            "mode",
            "model",
            "max_tokens",
            "system",
            "expires_in_s",
        ],
    )?;
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
    let prompt = text("prompt")?.ok_or_else(|| field("prompt", "prompt is required"))?;
    let chars = prompt.chars().count();
    if prompt.trim().is_empty() {
        return Err(field("prompt", "prompt must not be empty"));
    }
    if chars > MAX_PROMPT_CHARS {
        return Err(field(
            "prompt",
            format!("prompt must be at most {MAX_PROMPT_CHARS} characters (got {chars})"),
        ));
    }
    let priority = match text("priority")?.map(String::as_str) {
        None | Some("high") => Lane::High,
        Some("bulk") => Lane::Bulk,
        Some(_) => return Err(field("priority", "priority must be \"high\" or \"bulk\"")),
    };
    let mode = match text("mode")?.map(String::as_str) {
        None => match priority {
            Lane::High => Mode::Sync,
            Lane::Bulk => Mode::Batch,
        },
        Some("sync") => Mode::Sync,
        Some("batch") => Mode::Batch,
        Some(_) => return Err(field("mode", "mode must be \"sync\" or \"batch\"")),
    };
    let model = match text("model")? {
        None => DEFAULT_MODEL.to_string(),
        Some(m) if price_of(m).is_some() && m.len() <= 100 => m.clone(),
        Some(m) => return Err(field("model", format!("unknown model {m:?}"))),
    };
    let max_tokens = match int("max_tokens")? {
        None => DEFAULT_MAX_TOKENS,
        Some(n) if (1..=MAX_MAX_TOKENS as u64).contains(&n) => n as u32,
        Some(_) => {
            return Err(field(
                "max_tokens",
                format!("max_tokens must be from 1 to {MAX_MAX_TOKENS}"),
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
    let expires_in_s = match int("expires_in_s")? {
        None => None,
        Some(n) if (1..=MAX_EXPIRES_IN_S).contains(&n) => Some(n),
        Some(_) => {
            return Err(field(
                "expires_in_s",
                format!("expires_in_s must be from 1 to {MAX_EXPIRES_IN_S}"),
            ))
        }
    };
    Ok(PromptInput {
        prompt: prompt.clone(),
        priority,
        mode,
        model,
        max_tokens,
        system,
        expires_in_s,
    })
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

/// Decides from the stored `(body_hash, job_id, created_at)` for this user and key, if any.
pub fn idempotency(stored: Option<(&str, &str, i64)>, body_hash: &str, now: i64) -> Idempotency {
    match stored {
        Some((_, _, at)) if now - at >= IDEMPOTENCY_TTL_MS => Idempotency::Fresh,
        Some((hash, job, _)) if hash == body_hash => Idempotency::Replay {
            job_id: job.to_owned(),
        },
        Some(_) => Idempotency::Conflict,
        None => Idempotency::Fresh,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(json: &str) -> Result<PromptInput, ApiError> {
        parse_input(json.as_bytes())
    }

    #[test]
    fn defaults_follow_the_contract() {
        let high = input(r#"{"prompt":"hi"}"#).unwrap();
        assert_eq!((high.priority, high.mode), (Lane::High, Mode::Sync));
        assert_eq!(high.model, DEFAULT_MODEL);
        assert_eq!(high.max_tokens, DEFAULT_MAX_TOKENS);
        let bulk = input(r#"{"prompt":"hi","priority":"bulk"}"#).unwrap();
        assert_eq!((bulk.priority, bulk.mode), (Lane::Bulk, Mode::Batch));
        let forced = input(r#"{"prompt":"hi","priority":"bulk","mode":"sync"}"#).unwrap();
        assert_eq!(forced.mode, Mode::Sync);
    }

    #[test]
    fn the_prompt_is_required_and_bounded_in_characters() {
        assert_eq!(
            input("{}").unwrap_err().body.field.as_deref(),
            Some("prompt")
        );
        assert!(
            input(&serde_json::json!({"prompt": "é".repeat(MAX_PROMPT_CHARS)}).to_string()).is_ok()
        );
        let over = serde_json::json!({"prompt": "a".repeat(MAX_PROMPT_CHARS + 1)}).to_string();
        assert_eq!(
            input(&over).unwrap_err().body.field.as_deref(),
            Some("prompt")
        );
    }

    #[test]
    fn other_fields_are_validated_naming_the_field() {
        for (body, f) in [
            (r#"{"prompt":"x","priority":"urgent"}"#, "priority"),
            (r#"{"prompt":"x","mode":"later"}"#, "mode"),
            (r#"{"prompt":"x","model":"gpt-4"}"#, "model"),
            (r#"{"prompt":"x","max_tokens":0}"#, "max_tokens"),
            (r#"{"prompt":"x","max_tokens":"10"}"#, "max_tokens"),
            (r#"{"prompt":"x","expires_in_s":-5}"#, "expires_in_s"),
            (r#"{"prompt":"x","system":5}"#, "system"),
            (r#"{"prompt":7}"#, "prompt"),
        ] {
            assert_eq!(
                input(body).unwrap_err().body.field.as_deref(),
                Some(f),
                "{body}"
            );
        }
    }

    #[test]
    fn idempotency_keys_are_bounded_printable_ascii() {
        assert_eq!(
            idempotency_key(Some("order-42")).unwrap().as_deref(),
            Some("order-42")
        );
        assert!(idempotency_key(Some(&"k".repeat(256))).is_err());
        assert!(idempotency_key(Some("tab\there")).is_err());
        assert!(idempotency_key(Some("")).is_err());
        assert_eq!(idempotency_key(None).unwrap(), None);
    }

    #[test]
    fn a_reused_key_replays_the_same_body_and_refuses_another() {
        let h = body_hash(b"{\"prompt\":\"a\"}");
        let stored = Some((h.as_str(), "job-1", 0));
        assert_eq!(
            idempotency(stored, &h, 1000),
            Idempotency::Replay {
                job_id: "job-1".into()
            }
        );
        assert_eq!(
            idempotency(stored, &body_hash(b"{\"prompt\":\"b\"}"), 1000),
            Idempotency::Conflict
        );
        assert_eq!(
            idempotency(stored, &h, IDEMPOTENCY_TTL_MS),
            Idempotency::Fresh
        );
        assert_eq!(idempotency(None, &h, 0), Idempotency::Fresh);
    }
}
