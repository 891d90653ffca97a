//! Deterministic, plausible model output: the same request always gets the same answer and usage.

use pipeline::anthropic::{Role, StopReason, Usage};
use pipeline::tokens;

use crate::messages::Parsed;

/// What the simulated model says and what it cost in tokens.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub text: String,
    pub usage: Usage,
    pub stop_reason: StopReason,
}

/// Roughly 1,500 tokens per PDF page at ~3 KB per page of a typical text PDF.
const DOCUMENT_TOKENS_PER_KB: usize = 500;

pub fn answer(req: &Parsed) -> Answer {
    let prompt: String = req
        .turns
        .iter()
        .map(|(_, t)| t.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let input_tokens = tokens::estimate(&req.system)
        + tokens::estimate(&prompt)
        + (req.document_bytes * DOCUMENT_TOKENS_PER_KB / 1024) as u32
        // Per-message framing, as the real API counts role markers.
        + 3 * req.turns.len() as u32;
    let last_user = req
        .turns
        .iter()
        .rev()
        .find(|(r, _)| *r == Role::User)
        .map(|(_, t)| t.as_str())
        .unwrap_or_default();
    let topic: Vec<&str> = last_user.split_whitespace().take(8).collect();
    let full = format!(
        "Here is a short answer about \"{}\": the simulator read {} characters and {} message(s), \
         and would answer them thoughtfully.",
        topic.join(" "),
        last_user.chars().count(),
        req.turns.len()
    );
    truncate(full, input_tokens, req.max_tokens)
}

/// Cuts the text to `max_tokens` (stop_reason `max_tokens`) or keeps it whole (`end_turn`).
fn truncate(full: String, input_tokens: u32, max_tokens: u32) -> Answer {
    let needed = tokens::estimate(&full);
    let (text, output_tokens, stop_reason) = if needed <= max_tokens {
        (full, needed, StopReason::EndTurn)
    } else {
        // 3.5 characters per token, as `tokens::estimate` assumes.
        let keep = (max_tokens as usize * 7) / 2;
        let text: String = full.chars().take(keep).collect();
        (text, max_tokens, StopReason::MaxTokens)
    };
    Answer {
        text,
        usage: Usage {
            input_tokens,
            output_tokens,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
        },
        stop_reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(text: &str, max_tokens: u32) -> Parsed {
        Parsed {
            model: "claude-x".into(),
            max_tokens,
            system: String::new(),
            turns: vec![(Role::User, text.into())],
            document_bytes: 0,
        }
    }

    #[test]
    fn the_same_request_gets_the_same_answer() {
        assert_eq!(
            answer(&req("hello there", 100)),
            answer(&req("hello there", 100))
        );
    }

    #[test]
    fn a_small_max_tokens_truncates_and_says_so() {
        let a = answer(&req("tell me everything about queues", 3));
        assert_eq!(a.stop_reason, StopReason::MaxTokens);
        assert_eq!(a.usage.output_tokens, 3);
        assert!(tokens::estimate(&a.text) <= 3);
    }

    #[test]
    fn longer_prompts_cost_more_input_tokens() {
        let short = answer(&req("hi", 100)).usage.input_tokens;
        let long = answer(&req(&"word ".repeat(500), 100)).usage.input_tokens;
        assert!(long > short);
    }
}
