//! Token estimation from text, for budgets before a call and for the simulator's usage figures.
//!
//! Claude's tokenizer is not public; about 3.5 characters per token for English prose is the
//! documented rule of thumb. We count Unicode scalar values, round up, and never answer 0 for
//! non-empty text, so an estimate is never optimistic about an empty-looking request.

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

    proptest! {
        #[test]
        fn more_text_never_means_fewer_tokens(a in ".{0,200}", b in ".{0,200}") {
            let joined = format!("{a}{b}");
            prop_assert!(estimate(&joined) >= estimate(&a));
        }
    }
}
