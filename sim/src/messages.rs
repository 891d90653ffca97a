//! `POST /v1/messages`: checks headers and the body like the real API, takes the rate-limit
//! budget, and answers a Message object with usage, `request-id` and `anthropic-ratelimit-*`.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use pipeline::anthropic::{header, ErrorType, Message, OutputBlock, Role};
use serde_json::Value;

use crate::errors::{new_id, SimError};
use crate::{now_ms, output, Sim};

/// The Messages API accepts requests of up to 32 MB.
pub const MAX_REQUEST_BYTES: usize = 32 * 1024 * 1024;

/// A request that passed validation, reduced to what the output generator needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub model: String,
    pub max_tokens: u32,
    pub system: String,
    /// (role, text) of every message; document blocks contribute their size in `document_bytes`.
    pub turns: Vec<(Role, String)>,
    pub document_bytes: usize,
}

/// The handler.
pub async fn create(
    State(sim): State<Sim>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    match handle(&sim, &headers, body) {
        Ok(resp) => resp,
        Err(e) => {
            sim.lock().stats.record_error(e.kind.status());
            e.into_response()
        }
    }
}

fn handle(
    sim: &Sim,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, SimError> {
    check_headers(sim, headers)?;
    let body = body.map_err(|_| {
        SimError::new(
            ErrorType::RequestTooLarge,
            "Request exceeds the maximum allowed number of bytes.",
        )
    })?;
    if body.len() > MAX_REQUEST_BYTES {
        return Err(SimError::new(
            ErrorType::RequestTooLarge,
            "Request exceeds the maximum allowed number of bytes.",
        ));
    }
    let value: Value = serde_json::from_slice(&body)
        .map_err(|e| SimError::invalid(format!("There was an error parsing the body: {e}")))?;
    let req = validate(&value)?;
    let answer = output::answer(&req);

    let now = now_ms();
    let mut inner = sim.lock();
    let rl = &mut inner.limits;
    if let Err(wait_ms) = rl.try_take(answer.usage.input_tokens, answer.usage.output_tokens, now) {
        let mut e = SimError::new(
            ErrorType::RateLimitError,
            "This request would exceed your organization's rate limit. Please try again later.",
        );
        e.retry_after_s = Some((wait_ms as u64).div_ceil(1000).max(1));
        e.headers = rl.headers(now);
        return Err(e);
    }
    let rl_headers = rl.headers(now);
    inner.stats.record_message(&answer.usage);
    drop(inner);

    let message = Message {
        id: new_id("msg"),
        kind: "message".into(),
        role: Role::Assistant,
        content: vec![OutputBlock::Text { text: answer.text }],
        model: req.model,
        stop_reason: Some(answer.stop_reason),
        stop_sequence: None,
        usage: answer.usage,
    };
    let mut resp = axum::Json(message).into_response();
    let h = resp.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&new_id("req")) {
        h.insert(header::REQUEST_ID, v);
    }
    for (k, v) in rl_headers {
        if let (Ok(k), Ok(v)) = (
            axum::http::HeaderName::from_bytes(k.as_bytes()),
            HeaderValue::from_str(&v),
        ) {
            h.insert(k, v);
        }
    }
    Ok(resp)
}

fn check_headers(sim: &Sim, headers: &HeaderMap) -> Result<(), SimError> {
    let key = headers
        .get(header::API_KEY)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if key.is_empty() {
        return Err(SimError::new(
            ErrorType::AuthenticationError,
            "x-api-key header is required",
        ));
    }
    if let Some(expected) = &sim.config.api_key {
        if key != expected {
            return Err(SimError::new(
                ErrorType::AuthenticationError,
                "invalid x-api-key",
            ));
        }
    }
    if headers.get(header::VERSION).is_none() {
        return Err(SimError::invalid("anthropic-version: header is required"));
    }
    Ok(())
}

/// Validates a request body the way the Messages API does, with its messages.
pub fn validate(v: &Value) -> Result<Parsed, SimError> {
    let obj = v
        .as_object()
        .ok_or_else(|| SimError::invalid("body: Input should be an object"))?;
    let model = match obj.get("model") {
        None => return Err(SimError::invalid("model: Field required")),
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(_) => return Err(SimError::invalid("model: Input should be a valid string")),
    };
    if !model.starts_with("claude-") {
        return Err(SimError::new(
            ErrorType::NotFoundError,
            format!("model: {model}"),
        ));
    }
    let max_tokens = match obj.get("max_tokens") {
        None => return Err(SimError::invalid("max_tokens: Field required")),
        Some(n) => n
            .as_u64()
            .filter(|n| *n >= 1)
            .ok_or_else(|| SimError::invalid("max_tokens: Input should be a positive integer"))?,
    };
    if max_tokens > 128_000 {
        return Err(SimError::invalid(format!(
            "max_tokens: {max_tokens} > 128000, which is the maximum allowed number of output tokens for {model}"
        )));
    }
    let system = match obj.get("system") {
        None | Some(Value::Null) => String::new(),
        Some(s) => content_text(s, "system", false)?.0,
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
    let mut turns = Vec::with_capacity(messages.len());
    let mut document_bytes = 0;
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
        if let Some((prev, _)) = turns.last() {
            if *prev == role {
                let name = if role == Role::User {
                    "user"
                } else {
                    "assistant"
                };
                return Err(SimError::invalid(format!(
                    "messages: roles must alternate between \"user\" and \"assistant\", but found multiple \"{name}\" roles in a row"
                )));
            }
        }
        let content = m
            .get("content")
            .ok_or_else(|| SimError::invalid(format!("messages.{i}.content: Field required")))?;
        let (text, docs) = content_text(content, &format!("messages.{i}.content"), true)?;
        document_bytes += docs;
        turns.push((role, text));
    }
    Ok(Parsed {
        model,
        max_tokens: max_tokens as u32,
        system,
        turns,
        document_bytes,
    })
}

