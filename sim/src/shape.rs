//! What each model refuses, with the API's own error messages, and what a request asks the
//! model to do (think, how hard, in which format). The rules are this crate's model table
//! ([`crate::models`]); the messages are quoted from the migration guides where they give one.
//!
//! Messages quoted:
//! - sonnet-5-5 migration guide: `"thinking.type.enabled" is not supported for this model. Use
//!   "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.`; the
//!   `between_tools` hint for `disabled`; `This model does not support assistant message
//!   prefill. The conversation must end with a user message.`; `tool_choice: type "tool" and
//!   "any" are not supported for this model.`
//! - opus-5-5 what's new: `"thinking.type.disabled" is not supported for this model. Use
//!   "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.`
//! - sampling: `temperature is deprecated for this model.` (as the API answers on 2023-06-01;
//!   the 2026-10-21 version removes the parameters: `temperature: Extra inputs are not
//!   permitted`, api/versioning)

use serde_json::Value;

use crate::errors::SimError;
use crate::models::{Sampling, SimModel};

/// The API version that removed the sampling parameters.
pub const VERSION_2026_10_21: &str = "2026-10-21";

/// The top-level fields of a Messages request (SDK `MessageCreateParams`); anything else is
/// "Extra inputs are not permitted".
const FIELDS: &[&str] = &[
    "model",
    "max_tokens",
    "messages",
    "system",
    "metadata",
    "stop_sequences",
    "stream",
    "temperature",
    "top_p",
    "top_k",
    "thinking",
    "output_config",
    "tools",
    "tool_choice",
    "service_tier",
    "container",
    "inference_geo",
    "cache_control",
    "speed",
];

/// How the model thinks for this request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Think {
    Off,
    /// Adaptive (or a manual budget, capped at `budget`); `summarized` returns readable text,
    /// otherwise the block's `thinking` is empty (the 5.x default `display: "omitted"`).
    On {
        budget: Option<u32>,
        summarized: bool,
    },
}

/// The fields of a count_tokens request (SDK `MessageCountTokensParams`).
const COUNT_FIELDS: &[&str] = &[
    "model",
    "messages",
    "system",
    "thinking",
    "output_config",
    "tools",
    "tool_choice",
    "cache_control",
];

/// What the request asks beyond its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asks {
    pub think: Think,
    /// The effort in force (the request's or the model's default; empty without effort).
    pub effort: &'static str,
    /// `output_config.format`: the answer must be JSON matching it.
    pub json_schema: bool,
}

fn bad(message: impl Into<String>) -> SimError {
    SimError::invalid(message)
}

/// Checks every setting of `obj` against `m` and reads what it asks.
pub fn check(
    obj: &serde_json::Map<String, Value>,
    m: &SimModel,
    max_tokens: Option<u32>,
    version: &str,
) -> Result<Asks, SimError> {
    // count_tokens has no max_tokens: its settings are checked against the model's limit.
    let fields = if max_tokens.is_some() {
        FIELDS
    } else {
        COUNT_FIELDS
    };
    let max_tokens = max_tokens.unwrap_or(m.max_output);
    if let Some(extra) = obj.keys().find(|k| !fields.contains(&k.as_str())) {
        return Err(bad(format!("{extra}: Extra inputs are not permitted")));
    }
    if max_tokens > m.max_output {
        return Err(bad(format!(
            "max_tokens: {max_tokens} > {}, which is the maximum allowed number of output tokens for {}",
            m.max_output, m.id
        )));
    }
    sampling(obj, m, version)?;
    if version == VERSION_2026_10_21 {
        content_rules(obj)?;
    }
    let effort = effort(obj, m)?;
    let json_schema = format(obj, m)?;
    let think = thinking(obj, m, max_tokens, effort)?;
    if !m.prefill
        && obj
            .get("messages")
            .and_then(Value::as_array)
            .and_then(|a| a.last())
            .and_then(|l| l.get("role"))
            .and_then(Value::as_str)
            == Some("assistant")
    {
        return Err(bad(
            "This model does not support assistant message prefill. The conversation must end with a user message.",
        ));
    }
    if let Some(tc) = obj.get("tool_choice").filter(|v| !v.is_null()) {
        match tc.get("type").and_then(Value::as_str) {
            Some("auto") | Some("none") => {}
            Some("any") | Some("tool") if !m.forced_tools => {
                return Err(bad(
                    "tool_choice: type \"tool\" and \"any\" are not supported for this model.",
                ))
            }
            Some("any") => {}
            Some("tool") if tc.get("name").and_then(Value::as_str).is_some() => {}
            Some("tool") => return Err(bad("tool_choice.name: Field required")),
            _ => {
                return Err(bad(
                    "tool_choice: Input tag found using 'type' does not match any of the expected tags: 'auto', 'any', 'tool', 'none'",
                ))
            }
        }
    }
    if let Some(tools) = obj.get("tools").filter(|v| !v.is_null()) {
        if !tools.is_array() {
            return Err(bad("tools: Input should be a valid list"));
        }
    }
    Ok(Asks {
        think,
        effort,
        json_schema,
    })
}

