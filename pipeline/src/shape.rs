//! Requests shaped per model: nothing is sent that the model's docs say it refuses.
//!
//! - [`check`] refuses, with the field named, a caller's setting the model does not accept (a
//!   prompt job's `thinking`, `output_config`, `tool_choice`, sampling, prefill, `max_tokens`),
//!   before anything is stored or paid.
//! - [`classification`] shapes the product's own classification work (feedback analysis, PDF
//!   extraction): the lowest effort, structured output where the model supports it, and room in
//!   `max_tokens` for the thinking that runs by default on the 5.x models.
//! - [`conform`] re-targets a request to another model (a fallback after overloads), dropping or
//!   converting what the new model would refuse.
//!
//! The rules are the catalog's ([`crate::models`]); the sources are cited there.

use serde_json::Value;

use crate::anthropic::{
    Content, Effort, MessagesRequest, OutputConfig, OutputFormat, Role, Speed, Thinking, ToolChoice,
};
use crate::models::{find, Model};

/// A setting the model refuses: the field and a sentence for the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub field: &'static str,
    pub message: String,
}

fn refused(field: &'static str, message: String) -> Refused {
    Refused { field, message }
}

/// The effort in force: the request's, or the model's default.
fn effort_of(req: &MessagesRequest, m: &Model) -> Option<Effort> {
    req.output_config
        .as_ref()
        .and_then(|c| c.effort)
        .or(m.default_effort)
}

/// Every setting of `req` that `m` refuses, the first one found.
pub fn check(req: &MessagesRequest, m: &Model) -> Result<(), Refused> {
    let id = m.id;
    if req.max_tokens > m.max_output {
        return Err(refused(
            "max_tokens",
            format!(
                "max_tokens must be at most {} for {id} (thinking and text together)",
                m.max_output
            ),
        ));
    }
    check_version_rules(req)?;
    if req.speed == Some(Speed::Fast) && m.fast.is_none() {
        let offered: Vec<&str> = crate::models::CATALOG
            .iter()
            .filter(|m| m.fast.is_some())
            .map(|m| m.id)
            .collect();
        return Err(refused(
            "speed",
            format!(
                "fast mode is not offered on {id} (it is on {})",
                offered.join(", ")
            ),
        ));
    }
    if req.has_prefill() && !m.prefill {
        return Err(refused(
            "messages",
            format!("{id} does not support assistant message prefill: the conversation must end with a user message"),
        ));
    }
    let effort = effort_of(req, m);
    if let Some(e) = req.output_config.as_ref().and_then(|c| c.effort) {
        if !m.accepts_effort(e) {
            let levels: Vec<&str> = m.efforts.iter().map(|e| e.as_str()).collect();
            return Err(refused(
                "output_config.effort",
                if levels.is_empty() {
                    format!("{id} has no effort parameter")
                } else {
                    format!(
                        "effort {:?} is not supported by {id} (it accepts {})",
                        e.as_str(),
                        levels.join(", ")
                    )
                },
            ));
        }
    }
    if req
        .output_config
        .as_ref()
        .and_then(|c| c.format.as_ref())
        .is_some()
        && !m.structured_outputs
    {
        return Err(refused(
            "output_config.format",
            format!("{id} does not support structured outputs"),
        ));
    }
    match &req.thinking {
        Some(Thinking::Enabled { budget_tokens, .. }) => {
            if !m.thinking.budget {
                return Err(refused(
                    "thinking",
                    format!("thinking budgets (\"type\": \"enabled\") are not supported by {id}: use \"adaptive\" and output_config.effort"),
                ));
            }
            if *budget_tokens < 1_024 || *budget_tokens >= req.max_tokens {
                return Err(refused(
                    "thinking",
                    "thinking.budget_tokens must be at least 1024 and less than max_tokens".into(),
                ));
            }
        }
        Some(Thinking::Adaptive { .. }) if !m.thinking.adaptive => {
            return Err(refused(
                "thinking",
                format!("adaptive thinking is not supported by {id}"),
            ))
        }
        Some(Thinking::Disabled) if !m.thinking.disabled => {
            return Err(refused(
                "thinking",
                format!(
                    "thinking cannot be disabled on {id}: use output_config.effort to think less"
                ),
            ))
        }
        Some(Thinking::Disabled)
            if m.thinking.disabled_needs_high_or_below
                && effort.is_some_and(|e| e > Effort::High) =>
        {
            return Err(refused(
                "thinking",
                format!("thinking can be disabled on {id} only at effort high or below"),
            ))
        }
        _ => {}
    }
    if req.tool_choice.as_ref().is_some_and(ToolChoice::is_forced) && !m.forced_tool_choice {
        return Err(refused(
            "tool_choice",
            format!(
                "tool_choice of type \"tool\" or \"any\" is not supported by {id}: use \"auto\""
            ),
        ));
    }
    Ok(())
}

