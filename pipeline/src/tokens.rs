//! Token estimation from text, for budgets before a call and for the simulator's usage figures.
//!
//! Claude's tokenizer is not public; about 3.5 characters per token for English prose is the
//! documented rule of thumb. We count Unicode scalar values, round up, and never answer 0 for
//! non-empty text, so an estimate is never optimistic about an empty-looking request.

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

/// Estimated input tokens of a Messages request, for the token budget; `None` when it holds a
/// document, whose tokens only the API can count (`count_tokens`).
pub fn estimate_request(req: &MessagesRequest) -> Option<u64> {
    fn content(c: &Content) -> Option<u64> {
        match c {
            Content::Text(t) => Some(estimate(t) as u64 + FRAMING),
            Content::Blocks(blocks) => blocks.iter().try_fold(0u64, |sum, b| match b {
                InputBlock::Text { text, .. } => Some(sum + estimate(text) as u64 + FRAMING),
                InputBlock::Document { .. } => None,
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
        with_doc.messages[0].content = Content::Blocks(vec![InputBlock::Document {
            source: crate::anthropic::DocumentSource {
                kind: "base64".into(),
                media_type: "application/pdf".into(),
                data: "JVBERi0=".into(),
            },
            cache_control: None,
        }]);
        assert_eq!(estimate_request(&with_doc), None);
    }

    proptest! {
        #[test]
        fn more_text_never_means_fewer_tokens(a in ".{0,200}", b in ".{0,200}") {
            let joined = format!("{a}{b}");
            prop_assert!(estimate(&joined) >= estimate(&a));
        }
    }
}