fn number(obj: &serde_json::Map<String, Value>, name: &str) -> Option<f64> {
    obj.get(name)
        .filter(|v| !v.is_null())
        .and_then(Value::as_f64)
}

/// What the 2026-10-21 version refuses in the messages themselves (api/versioning: "A request
/// that places a document block directly in an assistant message returns a 400 error";
/// "Sending a text block with a non-empty citations array in a user message … returns a 400
/// error"). The error's wording is not quoted on the page; this is the simulator's.
fn content_rules(obj: &serde_json::Map<String, Value>) -> Result<(), SimError> {
    let Some(messages) = obj.get("messages").and_then(Value::as_array) else {
        return Ok(());
    };
    for (i, m) in messages.iter().enumerate() {
        let Some(blocks) = m["content"].as_array() else {
            continue;
        };
        for (j, b) in blocks.iter().enumerate() {
            let cited = b["citations"].as_array().is_some_and(|c| !c.is_empty());
            match (m["role"].as_str(), b["type"].as_str()) {
                (Some("assistant"), Some("document")) => {
                    return Err(bad(format!(
                        "messages.{i}.content.{j}: document blocks are not permitted in assistant messages"
                    )))
                }
                (Some("user"), Some("text")) if cited => {
                    return Err(bad(format!(
                        "messages.{i}.content.{j}.citations: citations are not permitted on text blocks in user messages"
                    )))
                }
                _ => {}
            }
        }
    }
    Ok(())
}

fn sampling(
    obj: &serde_json::Map<String, Value>,
    m: &SimModel,
    version: &str,
) -> Result<(), SimError> {
    let present = |n: &str| obj.get(n).is_some_and(|v| !v.is_null());
    if version == VERSION_2026_10_21 {
        if let Some(n) = ["temperature", "top_p", "top_k"]
            .into_iter()
            .find(|n| present(n))
        {
            return Err(bad(format!("{n}: Extra inputs are not permitted")));
        }
        return Ok(());
    }
    let (t, p) = (number(obj, "temperature"), number(obj, "top_p"));
    if t.is_some_and(|t| !(0.0..=1.0).contains(&t)) {
        return Err(bad("temperature: Input should be less than or equal to 1"));
    }
    match m.sampling {
        Sampling::Free => Ok(()),
        Sampling::NotBoth if t.is_some() && p.is_some() => Err(bad(
            "`temperature` and `top_p` cannot both be specified for this model. Please use only one.",
        )),
        Sampling::NotBoth => Ok(()),
        Sampling::Defaults => {
            if t.is_some_and(|t| t != 1.0) {
                return Err(bad("temperature is deprecated for this model."));
            }
            if p.is_some_and(|p| p != 0.99) {
                return Err(bad("top_p is deprecated for this model."));
            }
            if present("top_k") {
                return Err(bad("top_k is deprecated for this model."));
            }
            if t.is_some() && p.is_some() {
                return Err(bad(
                    "`temperature` and `top_p` cannot both be specified for this model. Please use only one.",
                ));
            }
            Ok(())
        }
    }
}

fn effort(obj: &serde_json::Map<String, Value>, m: &SimModel) -> Result<&'static str, SimError> {
    let config = match obj.get("output_config") {
        None | Some(Value::Null) => return Ok(m.default_effort),
        Some(Value::Object(c)) => c,
        Some(_) => return Err(bad("output_config: Input should be a valid dictionary")),
    };
    if let Some(k) = config
        .keys()
        .find(|k| !matches!(k.as_str(), "effort" | "format"))
    {
        return Err(bad(format!(
            "output_config.{k}: Extra inputs are not permitted"
        )));
    }
    match config.get("effort") {
        None | Some(Value::Null) => Ok(m.default_effort),
        Some(Value::String(e)) => {
            if !["low", "medium", "high", "xhigh", "max"].contains(&e.as_str()) {
                return Err(bad(
                    "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'",
                ));
            }
            if m.efforts.is_empty() {
                return Err(bad("This model does not support the effort parameter."));
            }
            m.efforts
                .iter()
                .find(|x| **x == e.as_str())
                .copied()
                .ok_or_else(|| {
                    bad(format!(
                        "output_config.effort: '{e}' is not supported for this model. Supported values: {}",
                        m.efforts.join(", ")
                    ))
                })
        }
        Some(_) => Err(bad("output_config.effort: Input should be a valid string")),
    }
}

