//! Thinking that fits (issue 33, part 7). Where thinking runs, `max_tokens` covers thinking and
//! the answer's text together (S5-MIG: "a hard limit on total output (thinking plus response
//! text)"): a small `max_tokens` at a high effort can end thinking-only — billed, with no
//! answer. A job whose `max_tokens` leaves less than the planning room below is warned at
//! submission, with what would fit.
//!
//! The docs give no per-model figure for how much adaptive thinking uses at each effort (the
//! effort page, read 2026-12-06, says only that effort "affects all response tokens, including
//! thinking"); a third party reports the docs recommending "max_tokens of at least 64k" at
//! `xhigh` and `max`. The figures below are this product's planning figures, not the API's: the
//! `high` room is the one its own classification work leaves (`crate::models::THINKING_ROOM`),
//! and the text room the default answer budget (`crate::models::DEFAULT_MAX_TOKENS`), so a
//! prompt job with the default `max_tokens` is never warned.

use crate::anthropic::{Effort, MessagesRequest, Thinking};
use crate::models::{Model, DEFAULT_MAX_TOKENS, THINKING_ROOM};

/// `max_tokens` planned for thinking and text at `effort`.
pub fn planned(effort: Effort) -> u32 {
    match effort {
        Effort::Low => THINKING_ROOM / 4 + DEFAULT_MAX_TOKENS,
        Effort::Medium => THINKING_ROOM / 2 + DEFAULT_MAX_TOKENS,
        Effort::High => THINKING_ROOM + DEFAULT_MAX_TOKENS,
        // The reported recommendation for the top levels.
        Effort::Xhigh | Effort::Max => 64_000,
    }
}

/// The `max_tokens` this request should have for its thinking on `m`, when thinking runs and
/// it has less: `(effort, what would fit)`.
pub fn short_of(req: &MessagesRequest, m: &Model) -> Option<(Option<Effort>, u32)> {
    let effort = req
        .output_config
        .as_ref()
        .and_then(|c| c.effort)
        .or(m.default_effort);
    let needed = match &req.thinking {
        Some(Thinking::Disabled) => return None,
        Some(Thinking::Enabled { budget_tokens, .. }) => budget_tokens + DEFAULT_MAX_TOKENS,
        Some(Thinking::Adaptive { .. }) => planned(effort.unwrap_or(Effort::High)),
        None if m.thinking.on_by_default => planned(effort.unwrap_or(Effort::High)),
        None => return None,
    }
    .min(m.max_output);
    (req.max_tokens < needed).then_some((effort, needed))
}

/// The warning of a job whose `max_tokens` is short of its thinking: what would fit, a larger
/// `max_tokens` or a lower effort.
pub fn advice(req: &MessagesRequest, m: &Model) -> Option<String> {
    let (effort, needed) = short_of(req, m)?;
    let at = effort.map_or(String::new(), |e| format!(" at effort {}", e.as_str()));
    let lower = m
        .lowest_effort()
        .filter(|low| effort.is_some_and(|e| e > *low))
        .filter(|_| !matches!(req.thinking, Some(Thinking::Enabled { .. })))
        .map(|low| {
            format!(
                ", or output_config.effort \"{}\" (max_tokens of at least {})",
                low.as_str(),
                planned(low).min(m.max_output)
            )
        })
        .unwrap_or_default();
    Some(format!(
        "max_tokens {} leaves little room for thinking on {}{at}: thinking and the answer share \
         max_tokens, and a job whose thinking uses it all fails, billed, with no answer; ask for \
         max_tokens of at least {needed}{lower}",
        req.max_tokens, m.id
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anthropic::{Content, InputMessage, OutputConfig};
    use crate::models::find;

    fn req(model: &str, max_tokens: u32) -> MessagesRequest {
        MessagesRequest::new(
            model,
            max_tokens,
            vec![InputMessage::user(Content::Text("hi".into()))],
        )
    }

    #[test]
    fn a_small_max_tokens_on_the_default_model_is_warned_with_what_fits() {
        let m = find("claude-sonnet-5-5").unwrap();
        let why = advice(&req(m.id, 200), m).unwrap();
        assert!(why.contains("at least 3072"), "{why}");
        assert!(
            why.contains("effort \"low\" (max_tokens of at least 1536)"),
            "{why}"
        );
        // The default max_tokens of a prompt job fits.
        let default = DEFAULT_MAX_TOKENS + m.thinking_room();
        assert_eq!(advice(&req(m.id, default), m), None);
    }

    #[test]
    fn no_warning_where_thinking_does_not_run_and_the_top_efforts_need_64k() {
        let haiku45 = find("claude-haiku-4-5").unwrap();
        assert_eq!(
            advice(&req(haiku45.id, 50), haiku45),
            None,
            "off by default"
        );
        let m = find("claude-opus-5-5").unwrap();
        let mut off = req(m.id, 50);
        off.thinking = Some(Thinking::Disabled);
        assert_eq!(short_of(&off, m), None);
        let mut max = req(m.id, 32_000);
        max.output_config = Some(OutputConfig {
            effort: Some(Effort::Max),
            ..OutputConfig::default()
        });
        assert_eq!(short_of(&max, m), Some((Some(Effort::Max), 64_000)));
    }
}
