//! Validation of a Messages request body, like the real API and with its messages, reduced to
//! what the simulated model needs: the text, the documents, the token count and the cache prefix.

use base64::Engine;
use pipeline::anthropic::{ErrorType, Role};
use pipeline::tokens;
use serde_json::Value;

use crate::errors::SimError;
use crate::file_store::{Files, Resolved};
use crate::fingerprint::fnv;
use crate::markers::{self, Marker};
use crate::models::{self, SimModel};
use crate::pdf::{self, PdfInfo};
use crate::shape::{self, Asks};

/// Tokens a PDF page costs (text plus the page image), within the documented 1,500–3,000.
pub const TOKENS_PER_PAGE: u32 = 1_500;
/// The API reads at most 100 pages per request.
pub const MAX_PDF_PAGES: u32 = 100;
/// Lifetimes of a cache entry: `5m` (the default) and `1h`.
pub const CACHE_5M_MS: i64 = 5 * 60 * 1000;
pub const CACHE_1H_MS: i64 = 60 * 60 * 1000;

/// A request that passed validation.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The model's own id (an alias resolved), as answers name it.
    pub model: String,
    pub spec: &'static SimModel,
    /// Thinking, effort and format, as the request asks and the model allows.
    pub asks: Asks,
    /// `output_config.format.schema`, when given.
    pub schema: Option<Value>,
    /// 0 for count_tokens, which has none.
    pub max_tokens: u32,
    pub system: String,
    pub turns: Vec<(Role, String)>,
    pub documents: Vec<PdfInfo>,
    /// Document blocks whose content came inline as base64, and by `file_id` (Files API).
    pub base64_documents: u32,
    pub file_documents: u32,
    /// Every input token, cached or not.
    pub input_tokens: u32,
    /// The prefix up to the last `cache_control` breakpoint, when long enough to cache.
    pub cache: Option<CachePrefix>,
    pub markers: Vec<Marker>,
    /// Identifies "this prompt" for `[[sim:STATUSxK]]` counters.
    pub prompt_hash: u64,
    /// `speed: "fast"` on a model that offers fast mode.
    pub fast: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CachePrefix {
    pub key: u64,
    pub tokens: u32,
    /// The lifetime the breakpoint asked for (`ttl`), in ms.
    pub ttl_ms: i64,
}

/// One content block in prompt order, for token and cache accounting.
struct Segment {
    tokens: u32,
    fingerprint: u64,
    /// A `cache_control` breakpoint here, with its lifetime in ms.
    breakpoint: Option<i64>,
}

/// The documents of a request as they are read: from base64, or from the Files API's store
/// (`files`: `None` where the Files API is not available).
struct Docs<'a> {
    files: Option<&'a Files>,
    now: i64,
    found: Vec<PdfInfo>,
    base64: u32,
    by_file: u32,
}

