//! What a paid answer means for its job. A 200 from the Messages API has been billed whether or
//! not it is usable, so it is never retried as if it were a network error: it completes the job,
//! or fails it once with the reason (its usage and cost recorded, the raw answer kept).
//!
//! The answer is read by content-block type ([`Message::text`]): thinking, tool and server-tool
//! blocks around the text are not the answer, and a block type added tomorrow changes nothing.

use crate::anthropic::{Message, StopReason, Usage};
use crate::feedback::{parse_analysis, Analysis};
use crate::money::UsdMicros;
use crate::outcome::Failure;
use crate::pdf::{parse_extraction, Extraction};
use crate::pricing::{cost_micros, Tier};
use crate::status::Kind;

/// Whether an answer carries something a job can use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Usable,
    /// Paid for, but nothing to keep: the reason goes on the failed row.
    Unusable(String),
}

/// Judges an answer by its stop reason and its text blocks: a refusal, or an answer with no text
/// at all (thinking used the whole `max_tokens`, the context window filled up, a paused turn) is
/// unusable. A text cut by `max_tokens` is usable as far as it goes (a prompt job keeps it; the
/// kinds that parse JSON find out for themselves).
pub fn judge(message: &Message) -> Verdict {
    let reason = message.stop_reason.as_ref();
    if reason == Some(&StopReason::Refusal) {
        let details = message
            .stop_details
            .as_ref()
            .map(|d| d.describe())
            .unwrap_or_default();
        return Verdict::Unusable(format!(
            "the model declined to answer (stop_reason \"refusal\"{details}); not retried"
        ));
    }
    if message.has_text() {
        return Verdict::Usable;
    }
    let thinking = message
        .content
        .iter()
        .any(|b| matches!(b.kind(), "thinking" | "redacted_thinking"));
    Verdict::Unusable(match reason {
        Some(StopReason::MaxTokens) if thinking => format!(
            "max_tokens ran out while the model was thinking: no answer text after {} output \
             tokens; thinking and the answer share max_tokens: ask for a larger max_tokens or a \
             lower output_config.effort",
            message.usage.output_tokens
        ),
        Some(StopReason::MaxTokens) => "max_tokens ran out before any answer text".into(),
        Some(StopReason::ModelContextWindowExceeded) => {
            "the model's context window filled up before any answer text".into()
        }
        Some(StopReason::PauseTurn) => {
            "the model paused its turn (a long server-tool run) before any answer text".into()
        }
        Some(other) => format!(
            "the answer has no text block (stop_reason \"{}\")",
            other.as_str()
        ),
        None => "the answer has no text block".into(),
    })
}

/// What a paid answer does to a job of `kind`.
#[derive(Debug, Clone, PartialEq)]
pub enum Settlement {
    /// Completed; `result` is the small structured result kept on the row (feedback, PDFs).
    Complete { result: Option<String> },
    /// Failed once, for this reason; the usage is still recorded.
    Fail { reason: String },
}

/// Decides the settlement of an answer for a job of `kind`: a usable answer completes a prompt
/// job as it is, and a feedback or PDF job once its JSON reads as an analysis or an extraction.
pub fn settle(kind: Kind, message: &Message) -> Settlement {
    if let Verdict::Unusable(reason) = judge(message) {
        return Settlement::Fail { reason };
    }
    let text = message.text();
    let structured = match kind {
        Kind::Prompt => return Settlement::Complete { result: None },
        Kind::Feedback => parse_analysis(&text).map(|a: Analysis| serde_json::to_string(&a)),
        Kind::Pdf => parse_extraction(&text).map(|e: Extraction| serde_json::to_string(&e)),
    };
    match structured {
        Ok(json) => Settlement::Complete { result: json.ok() },
        Err(reason) => Settlement::Fail { reason },
    }
}

/// Everything a paid answer writes on its job's row: the end it reaches, its usage and cost
/// (the model that answered, at the rates in force when it completed), and what is kept on the
/// row besides the result in R2.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    pub end: End,
    /// `None` only for an undecodable answer whose usage cannot be read either.
    pub usage: Option<Usage>,
    /// `None` when the model that answered has no price in the catalog.
    pub cost_micros: Option<UsdMicros>,
    /// The answer's text, kept on the row for feedback (it is short); the others only in R2.
    pub raw_text: Option<String>,
    /// The model that answered (after a fallback, not the one asked for).
    pub answered_by: String,
    /// The route that answered (`crate::provider::Route::settled`).
    pub route: crate::models::providers::Provider,
}

/// How a settled job ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// Completed, with the small structured result kept on the row (feedback, PDFs).
    Complete { result: Option<String> },
    /// Failed once after a paid call.
    Fail(Failure),
}