fn format(obj: &serde_json::Map<String, Value>, m: &SimModel) -> Result<bool, SimError> {
    let Some(f) = obj
        .get("output_config")
        .and_then(|c| c.get("format"))
        .filter(|f| !f.is_null())
    else {
        return Ok(false);
    };
    if f.get("type").and_then(Value::as_str) != Some("json_schema") {
        return Err(bad(
            "output_config.format.type: Input should be 'json_schema'",
        ));
    }
    if !f.get("schema").is_some_and(Value::is_object) {
        return Err(bad("output_config.format.schema: Field required"));
    }
    if !m.structured {
        return Err(bad(format!(
            "'{}' does not support structured outputs (output_config.format).",
            m.id
        )));
    }
    Ok(true)
}

fn thinking(
    obj: &serde_json::Map<String, Value>,
    m: &SimModel,
    max_tokens: u32,
    effort: &str,
) -> Result<Think, SimError> {
    let summarized = |t: &Value| t.get("display").and_then(Value::as_str) == Some("summarized");
    let above_high = m
        .effort_rank(effort)
        .zip(m.effort_rank("high"))
        .is_some_and(|(e, h)| e > h);
    let t = match obj.get("thinking") {
        None | Some(Value::Null) => {
            return Ok(if m.thinking.default_on {
                Think::On {
                    budget: None,
                    summarized: false,
                }
            } else {
                Think::Off
            })
        }
        Some(t) => t,
    };
    match t.get("type").and_then(Value::as_str) {
        Some("adaptive") if m.thinking.adaptive => Ok(Think::On {
            budget: None,
            summarized: summarized(t),
        }),
        Some("adaptive") => Err(bad("adaptive thinking is not supported on this model")),
        Some("enabled") if !m.thinking.enabled => Err(bad(
            "\"thinking.type.enabled\" is not supported for this model. Use \"thinking.type.adaptive\" and \"output_config.effort\" to control thinking behavior.",
        )),
        Some("enabled") => {
            let budget = t
                .get("budget_tokens")
                .and_then(Value::as_u64)
                .ok_or_else(|| bad("thinking.enabled.budget_tokens: Field required"))?;
            if budget < 1_024 {
                return Err(bad(
                    "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
                ));
            }
            if budget >= max_tokens as u64 {
                return Err(bad("`max_tokens` must be greater than `thinking.budget_tokens`."));
            }
            Ok(Think::On {
                budget: Some(budget as u32),
                summarized: t.get("display").and_then(Value::as_str) != Some("omitted"),
            })
        }
        Some("disabled") if m.thinking.between_tools => Err(bad(
            "To turn thinking off on this model, send \"thinking\": {\"type\": \"between_tools\"} instead of {\"type\": \"disabled\"}. The model does not think before responding. The short updates it writes between tool calls come back as thinking blocks.",
        )),
        Some("disabled") if !m.thinking.disabled => Err(bad(
            "\"thinking.type.disabled\" is not supported for this model. Use \"thinking.type.adaptive\" and \"output_config.effort\" to control thinking behavior.",
        )),
        Some("disabled") if m.thinking.disabled_at_high_or_below && above_high => Err(bad(
            "\"thinking.type.disabled\" is only supported at effort \"high\" or below on this model.",
        )),
        Some("disabled") => Ok(Think::Off),
        Some("between_tools") if m.thinking.between_tools => {
            if t.as_object().is_some_and(|o| o.len() > 1) {
                return Err(bad("thinking.between_tools: Extra inputs are not permitted"));
            }
            if above_high {
                return Err(bad(
                    "thinking.type \"between_tools\" is supported at effort \"low\", \"medium\" or \"high\".",
                ));
            }
            Ok(Think::Off)
        }
        _ => Err(bad(
            "thinking: Input tag found using 'type' does not match any of the expected tags: 'enabled', 'disabled', 'adaptive'",
        )),
    }
}

#[cfg(test)]
mod tests;
