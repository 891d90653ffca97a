//! Answering a validated request, as `POST /v1/messages` (`crate::messages`) and a batch's
//! lines (`crate::batches`) both do: its answer and usage with the prompt cache ([`plan`]), the
//! bill ([`commit`]), the Message object ([`message`]); and a body read as JSON ([`json_body`]).

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use pipeline::anthropic::{CacheCreation, ErrorType, Speed, Usage};
use serde_json::{json, Value};

use crate::errors::{new_id, SimError};
use crate::output::{self, Answer};
use crate::pricing;
use crate::request::{self, Parsed};
use crate::state::Inner;

/// The answer to a validated request and its usage with the prompt cache applied.
/// Reads the cache without changing it: nothing is billed until [`commit`].
pub fn plan(inner: &Inner, req: &Parsed, now: i64) -> (Answer, Usage) {
    let answer = output::answer(req, &inner.knobs);
    let mut usage = Usage {
        input_tokens: req.input_tokens,
        output_tokens: answer.output_tokens,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation: Some(CacheCreation::default()),
        speed: Some(if req.fast {
            Speed::Fast
        } else {
            Speed::Standard
        }),
    };
    if let Some(prefix) = req.cache {
        usage.input_tokens -= prefix.tokens;
        if inner.cache.get(&prefix.key).is_some_and(|exp| *exp > now) {
            usage.cache_read_input_tokens = prefix.tokens;
        } else {
            usage.cache_creation_input_tokens = prefix.tokens;
            usage.cache_creation = Some(if prefix.ttl_ms > request::CACHE_5M_MS {
                CacheCreation {
                    ephemeral_5m_input_tokens: 0,
                    ephemeral_1h_input_tokens: prefix.tokens,
                }
            } else {
                CacheCreation {
                    ephemeral_5m_input_tokens: prefix.tokens,
                    ephemeral_1h_input_tokens: 0,
                }
            });
        }
    }
    (answer, usage)
}

/// Who bills a call: the Anthropic API (its cost report counts it), or another route, at its
/// price — thousandths of the list price (regional endpoints: 1,100).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payer {
    Anthropic,
    Cloud { route: &'static str, permille: u64 },
}

/// Records the cache use and bills the answer (at half price for batches).
pub fn commit(
    inner: &mut Inner,
    req: &Parsed,
    usage: &Usage,
    (now, batch): (i64, bool),
    (job, payer): (Option<&str>, Payer),
) {
    if let Some(prefix) = req.cache {
        // A hit refreshes the entry for its lifetime, as a write starts it.
        let until = (now + prefix.ttl_ms).max(inner.cache.get(&prefix.key).copied().unwrap_or(0));
        inner.cache.insert(prefix.key, until);
    }
    // Release notes, 2026-06-02: "you are no longer billed for a request when it returns
    // stop_reason: "refusal" without Claude having generated any output".
    let declined = usage.output_tokens == 0 && crate::markers::refusal(&req.markers, &req.model).1;
    let cost = match declined {
        true => 0,
        false => pricing::cost_micros(&req.model, usage, batch, now),
    };
    let cost = match &inner.knobs.misprice {
        // The knob may name an alias of the snapshot that answered.
        Some((model, permille))
            if req.model == *model || req.model.starts_with(&format!("{model}-")) =>
        {
            cost * permille / 1000
        }
        _ => cost,
    };
    match payer {
        Payer::Anthropic => {
            inner.stats.bill(usage, cost, batch, job);
            inner.stats.by_day(now, &req.model, batch, cost);
        }
        Payer::Cloud { route, permille } => {
            // Rounded half up, as every other amount here.
            let cost = (cost * permille + 500) / 1000;
            inner.stats.bill_cloud(route, usage, cost, job);
        }
    }
}

/// The Message object for an answer, in the shape of the current API (SDK `Message`): thinking
/// first (empty text and a signature when `display` is omitted), then the text, the usage with
/// `output_tokens_details`, `service_tier` and `inference_geo`, and `stop_details` on a refusal.
pub fn message(req: &Parsed, answer: Answer, usage: Usage, batch: bool) -> Value {
    let mut content = Vec::new();
    if answer.thinking_tokens > 0 {
        content.push(json!({
            "type": "thinking",
            "thinking": answer.thinking_text,
            "signature": new_id("sig"),
        }));
    }
    if !answer.text.is_empty() {
        content.push(json!({"type": "text", "text": answer.text, "citations": null}));
    }
    if let Some(kind) = &answer.extra_block {
        content.push(json!({"type": kind, "data": "a block type this client has never seen"}));
    }
    let refusal = answer.stop_reason == "refusal";
    let mut usage_json = serde_json::to_value(usage).unwrap_or_default();
    usage_json["output_tokens_details"] = json!({"thinking_tokens": answer.thinking_tokens});
    usage_json["service_tier"] = json!(if batch { "batch" } else { "standard" });
    usage_json["inference_geo"] = json!("global");
    usage_json["server_tool_use"] = Value::Null;
    let mut m = json!({
        "id": new_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": req.model,
        "content": content,
        "stop_reason": answer.stop_reason,
        "stop_sequence": null,
        "stop_details": if refusal {
            // The marker's refusal names a policy area, as a classifier's does.
            json!({"type": "refusal", "category": "cyber",
                "explanation": "The request was declined by a safety classifier."})
        } else {
            Value::Null
        },
        "container": null,
        "usage": usage_json,
    });
    if answer.undecodable {
        // Paid for, but not a Message a client can read.
        m["content"] = json!({"type": "text", "text": "not a list"});
    }
    m
}

/// A JSON body of at most `max` bytes: 413 `request_too_large` beyond, 400 when not JSON.
pub fn json_body(body: Result<Bytes, BytesRejection>, max: usize) -> Result<Value, SimError> {
    let too_large = || {
        SimError::new(
            ErrorType::RequestTooLarge,
            "Request exceeds the maximum allowed number of bytes.",
        )
    };
    let body = body.map_err(|_| too_large())?;
    if body.len() > max {
        return Err(too_large());
    }
    serde_json::from_slice(&body)
        .map_err(|e| SimError::invalid(format!("There was an error parsing the body: {e}")))
}
