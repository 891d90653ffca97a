//! Token estimation from text, for budgets before a call.
//!
//! Claude's tokenizer is not public; about 3.5 characters per token for English prose is the
//! documented rule of thumb for the 4.x tokenizer. We count Unicode scalar values, round up, and
//! never answer 0 for non-empty text, so an estimate is never optimistic about an empty-looking
//! request. A request's estimate is then scaled by its model's tokenizer ratio from the catalog:
//! "Claude 4.7 and later models … produce approximately 30% more tokens for the same text"
//! (platform.claude.com/docs/en/about-claude/pricing).

use crate::anthropic::{Content, DocumentSource, InputBlock, MessagesRequest};

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

/// The most input tokens a request can be billed for, to reserve its worst case against a
/// spending cap before anything is paid. Unlike [`estimate_request`] it never needs the API:
/// - text is estimated over the request's whole JSON (roles, tools, schemas and escapes
///   included, which only adds), plus [`HIDDEN_PROMPT`] for the system prompt the API adds
///   when tools or a structured-output format are present;
/// - a document costs [`crate::pdf::WORST_TOKENS_PER_PAGE`] per page; `document_pages` is the
///   number of pages of all the request's documents when the caller counted them, else each
///   document is taken at the API's maximum of [`crate::pdf::MAX_PAGES`];
/// - any other block carrying base64 data (an image) costs [`IMAGE_WORST`], its data not read
///   as text.
///
/// All of it is scaled by the largest tokenizer ratio of the catalog, since a fallback may send
/// the request to another model than the one it names.
pub fn worst_input_tokens(req: &MessagesRequest, document_pages: Option<u32>) -> u64 {
    let mut stripped = req.clone();
    let mut documents = 0u64;
    let mut images = 0u64;
    let mut strip = |c: &mut Content| {
        if let Content::Blocks(blocks) = c {
            for b in blocks.iter_mut() {
                match b {
                    InputBlock::Document { source, .. } => match source {
                        // Plain text is estimated as the text it is.
                        DocumentSource::Text { .. } => {}
                        DocumentSource::Base64 { data, .. } => {
                            documents += 1;
                            data.clear();
                        }
                        DocumentSource::File { .. } => documents += 1,
                    },
                    InputBlock::Other(v) => {
                        if let Some(data) = v.pointer_mut("/source/data") {
                            images += 1;
                            *data = serde_json::Value::Null;
                        }
                    }
                    InputBlock::Text { .. } => {}
                }
            }
        }
    };
    if let Some(system) = stripped.system.as_mut() {
        strip(system);
    }
    for m in stripped.messages.iter_mut() {
        strip(&mut m.content);
    }
    let json = serde_json::to_string(&stripped).unwrap_or_default();
    let hidden = if req.tools.is_some() || req.output_config.is_some() {
        HIDDEN_PROMPT
    } else {
        0
    };
    let pages = match document_pages {
        Some(p) => p as u64,
        None => documents * crate::pdf::MAX_PAGES as u64,
    };
    let base = estimate(&json) as u64
        + hidden
        + pages * crate::pdf::WORST_TOKENS_PER_PAGE
        + images * IMAGE_WORST;
    let permille = crate::models::CATALOG
        .iter()
        .map(|m| m.tokenizer_permille as u64)
        .chain([tokenizer_permille(&req.model)])
        .max()
        .unwrap_or(1_300);
    (base * permille).div_ceil(1_000)
}

/// The system prompt the API adds when `tools` are sent: the tool-use pricing page lists it per
/// model and `tool_choice`, 530 tokens at the most (docs.anthropic.com/en/docs/
/// tool-use-pricing-and-tokens); structured outputs are billed the same way. Rounded up.
pub const HIDDEN_PROMPT: u64 = 600;

/// An image block at its largest: the vision page bills about width × height / 750 tokens, an
/// image past 1.15 megapixels being scaled down first, so about 1,600 at most
/// (platform.claude.com/docs/en/build-with-claude/vision, "Calculate image costs"); the
/// figure is tripled for the higher-resolution image input of newer models.
pub const IMAGE_WORST: u64 = 5_000;

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

    #[test]
    fn the_worst_case_covers_the_text_estimate_tools_and_every_document_page() {
        let req = crate::feedback::request("claude-sonnet-5-5", "The app crashes on login.");
        let worst = worst_input_tokens(&req, None);
        assert!(worst > estimate_request(&req).unwrap() + HIDDEN_PROMPT);
        let pdf = crate::pdf::request(
            "claude-sonnet-5-5",
            crate::pdf::Template::Brief,
            String::new(),
        );
        let three = worst_input_tokens(&pdf, Some(3));
        let unknown = worst_input_tokens(&pdf, None);
        assert!(three >= 3 * crate::pdf::WORST_TOKENS_PER_PAGE);
        assert!(unknown >= crate::pdf::MAX_PAGES as u64 * crate::pdf::WORST_TOKENS_PER_PAGE);
        assert!(three < unknown);
    }

    #[test]
    fn base64_data_is_priced_as_a_page_or_an_image_never_as_text() {
        let big = "A".repeat(400_000);
        let doc = crate::pdf::request(
            "claude-sonnet-5-5",
            crate::pdf::Template::Brief,
            big.clone(),
        );
        let empty = crate::pdf::request(
            "claude-sonnet-5-5",
            crate::pdf::Template::Brief,
            String::new(),
        );
        assert_eq!(
            worst_input_tokens(&doc, Some(2)),
            worst_input_tokens(&empty, Some(2))
        );
        let mut img = crate::feedback::request("claude-haiku-4-5", "What is this?");
        img.messages[0].content = Content::Blocks(vec![InputBlock::Other(serde_json::json!({
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": big}
        }))]);
        let w = worst_input_tokens(&img, None);
        // The image at its worst, scaled by the tokenizer ratio — not 400,000 characters of text.
        assert!((IMAGE_WORST..2 * IMAGE_WORST).contains(&w), "{w}");
    }

    proptest! {
        #[test]
        fn the_worst_case_is_never_below_the_estimate(text in ".{1,400}") {
            let req = crate::feedback::request("claude-opus-5-5", &text);
            prop_assert!(worst_input_tokens(&req, None) >= estimate_request(&req).unwrap());
        }
    }

    proptest! {
        #[test]
        fn more_text_never_means_fewer_tokens(a in ".{0,200}", b in ".{0,200}") {
            let joined = format!("{a}{b}");
            prop_assert!(estimate(&joined) >= estimate(&a));
        }
    }
}