/// Validates a `/v1/messages` (`max_tokens` required) or `/v1/messages/count_tokens` body sent
/// with API `version` at `now_ms`: the model (404 when unknown or retired), then every setting
/// against it ([`shape::check`]), then the content. `files` resolves `file` sources (`None`:
/// the Files API is off, and such a source is refused as the API refuses an unknown tag).
pub fn parse(
    v: &Value,
    require_max_tokens: bool,
    version: &str,
    now_ms: i64,
    files: Option<&Files>,
) -> Result<Parsed, SimError> {
    let obj = v
        .as_object()
        .ok_or_else(|| SimError::invalid("body: Input should be an object"))?;
    let asked = match obj.get("model") {
        None => return Err(SimError::invalid("model: Field required")),
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(_) => return Err(SimError::invalid("model: Input should be a valid string")),
    };
    let spec = models::available(&asked, now_ms)
        .ok_or_else(|| SimError::new(ErrorType::NotFoundError, format!("model: {asked}")))?;
    let model = spec.id.to_owned();
    let max_tokens = match obj.get("max_tokens") {
        None if require_max_tokens => return Err(SimError::invalid("max_tokens: Field required")),
        None => 0,
        Some(n) => n
            .as_u64()
            .filter(|n| *n >= 1)
            .ok_or_else(|| SimError::invalid("max_tokens: Input should be a positive integer"))?,
    };
    let fast = match obj.get("speed") {
        None | Some(Value::Null) => false,
        Some(Value::String(s)) if s == "standard" => false,
        Some(Value::String(s)) if s == "fast" && spec.fast => true,
        Some(Value::String(s)) if s == "fast" => {
            return Err(SimError::invalid(format!(
                "speed: fast mode is not supported for {model}"
            )))
        }
        Some(_) => {
            return Err(SimError::invalid(
                "speed: Input should be 'standard' or 'fast'",
            ))
        }
    };
    let limit = require_max_tokens.then(|| max_tokens.min(u32::MAX as u64) as u32);
    let permille = spec.tokens_permille;
    let mut segments = Vec::new();
    let mut documents = Docs {
        files,
        now: now_ms,
        found: Vec::new(),
        base64: 0,
        by_file: 0,
    };
    let system = match obj.get("system") {
        None | Some(Value::Null) => String::new(),
        Some(s) => content(s, "system", false, permille, &mut segments, &mut documents)?,
    };
    let messages = match obj.get("messages") {
        None => return Err(SimError::invalid("messages: Field required")),
        Some(Value::Array(a)) => a,
        Some(_) => return Err(SimError::invalid("messages: Input should be a valid list")),
    };
    if messages.is_empty() {
        return Err(SimError::invalid(
            "messages: at least one message is required",
        ));
    }
    let mut turns: Vec<(Role, String)> = Vec::with_capacity(messages.len());
    for (i, m) in messages.iter().enumerate() {
        let role = match m.get("role").and_then(Value::as_str) {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            Some(other) => {
                return Err(SimError::invalid(format!(
                    "messages.{i}.role: Input should be 'user' or 'assistant', got '{other}'"
                )))
            }
            None => {
                return Err(SimError::invalid(format!(
                    "messages.{i}.role: Field required"
                )))
            }
        };
        if i == 0 && role != Role::User {
            return Err(SimError::invalid(
                "messages: first message must use the \"user\" role",
            ));
        }
        if turns.last().is_some_and(|(prev, _)| *prev == role) {
            let name = if role == Role::User {
                "user"
            } else {
                "assistant"
            };
            return Err(SimError::invalid(format!(
                "messages: roles must alternate between \"user\" and \"assistant\", but found multiple \"{name}\" roles in a row"
            )));
        }
        let c = m
            .get("content")
            .ok_or_else(|| SimError::invalid(format!("messages.{i}.content: Field required")))?;
        let text = content(
            c,
            &format!("messages.{i}.content"),
            true,
            permille,
            &mut segments,
            &mut documents,
        )?;
        // Role markers and message framing cost a few tokens each.
        segments.push(Segment {
            tokens: 3,
            fingerprint: i as u64,
            breakpoint: None,
        });
        turns.push((role, text));
    }
    // The model's own rules, once the conversation itself is well-formed.
    let asks = shape::check(obj, spec, limit, version)?;
    let pages: u32 = documents.found.iter().map(|d| d.pages).sum();
    if pages > MAX_PDF_PAGES {
        return Err(SimError::invalid(format!(
            "A maximum of {MAX_PDF_PAGES} PDF pages may be provided."
        )));
    }
    let input_tokens = segments.iter().map(|s| s.tokens).sum();
    let cache = segments
        .iter()
        .rposition(|s| s.breakpoint.is_some())
        .and_then(|last| {
            let prefix = &segments[..=last];
            let tokens: u32 = prefix.iter().map(|s| s.tokens).sum();
            let mut key = fnv(model.as_bytes());
            for s in prefix {
                key = mix(key, s.fingerprint);
            }
            let ttl_ms = segments[last].breakpoint.unwrap_or(CACHE_5M_MS);
            (tokens >= spec.min_cache).then_some(CachePrefix {
                key,
                tokens,
                ttl_ms,
            })
        });
    let all_text: String = std::iter::once(system.as_str())
        .chain(turns.iter().map(|(_, t)| t.as_str()))
        .collect::<Vec<_>>()
        .join("\n");
    let schema = obj
        .get("output_config")
        .and_then(|c| c.get("format"))
        .and_then(|f| f.get("schema"))
        .cloned();
    Ok(Parsed {
        model,
        spec,
        asks,
        schema,
        max_tokens: max_tokens as u32,
        markers: markers::find(&all_text),
        prompt_hash: fnv(all_text.as_bytes()),
        system,
        turns,
        documents: documents.found,
        base64_documents: documents.base64,
        file_documents: documents.by_file,
        input_tokens,
        cache,
        fast,
    })
}