/// The text of a content value (string or blocks) and the decoded size of its documents.
fn content_text(v: &Value, at: &str, documents: bool) -> Result<(String, usize), SimError> {
    match v {
        Value::String(s) if s.is_empty() && documents => Err(SimError::invalid(format!(
            "{at}: messages must have non-empty content"
        ))),
        Value::String(s) => Ok((s.clone(), 0)),
        Value::Array(blocks) => {
            if blocks.is_empty() && documents {
                return Err(SimError::invalid(format!(
                    "{at}: messages must have non-empty content"
                )));
            }
            let mut text = String::new();
            let mut doc_bytes = 0;
            for (j, b) in blocks.iter().enumerate() {
                match b.get("type").and_then(Value::as_str) {
                    Some("text") => match b.get("text").and_then(Value::as_str) {
                        Some(t) if !t.is_empty() => {
                            if !text.is_empty() {
                                text.push('\n');
                            }
                            text.push_str(t);
                        }
                        _ => {
                            return Err(SimError::invalid(format!(
                                "{at}.{j}.text: text content blocks must be non-empty"
                            )))
                        }
                    },
                    Some("document") if documents => {
                        doc_bytes += document_size(b, &format!("{at}.{j}"))?;
                    }
                    Some(other) => {
                        return Err(SimError::invalid(format!(
                            "{at}.{j}.type: Input tag '{other}' found using 'type' does not match any of the expected tags"
                        )))
                    }
                    None => {
                        return Err(SimError::invalid(format!("{at}.{j}.type: Field required")))
                    }
                }
            }
            Ok((text, doc_bytes))
        }
        _ => Err(SimError::invalid(format!(
            "{at}: Input should be a valid string or list of content blocks"
        ))),
    }
}

fn document_size(b: &Value, at: &str) -> Result<usize, SimError> {
    let source = b
        .get("source")
        .ok_or_else(|| SimError::invalid(format!("{at}.source: Field required")))?;
    match source.get("type").and_then(Value::as_str) {
        Some("base64") => {}
        Some("text") => {
            return Ok(source
                .get("data")
                .and_then(Value::as_str)
                .map_or(0, str::len))
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
    Ok(data.len() / 4 * 3)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(v: Value) -> (u16, String) {
        let e = validate(&v).unwrap_err();
        (e.kind.status(), e.message)
    }

    #[test]
    fn a_minimal_request_is_valid() {
        let p = validate(&json!({"model": "claude-sonnet-4-5", "max_tokens": 10,
            "messages": [{"role": "user", "content": "hi"}]}))
        .unwrap();
        assert_eq!(p.turns, vec![(Role::User, "hi".to_string())]);
    }

    #[test]
    fn missing_fields_are_named_like_the_real_api() {
        assert_eq!(
            err(json!({"model": "claude-x", "messages": []})),
            (400, "max_tokens: Field required".into())
        );
        assert_eq!(
            err(json!({"max_tokens": 1, "messages": []})).1,
            "model: Field required"
        );
        assert_eq!(
            err(json!({"model": "claude-x", "max_tokens": 1, "messages": []})).1,
            "messages: at least one message is required"
        );
    }

    #[test]
    fn roles_must_start_with_user_and_alternate() {
        let first = err(json!({"model": "claude-x", "max_tokens": 1,
            "messages": [{"role": "assistant", "content": "a"}]}));
        assert!(first.1.contains("first message"));
        let twice = err(json!({"model": "claude-x", "max_tokens": 1,
            "messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]}));
        assert!(twice.1.contains("alternate"));
    }

    #[test]
    fn an_unknown_model_is_not_found() {
        assert_eq!(
            err(json!({"model": "gpt-4", "max_tokens": 1,
            "messages": [{"role": "user", "content": "a"}]}))
            .0,
            404
        );
    }

    #[test]
    fn documents_must_be_base64_pdfs() {
        let ok = validate(&json!({"model": "claude-x", "max_tokens": 1, "messages": [{"role": "user",
            "content": [{"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0x"}},
                        {"type": "text", "text": "summarize"}]}]}))
        .unwrap();
        assert_eq!(ok.document_bytes, 6);
        let bad = err(
            json!({"model": "claude-x", "max_tokens": 1, "messages": [{"role": "user",
            "content": [{"type": "document", "source": {"type": "base64", "media_type": "image/png", "data": "x"}}]}]}),
        );
        assert_eq!(bad.0, 400);
    }

    #[test]
    fn empty_content_is_rejected() {
        let e = err(json!({"model": "claude-x", "max_tokens": 1,
            "messages": [{"role": "user", "content": ""}]}));
        assert!(e.1.contains("non-empty"));
    }
}