/// What the API version this product sends ([`crate::anthropic::API_VERSION`], 2026-10-21)
/// refuses whatever the model: the sampling parameters (removed, "Extra inputs are not
/// permitted" even at their defaults), a document block in an assistant message, and a text
/// block with citations in a user message. The model's own sampling rules
/// ([`crate::models::Sampling`]) are those of the previous version, kept as the pages give them.
fn check_version_rules(req: &MessagesRequest) -> Result<(), Refused> {
    let removed = |field: &'static str| {
        refused(
            field,
            format!(
                "{field} is not accepted: API version {} removed the sampling parameters \
                 (temperature, top_p, top_k); remove it",
                crate::anthropic::API_VERSION
            ),
        )
    };
    if req.temperature.is_some() {
        return Err(removed("temperature"));
    }
    if req.top_p.is_some() {
        return Err(removed("top_p"));
    }
    if req.top_k.is_some() {
        return Err(removed("top_k"));
    }
    for (i, m) in req.messages.iter().enumerate() {
        let Content::Blocks(blocks) = &m.content else {
            continue;
        };
        for (j, b) in blocks.iter().enumerate() {
            let why = match (m.role, b) {
                (Role::Assistant, b) if b.is_document() => {
                    "a document block in an assistant message"
                }
                (Role::User, b) if b.has_citations() => {
                    "a text block with citations in a user message"
                }
                _ => continue,
            };
            return Err(refused(
                "messages",
                format!(
                    "messages[{i}].content[{j}]: {why} is refused by API version {}",
                    crate::anthropic::API_VERSION
                ),
            ));
        }
    }
    Ok(())
}

/// `req` without what the API version removed: a request stored before the product moved to
/// it (a job accepted with a sampling parameter) can still be sent.
pub fn without_removed(mut req: MessagesRequest) -> MessagesRequest {
    req.temperature = None;
    req.top_p = None;
    req.top_k = None;
    req
}

/// Shapes a classification request (feedback analysis, PDF extraction) for its model: the
/// lowest effort the model accepts, the answer's JSON schema as structured output where
/// supported, and `max_tokens` raised by the thinking room where thinking runs by default.
/// An unknown model is left as it is (it is refused at submission; this never guesses).
pub fn classification(mut req: MessagesRequest, schema: Value) -> MessagesRequest {
    let Some(m) = find(&req.model) else {
        return req;
    };
    let config = OutputConfig {
        effort: m.lowest_effort(),
        format: m
            .structured_outputs
            .then_some(OutputFormat::JsonSchema { schema }),
    };
    req.output_config = (config != OutputConfig::default()).then_some(config);
    req.max_tokens = (req.max_tokens + m.thinking_room()).min(m.max_output);
    req
}

/// Re-targets `req` to `model` (a fallback): what the new model refuses is dropped or turned
/// into its nearest accepted form — sampling dropped (the API version removed it), a thinking
/// budget to adaptive,
/// `disabled` to the default, an effort to the nearest accepted level, a schema to plain JSON
/// (the repair reads it), a forced tool choice to `auto`, `max_tokens` to the model's limit.
pub fn conform(mut req: MessagesRequest, model: &str) -> MessagesRequest {
    req.model = model.to_owned();
    let Some(m) = find(model) else {
        return req;
    };
    if m.fast.is_none() && req.speed == Some(Speed::Fast) {
        // A fallback without fast mode answers at standard speed.
        req.speed = None;
    }
    let mut req = without_removed(req);
    if let Some(config) = req.output_config.as_mut() {
        config.effort = config.effort.and_then(|e| nearest_effort(e, m));
        if !m.structured_outputs {
            config.format = None;
        }
    }
    if req.output_config.as_ref() == Some(&OutputConfig::default()) {
        req.output_config = None;
    }
    req.thinking = match req.thinking.take() {
        Some(Thinking::Enabled { display, .. }) if !m.thinking.budget => m
            .thinking
            .adaptive
            .then_some(Thinking::Adaptive { display }),
        Some(Thinking::Adaptive { .. }) if !m.thinking.adaptive => None,
        Some(Thinking::Disabled)
            if !m.thinking.disabled
                || (m.thinking.disabled_needs_high_or_below
                    && effort_of(&req, m).is_some_and(|e| e > Effort::High)) =>
        {
            None
        }
        other => other,
    };
    if req.tool_choice.as_ref().is_some_and(ToolChoice::is_forced) && !m.forced_tool_choice {
        req.tool_choice = Some(ToolChoice::Auto {
            disable_parallel_tool_use: None,
        });
    }
    req.max_tokens = req.max_tokens.min(m.max_output);
    req
}

/// The accepted level closest to `e` from below (or the lowest), `None` without effort.
fn nearest_effort(e: Effort, m: &Model) -> Option<Effort> {
    m.efforts
        .iter()
        .rev()
        .find(|x| **x <= e)
        .or(m.efforts.first())
        .copied()
}

#[cfg(test)]
mod tests;
