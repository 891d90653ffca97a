//! Deterministic, plausible model output: the same request always gets the same answer.
//!
//! - feedback-analysis prompts (the feedback inside `<feedback>…</feedback>`) get a JSON analysis
//!   derived from the text — sometimes wrapped in code fences or followed by commentary, at the
//!   configured rates, so that the pipeline's repair path is exercised;
//! - documents get a summary that mentions the page count (JSON when the prompt asks for JSON);
//! - anything else gets a short answer;
//! - with `output_config.format` the answer is tidy JSON (structured outputs are valid by
//!   construction), shaped after the schema's properties when it is not one of the above.
//!
//! Thinking runs where the model and request say so (adaptive by default on the 5.x models),
//! more of it at higher effort; it comes first, counts against `max_tokens` with the text, and
//! is billed as output. With `display` omitted (the 5.x default) its block's text is empty.

use pipeline::anthropic::Role;
use pipeline::tokens;
use serde_json::{json, Value};

use crate::config::Knobs;
use crate::fingerprint::fnv;
use crate::markers::Marker;
use crate::request::Parsed;
use crate::shape::Think;

mod feedback;
use feedback::feedback_analysis;

/// What the simulated model says.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub text: String,
    /// Thinking tokens spent before the text (part of `output_tokens`).
    pub thinking_tokens: u32,
    /// Readable thinking, when `display: "summarized"`; empty when omitted.
    pub thinking_text: String,
    pub output_tokens: u32,
    pub stop_reason: String,
    /// `[[sim:block=NAME]]`: a block type from the future to add.
    pub extra_block: Option<String>,
    /// `[[sim:undecodable]]`: the body is not a Message.
    pub undecodable: bool,
}

/// Thinking tokens at each effort for a prompt of ordinary difficulty: "At lower effort levels,
/// Claude may skip thinking for simpler problems" (effort page); a short prompt at `low`
/// effort is answered without thinking.
fn thinking_tokens(req: &Parsed) -> u32 {
    let Think::On { budget, .. } = req.asks.think else {
        return 0;
    };
    let forced = req.markers.iter().find_map(|m| match m {
        Marker::Think { tokens } => Some(*tokens),
        _ => None,
    });
    let base = forced.unwrap_or_else(|| {
        let by_effort = match req.asks.effort {
            "low" if req.input_tokens < 600 => 0,
            "low" => 64,
            "medium" => 160,
            "" | "high" => 480,
            "xhigh" => 960,
            _ => 1_600,
        };
        // ±25%, the same for the same prompt.
        let spread = (req.prompt_hash % 51) as u32;
        by_effort * (75 + spread) / 100
    });
    budget.map_or(base, |b| base.min(b))
}

/// The model's token count for `text` (its tokenizer ratio applied).
fn count(req: &Parsed, text: &str) -> u32 {
    (tokens::estimate(text) as u64 * req.spec.tokens_permille as u64).div_ceil(1_000) as u32
}

pub fn answer(req: &Parsed, knobs: &Knobs) -> Answer {
    // Declined before any output: no thinking, no text (the classifier answered first).
    let (refuse, declined) = crate::markers::refusal(&req.markers, &req.model);
    let thinking = if declined { 0 } else { thinking_tokens(req) };
    // A refusal after some output stops a few words in; one declined before any, at none.
    let full = match (refuse, declined) {
        (true, true) => String::new(),
        (true, false) => "I can't help with".to_owned(),
        (false, _) => answer_text(req, knobs),
    };
    let mut a = cut(req, full, thinking);
    if refuse {
        a.stop_reason = "refusal".into();
    }
    for m in &req.markers {
        match m {
            Marker::Block { kind } => a.extra_block = Some(kind.clone()),
            Marker::Stop { reason } => a.stop_reason = reason.clone(),
            Marker::Undecodable => a.undecodable = true,
            _ => {}
        }
    }
    if let Think::On {
        summarized: true, ..
    } = req.asks.think
    {
        if a.thinking_tokens > 0 {
            a.thinking_text = format!(
                "The user asks about {} characters of text; I will answer directly.",
                req.turns.last().map_or(0, |(_, t)| t.chars().count())
            );
        }
    }
    a
}