/// Settles a paid answer for a job of `kind`, billed at `tier`, at `now`.
pub fn settle_answer(kind: Kind, message: &Message, tier: Tier, now: i64) -> Settled {
    let end = match settle(kind, message) {
        Settlement::Complete { result } => End::Complete { result },
        Settlement::Fail { reason } => End::Fail(Failure::new(reason)),
    };
    let text = message.text();
    Settled {
        end,
        usage: Some(message.usage),
        cost_micros: answer_cost(message, tier, now),
        raw_text: (kind == Kind::Feedback && !text.is_empty()).then_some(text),
        answered_by: message.model.clone(),
        route: Default::default(),
    }
}

/// What an answer costs: its usage at the model's price, or nothing for a refusal declined
/// before any output (release notes, 2026-06-02: "you are no longer billed for a request when
/// it returns `stop_reason: "refusal"` without Claude having generated any output"; read
/// 2026-12-06).
pub fn answer_cost(message: &Message, tier: Tier, now: i64) -> Option<UsdMicros> {
    if declined_before_output(message) {
        return Some(UsdMicros::ZERO);
    }
    cost_micros(&message.model, &message.usage, tier, now)
}

/// A refusal with no output token: declined before the model wrote anything.
pub fn declined_before_output(message: &Message) -> bool {
    message.stop_reason == Some(StopReason::Refusal) && message.usage.output_tokens == 0
}

