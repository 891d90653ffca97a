//! Token estimation from text, for budgets before a call.
//!
//! Claude's tokenizer is not public; about 3.5 characters per token for English prose is the
//! documented rule of thumb for the 4.x tokenizer. We count Unicode scalar values, round up, and
//! never answer 0 for non-empty text, so an estimate is never optimistic about an empty-looking
//! request. A request's estimate is then scaled by its model's tokenizer ratio from the catalog:
//! "Claude 4.7 and later models … produce approximately 30% more tokens for the same text"
//! (platform.claude.com/docs/en/about-claude/pricing).

use crate::anthropic::{Content, InputBlock, MessagesRequest};

/// Estimated tokens of `text`.
pub fn estimate(text: &str) -> u32 {
    let chars = text.chars().count() as u64;
    if chars == 0 {
        return 0;
    }
    // ceil(chars / 3.5) == ceil(2·chars / 7)
    let t = (2 * chars).div_ceil(7);
    t.min(u32::MAX as u64) as u32
}

/// Framing tokens per message and per block (role markers, block boundaries); generous, so the
/// estimate of a request stays at or above what the API counts.
const FRAMING: u64 = 4;

/// Tokens per 1,000 of the 4.x tokenizer's for `model`; an unknown model is assumed to count
/// like the newest tokenizer (the larger figure keeps the budget safe).
pub fn tokenizer_permille(model: &str) -> u64 {
    crate::models::find(model).map_or(1_300, |m| m.tokenizer_permille as u64)
}

/// Estimated input tokens of a Messages request for its model, for the token budget; `None`
/// when it holds a document (or another block), whose tokens only the API can count
/// (`count_tokens`).
pub fn estimate_request(req: &MessagesRequest) -> Option<u64> {
    let base = estimate_base(req)?;
    Some((base * tokenizer_permille(&req.model)).div_ceil(1_000))
}

/// As [`estimate_request`], in 4.x-tokenizer tokens.
fn estimate_base(req: &MessagesRequest) -> Option<u64> {
    fn content(c: &Content) -> Option<u64> {
        match c {
            Content::Text(t) => Some(estimate(t) as u64 + FRAMING),
            Content::Blocks(blocks) => blocks.iter().try_fold(0u64, |sum, b| match b {
                InputBlock::Text { text, .. } => Some(sum + estimate(text) as u64 + FRAMING),
                InputBlock::Document { .. } | InputBlock::Other(_) => None,
            }),
        }
    }
    let system = req.system.as_ref().map(content).unwrap_or(Some(0))?;
    req.messages
        .iter()
        .try_fold(system, |sum, m| Some(sum + content(&m.content)? + FRAMING))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn empty_text_has_no_tokens_and_any_text_has_some() {
        assert_eq!(estimate(""), 0);
        assert_eq!(estimate("a"), 1);
        assert_eq!(estimate("hello world, this is 35 characters."), 10);
    }

    #[test]
    fn multibyte_characters_count_once() {
        assert_eq!(estimate("ééééééé"), estimate("aaaaaaa"));
    }

    #[test]
    fn a_request_is_estimated_at_or_above_its_text_and_documents_need_the_api() {
        let req = crate::feedback::request("claude-sonnet-5-5", "The app crashes on login.");
        let text_only = estimate("The app crashes on login.") as u64;
        assert!(estimate_request(&req).unwrap() > text_only);
        let mut with_doc = req.clone();
        with_doc.messages[0].content =
            Content::Blocks(vec![InputBlock::pdf("JVBERi0=".into(), None)]);
        assert_eq!(estimate_request(&with_doc), None);
    }

    #[test]
    fn the_5_x_tokenizer_counts_about_30_percent_more_for_the_same_text() {
        let text = "word ".repeat(1_000);
        let mut req = crate::feedback::request("claude-haiku-4-5", &text);
        req.system = None;
        let old = estimate_request(&req).unwrap();
        req.model = "claude-haiku-5-5".into();
        let new = estimate_request(&req).unwrap();
        assert_eq!(new, (old * 13).div_ceil(10));
    }

    proptest! {
        #[test]
        fn more_text_never_means_fewer_tokens(a in ".{0,200}", b in ".{0,200}") {
            let joined = format!("{a}{b}");
            prop_assert!(estimate(&joined) >= estimate(&a));
        }
    }
}