fn answer_text(req: &Parsed, knobs: &Knobs) -> String {
    // Structured outputs come back as the JSON alone: no fences, no commentary.
    let knobs = &if req.asks.json_schema {
        Knobs {
            fence_rate: 0.0,
            commentary_rate: 0.0,
            ..knobs.clone()
        }
    } else {
        knobs.clone()
    };
    let last_user = req
        .turns
        .iter()
        .rev()
        .find(|(r, _)| *r == Role::User)
        .map(|(_, t)| t.as_str())
        .unwrap_or_default();
    let prompt = format!("{}\n{}", req.system, last_user);
    let full = if !req.documents.is_empty() {
        let text = document_answer(req, &prompt);
        if prompt.to_ascii_lowercase().contains("json") {
            untidy(text, &prompt, knobs)
        } else {
            text
        }
    } else if let Some(feedback) = between(last_user, "<feedback>", "</feedback>") {
        untidy(feedback_analysis(feedback), feedback, knobs)
    } else {
        let topic: Vec<&str> = last_user.split_whitespace().take(8).collect();
        let prose = format!(
            "Here is a short answer about \"{}\": the simulator read {} characters in {} \
             message(s) and would answer them thoughtfully.",
            topic.join(" "),
            last_user.chars().count(),
            req.turns.len()
        );
        match &req.schema {
            Some(schema) if req.asks.json_schema => shaped_json(schema, &prose).to_string(),
            _ => prose,
        }
    };
    full
}

/// A value of the schema's shape: every property filled by its type.
fn shaped_json(schema: &Value, prose: &str) -> Value {
    match schema.get("type").and_then(Value::as_str) {
        Some("object") => {
            let props = schema.get("properties").and_then(Value::as_object);
            Value::Object(
                props
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| (k.clone(), shaped_json(v, prose)))
                    .collect(),
            )
        }
        Some("array") => json!([]),
        Some("integer") | Some("number") => json!(0),
        Some("boolean") => json!(false),
        Some("null") => Value::Null,
        _ => match schema.get("enum").and_then(Value::as_array) {
            Some(e) if !e.is_empty() => e[0].clone(),
            _ => json!(prose),
        },
    }
}

fn between<'a>(s: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = s.find(open)? + open.len();
    let end = s[start..].find(close)? + start;
    Some(s[start..end].trim())
}

/// A summary of the documents, in prose or (when asked) as a JSON extraction.
fn document_answer(req: &Parsed, prompt: &str) -> String {
    let pages: u32 = req.documents.iter().map(|d| d.pages).sum();
    let title = req
        .documents
        .iter()
        .find_map(|d| d.title.clone())
        .unwrap_or_else(|| "Untitled document".into());
    let plural = if pages == 1 { "" } else { "s" };
    let summary = format!(
        "A {pages}-page document titled \"{title}\"; the simulator summarizes it without reading \
         its text."
    );
    if prompt.to_ascii_lowercase().contains("json") {
        json!({
            "title": title,
            "summary": summary,
            "page_count": pages,
            "key_points": [
                format!("The document has {pages} page{plural}."),
                "Its main topic is stated on the first page.",
                "It ends with a conclusion or next steps.",
            ],
            "entities": [],
        })
        .to_string()
    } else {
        format!("This {pages}-page document, \"{title}\", covers its subject in {pages} page{plural}. {summary}")
    }
}

/// Sometimes wraps JSON in fences and/or adds commentary, decided by a hash of the input and the
/// seed so the same request is untidy the same way every time.
fn untidy(json: String, input: &str, knobs: &Knobs) -> String {
    let h = fnv(input.as_bytes()) ^ knobs.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let unit = |salt: u64| ((h.rotate_left(salt as u32) ^ salt) % 10_000) as f64 / 10_000.0;
    let mut out = if unit(17) < knobs.fence_rate {
        format!("```json\n{json}\n```")
    } else {
        json
    };
    if unit(41) < knobs.commentary_rate {
        out.push_str("\n\nLet me know if you would like a more detailed breakdown.");
    }
    out
}

/// Thinking first, then the text, within `max_tokens` together: a thinking that fills it
/// leaves no text (`max_tokens`, thinking only); a text that does not fit is cut there.
fn cut(req: &Parsed, full: String, thinking: u32) -> Answer {
    let answer = |text: String, thinking_tokens: u32, text_tokens: u32, stop: &str| Answer {
        text,
        thinking_tokens,
        thinking_text: String::new(),
        output_tokens: thinking_tokens + text_tokens,
        stop_reason: stop.into(),
        extra_block: None,
        undecodable: false,
    };
    if thinking >= req.max_tokens {
        return answer(String::new(), req.max_tokens, 0, "max_tokens");
    }
    let room = req.max_tokens - thinking;
    let needed = count(req, &full);
    if needed <= room {
        return answer(full, thinking, needed, "end_turn");
    }
    // Keep the share of characters that fits.
    let chars = full.chars().count() as u64;
    let keep = (chars * room as u64 / needed.max(1) as u64) as usize;
    let text: String = full.chars().take(keep).collect();
    answer(text, thinking, room, "max_tokens")
}

#[cfg(test)]
mod tests;