/// Settles a 2xx answer that could not be decoded: paid for, so it fails once, with whatever
/// usage can be read from the raw body, charged to the model it was asked of.
pub fn settle_undecodable(model: &str, reason: &str, raw: &str, now: i64) -> Settled {
    let usage = Usage::from_raw_answer(raw);
    Settled {
        end: End::Fail(Failure::new(reason)),
        cost_micros: usage
            .as_ref()
            .and_then(|u| cost_micros(model, u, Tier::Standard, now)),
        usage,
        raw_text: None,
        answered_by: model.to_owned(),
        route: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anthropic::{KnownBlock, OutputBlock, Role};

    fn message(content: Vec<OutputBlock>, stop: &str) -> Message {
        Message {
            id: "msg_1".into(),
            kind: "message".into(),
            role: Role::Assistant,
            content,
            model: "claude-sonnet-5-5".into(),
            stop_reason: Some(StopReason::from(stop.to_owned())),
            stop_sequence: None,
            stop_details: None,
            usage: Usage {
                input_tokens: 10,
                output_tokens: 64,
                ..Usage::default()
            },
        }
    }

    fn thinking() -> OutputBlock {
        OutputBlock::Known(KnownBlock::Thinking {
            thinking: "Let me think.".into(),
            signature: "sig".into(),
        })
    }

    #[test]
    fn a_refusal_is_unusable_even_with_text() {
        let m = message(
            vec![OutputBlock::text("I can't help with that.")],
            "refusal",
        );
        assert!(matches!(judge(&m), Verdict::Unusable(r) if r.contains("refusal")));
        assert!(matches!(settle(Kind::Prompt, &m), Settlement::Fail { .. }));
    }

    #[test]
    fn a_refusal_before_any_output_is_not_billed_and_one_after_is() {
        let mut declined = message(Vec::new(), "refusal");
        declined.usage.output_tokens = 0;
        let now = crate::clock::date_ms(2026, 12, 6).unwrap();
        let settled = settle_answer(Kind::Prompt, &declined, Tier::Standard, now);
        assert_eq!(settled.cost_micros, Some(UsdMicros::ZERO));
        assert!(matches!(settled.end, End::Fail(_)));
        // With output, the refusal is billed as its usage says.
        let refused = message(vec![OutputBlock::text("I can't")], "refusal");
        let billed = settle_answer(Kind::Prompt, &refused, Tier::Standard, now);
        assert!(
            billed.cost_micros.is_some_and(|c| c > UsdMicros::ZERO),
            "{billed:?}"
        );
        // Any other answer with no output is billed for its input.
        let mut empty = message(Vec::new(), "end_turn");
        empty.usage.output_tokens = 0;
        let input_only = settle_answer(Kind::Prompt, &empty, Tier::Standard, now);
        assert!(input_only.cost_micros.is_some_and(|c| c > UsdMicros::ZERO));
    }

    #[test]
    fn a_refusal_keeps_its_stop_details_in_the_reason() {
        let mut m = message(Vec::new(), "refusal");
        m.stop_details = serde_json::from_value(serde_json::json!({
            "type": "refusal", "category": "cyber", "explanation": "Declined by a classifier."
        }))
        .unwrap();
        assert_eq!(
            judge(&m),
            Verdict::Unusable(
                "the model declined to answer (stop_reason \"refusal\", category \"cyber\": \
                 Declined by a classifier.); not retried"
                    .into()
            )
        );
        // Both may be null.
        m.stop_details = serde_json::from_value(
            serde_json::json!({"type": "refusal", "category": null, "explanation": null}),
        )
        .unwrap();
        assert_eq!(
            judge(&m),
            Verdict::Unusable(
                "the model declined to answer (stop_reason \"refusal\"); not retried".into()
            )
        );
    }

    #[test]
    fn a_thinking_only_answer_cut_by_max_tokens_fails_with_the_reason() {
        let m = message(vec![thinking()], "max_tokens");
        match settle(Kind::Prompt, &m) {
            Settlement::Fail { reason } => {
                assert!(reason.contains("thinking"), "{reason}");
                assert!(reason.contains("64 output tokens"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_text_after_thinking_is_the_answer() {
        let m = message(
            vec![thinking(), OutputBlock::text("The answer.")],
            "end_turn",
        );
        assert_eq!(judge(&m), Verdict::Usable);
        assert_eq!(
            settle(Kind::Prompt, &m),
            Settlement::Complete { result: None }
        );
    }

    #[test]
    fn a_truncated_prompt_answer_is_kept_and_truncated_json_fails_its_parse() {
        let m = message(
            vec![OutputBlock::text("{\"sentiment\": \"neg")],
            "max_tokens",
        );
        assert_eq!(judge(&m), Verdict::Usable);
        assert_eq!(
            settle(Kind::Prompt, &m),
            Settlement::Complete { result: None }
        );
        assert!(matches!(
            settle(Kind::Feedback, &m),
            Settlement::Fail { .. }
        ));
    }

    #[test]
    fn every_no_text_stop_has_its_own_reason() {
        for (stop, needle) in [
            ("model_context_window_exceeded", "context window"),
            ("pause_turn", "paused"),
            ("end_turn", "no text block"),
            ("a_reason_from_next_year", "a_reason_from_next_year"),
        ] {
            let m = message(vec![], stop);
            assert!(
                matches!(judge(&m), Verdict::Unusable(ref r) if r.contains(needle)),
                "{stop}: {:?}",
                judge(&m)
            );
        }
    }

    #[test]
    fn a_feedback_answer_becomes_its_analysis() {
        let m = message(
            vec![OutputBlock::text(
                r#"{"sentiment":"negative","category":"bug","urgency":"high","summary":"Crash."}"#,
            )],
            "end_turn",
        );
        match settle(Kind::Feedback, &m) {
            Settlement::Complete { result: Some(json) } => assert!(json.contains("\"bug\"")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn feedback_keeps_its_text_on_the_row_and_is_priced_by_the_model_that_answered() {
        let m = message(
            vec![OutputBlock::text(
                r#"{"sentiment":"negative","category":"bug","urgency":"high","summary":"Crash."}"#,
            )],
            "end_turn",
        );
        let s = settle_answer(Kind::Feedback, &m, Tier::Standard, 1_796_083_200_000);
        assert!(matches!(s.end, End::Complete { result: Some(_) }));
        assert!(s.raw_text.as_deref().is_some_and(|t| t.contains("Crash.")));
        assert_eq!(s.answered_by, "claude-sonnet-5-5");
        assert!(s.cost_micros.is_some_and(|c| c.micros() > 0));
        let p = settle_answer(Kind::Prompt, &m, Tier::Standard, 1_796_083_200_000);
        assert_eq!(p.raw_text, None, "prompt answers live in R2 only");
    }

    #[test]
    fn an_unusable_answer_fails_once_with_its_usage() {
        let m = message(vec![thinking()], "max_tokens");
        let s = settle_answer(Kind::Prompt, &m, Tier::Batch, 1_796_083_200_000);
        assert!(matches!(s.end, End::Fail(ref f) if f.reason.contains("thinking")));
        assert_eq!(s.usage.map(|u| u.output_tokens), Some(64));
    }

    #[test]
    fn an_undecodable_answer_is_charged_as_far_as_its_usage_reads() {
        let raw = r#"{"usage":{"input_tokens":100,"output_tokens":20},"content":7}"#;
        let s = settle_undecodable("claude-sonnet-5-5", "undecodable", raw, 1_796_083_200_000);
        assert!(matches!(s.end, End::Fail(_)));
        let u = s.usage.unwrap();
        assert_eq!((u.input_tokens, u.output_tokens), (100, 20));
        assert!(s.cost_micros.is_some());
        let none = settle_undecodable("claude-sonnet-5-5", "undecodable", "<html>", 0);
        assert_eq!((none.usage, none.cost_micros), (None, None));
    }
}