/// The text of a content value (a string or a list of blocks), adding its segments.
fn content(
    v: &Value,
    at: &str,
    is_message: bool,
    permille: u32,
    segments: &mut Vec<Segment>,
    documents: &mut Docs,
) -> Result<String, SimError> {
    // The model's tokenizer: the 5.x one counts ~30% more for the same text.
    let count = |t: &str| (tokens::estimate(t) as u64 * permille as u64).div_ceil(1_000) as u32;
    let empty = || SimError::invalid(format!("{at}: messages must have non-empty content"));
    match v {
        Value::String(s) => {
            if s.is_empty() && is_message {
                return Err(empty());
            }
            segments.push(Segment {
                tokens: count(s),
                fingerprint: fnv(s.as_bytes()),
                breakpoint: None,
            });
            Ok(s.clone())
        }
        Value::Array(blocks) => {
            if blocks.is_empty() && is_message {
                return Err(empty());
            }
            let mut text = String::new();
            for (j, b) in blocks.iter().enumerate() {
                let here = format!("{at}.{j}");
                let breakpoint = match b.get("cache_control") {
                    None | Some(Value::Null) => None,
                    Some(cc) if cc.get("type").and_then(Value::as_str) == Some("ephemeral") => {
                        match cc.get("ttl").and_then(Value::as_str) {
                            None | Some("5m") => Some(CACHE_5M_MS),
                            Some("1h") => Some(CACHE_1H_MS),
                            Some(_) => {
                                return Err(SimError::invalid(format!(
                                    "{here}.cache_control.ttl: Input should be '5m' or '1h'"
                                )))
                            }
                        }
                    }
                    Some(_) => {
                        return Err(SimError::invalid(format!(
                            "{here}.cache_control.type: Input should be 'ephemeral'"
                        )))
                    }
                };
                match b.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        let t = b.get("text").and_then(Value::as_str).unwrap_or_default();
                        if t.is_empty() {
                            return Err(SimError::invalid(format!(
                                "{here}.text: text content blocks must be non-empty"
                            )));
                        }
                        if !text.is_empty() {
                            text.push('\n');
                        }
                        text.push_str(t);
                        segments.push(Segment {
                            tokens: count(t),
                            fingerprint: fnv(t.as_bytes()),
                            breakpoint,
                        });
                    }
                    Some("document") if is_message => {
                        let (info, fingerprint) = document(b, &here, documents)?;
                        segments.push(Segment {
                            tokens: info.pages * TOKENS_PER_PAGE,
                            fingerprint,
                            breakpoint,
                        });
                        documents.found.push(info);
                    }
                    // The other documented input blocks (SDK `ContentBlockParam`): counted by
                    // their JSON, never read by the simulated model.
                    Some(
                        "image" | "search_result" | "thinking" | "redacted_thinking" | "tool_use"
                        | "tool_result" | "server_tool_use" | "web_search_tool_result"
                        | "web_fetch_tool_result" | "code_execution_tool_result"
                        | "bash_code_execution_tool_result"
                        | "text_editor_code_execution_tool_result" | "tool_search_tool_result"
                        | "container_upload",
                    ) if is_message => {
                        let raw = b.to_string();
                        segments.push(Segment {
                            tokens: count(&raw),
                            fingerprint: fnv(raw.as_bytes()),
                            breakpoint,
                        });
                    }
                    Some(other) => {
                        return Err(SimError::invalid(format!(
                            "{here}.type: Input tag '{other}' found using 'type' does not match any of the expected tags"
                        )))
                    }
                    None => return Err(SimError::invalid(format!("{here}.type: Field required"))),
                }
            }
            Ok(text)
        }
        _ => Err(SimError::invalid(format!(
            "{at}: Input should be a valid string or list of content blocks"
        ))),
    }
}

fn document(b: &Value, at: &str, docs: &mut Docs) -> Result<(PdfInfo, u64), SimError> {
    let source = b
        .get("source")
        .ok_or_else(|| SimError::invalid(format!("{at}.source: Field required")))?;
    match source.get("type").and_then(Value::as_str) {
        Some("base64") => docs.base64 += 1,
        // Where the Files API exists (the guide: the Claude API, Claude Platform on AWS,
        // Microsoft Foundry); elsewhere the tag is unknown, as it was before the API existed.
        Some("file") if docs.files.is_some() => {
            let id = source
                .get("file_id")
                .and_then(Value::as_str)
                .ok_or_else(|| SimError::invalid(format!("{at}.source.file_id: Field required")))?;
            docs.by_file += 1;
            let files = docs.files.unwrap_or_else(|| unreachable!());
            return match files.resolve(id, at, docs.now)? {
                Resolved::Pdf(info, fingerprint) => Ok((info, fingerprint)),
                Resolved::Text(text, fingerprint) => Ok((text_document(&text), fingerprint)),
            };
        }
        Some("file") => {
            return Err(SimError::invalid(format!(
                "{at}.source: Input tag 'file' found using 'type' does not match any of the \
                 expected tags: 'base64', 'content', 'text', 'url'"
            )))
        }
        Some("text") => {
            let data = source
                .get("data")
                .and_then(Value::as_str)
                .unwrap_or_default();
            return Ok((text_document(data), fnv(data.as_bytes())));
        }
        _ => {
            return Err(SimError::invalid(format!(
                "{at}.source.type: Input should be 'base64' or 'text'"
            )))
        }
    }
    if source.get("media_type").and_then(Value::as_str) != Some("application/pdf") {
        return Err(SimError::invalid(format!(
            "{at}.source.media_type: Input should be 'application/pdf'"
        )));
    }
    let data = source
        .get("data")
        .and_then(Value::as_str)
        .ok_or_else(|| SimError::invalid(format!("{at}.source.data: Field required")))?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|_| SimError::invalid(format!("{at}.source.data: invalid base64 data")))?;
    let info = pdf::inspect(&bytes).map_err(SimError::invalid)?;
    Ok((info, fnv(&bytes)))
}

/// A plain-text document, counted in pages of [`TOKENS_PER_PAGE`] (at least one).
fn text_document(text: &str) -> PdfInfo {
    let pages = (tokens::estimate(text) / TOKENS_PER_PAGE).max(1);
    PdfInfo { pages, title: None }
}

fn mix(h: u64, x: u64) -> u64 {
    (h ^ x).wrapping_mul(0x0100_0000_01b3).rotate_left(23)
}

#[cfg(test)]
mod tests;
