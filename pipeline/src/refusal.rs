//! Refusal fallback (issue 33, part 3). A `refusal` stop reason is the model declining the
//! request; the docs' advice is to read `stop_details` and retry on a fallback model
//! (platform.claude.com/docs/en/build-with-claude/refusals-and-fallback, read 2026-12-06).
//!
//! A job may name its own `fallback_model`; an operator may name one per model
//! (`REFUSAL_FALLBACKS`, `model=fallback` pairs). On a refusal the job is retried once, on the
//! fallback: the refused attempt is billed as its usage says (nothing when it was declined
//! before any output, see [`crate::answer::answer_cost`]) and kept on the row as a
//! [`crate::dto::RefusalView`] — its model, `stop_details` and spend — so that the job page, the usage
//! rollups (under the model that refused) and the caps all count it. A second refusal, or one
//! with no fallback, fails the job as before.

use crate::anthropic::{Message, StopReason};

/// The operator's fallback per model (`REFUSAL_FALLBACKS`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fallbacks {
    pairs: Vec<(String, String)>,
}

impl Fallbacks {
    /// Reads `model=fallback` pairs separated by commas, checked against the catalog at
    /// `now_ms`: a pair naming an unknown or retired model, or a model as its own fallback, is
    /// left out with a sentence saying why.
    pub fn parse(spec: &str, now_ms: i64) -> (Fallbacks, Vec<String>) {
        let mut problems = Vec::new();
        let mut pairs = Vec::new();
        for pair in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((from, to)) = pair.split_once('=').map(|(a, b)| (a.trim(), b.trim())) else {
                problems.push(format!(
                    "REFUSAL_FALLBACKS: {pair:?} is not model=fallback; it is left out"
                ));
                continue;
            };
            let unusable = [from, to].into_iter().find_map(|id| {
                crate::models::admit(id, now_ms)
                    .err()
                    .map(|_| crate::models::standing(id, now_ms).unwrap_or_default())
            });
            if let Some(why) = unusable {
                problems.push(format!("REFUSAL_FALLBACKS: {why}; {pair:?} is left out"));
            } else if from == to {
                problems.push(format!(
                    "REFUSAL_FALLBACKS: {from} cannot be its own fallback; it is left out"
                ));
            } else {
                pairs.push((from.to_owned(), to.to_owned()));
            }
        }
        (Fallbacks { pairs }, problems)
    }

    /// The operator's fallback for answers refused by `model`.
    pub fn for_model(&self, model: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(from, _)| from == model)
            .map(|(_, to)| to.as_str())
    }
}

/// What a refusal does to its job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AfterRefusal {
    /// Retried once, on this model.
    FallBack { to: String },
    /// Failed, as any unusable answer.
    Fail,
}

/// Decides what an answer of `model` does when it is a refusal (`None` for any other answer):
/// the job's own fallback first, else the operator's for that model; never the model that
/// refused, and never a second time (`fell_back`: the job already has a refused attempt).
pub fn after_answer(
    message: &Message,
    model: &str,
    asked: Option<&str>,
    operator: &Fallbacks,
    fell_back: bool,
) -> Option<AfterRefusal> {
    if message.stop_reason != Some(StopReason::Refusal) {
        return None;
    }
    let to = asked
        .or_else(|| operator.for_model(model))
        .filter(|to| *to != model && *to != message.model);
    Some(match to {
        Some(to) if !fell_back => AfterRefusal::FallBack { to: to.to_owned() },
        _ => AfterRefusal::Fail,
    })
}

/// Where a job's refused answer is kept: apart from `results/<id>`, which a later delivery of
/// the job reads as "answered, settle without calling".
pub fn refused_key(job_id: &str) -> String {
    format!("refused/{job_id}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anthropic::{StopDetails, Usage};
    use crate::dto::{RefusalView, Spend};

    const NOW: i64 = 1_796_000_000_000; // 2026-12

    fn refusal(model: &str) -> Message {
        let mut m: Message = serde_json::from_value(serde_json::json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": "refusal",
            "usage": {"input_tokens": 10, "output_tokens": 0}
        }))
        .unwrap();
        m.usage = Usage {
            input_tokens: 10,
            ..Usage::default()
        };
        m
    }

    #[test]
    fn pairs_name_known_models_and_never_a_model_itself() {
        let (f, problems) = Fallbacks::parse(
            "claude-fable-5-2=claude-opus-5-5, claude-nope-1=claude-opus-5-5, \
             claude-opus-5-5=claude-opus-5-5, junk",
            NOW,
        );
        assert_eq!(f.for_model("claude-fable-5-2"), Some("claude-opus-5-5"));
        assert_eq!(f.for_model("claude-opus-5-5"), None);
        assert_eq!(problems.len(), 3, "{problems:?}");
    }

    #[test]
    fn the_jobs_own_fallback_comes_first_then_the_operators_once() {
        let (ops, _) = Fallbacks::parse("claude-fable-5-2=claude-opus-5-5", NOW);
        let m = refusal("claude-fable-5-2");
        let own = after_answer(
            &m,
            "claude-fable-5-2",
            Some("claude-sonnet-5-5"),
            &ops,
            false,
        );
        assert_eq!(
            own,
            Some(AfterRefusal::FallBack {
                to: "claude-sonnet-5-5".into()
            })
        );
        let operator = after_answer(&m, "claude-fable-5-2", None, &ops, false);
        assert_eq!(
            operator,
            Some(AfterRefusal::FallBack {
                to: "claude-opus-5-5".into()
            })
        );
        // Once only.
        let again = after_answer(&m, "claude-fable-5-2", None, &ops, true);
        assert_eq!(again, Some(AfterRefusal::Fail));
        // No fallback for that model.
        let none = after_answer(
            &refusal("claude-haiku-5-5"),
            "claude-haiku-5-5",
            None,
            &ops,
            false,
        );
        assert_eq!(none, Some(AfterRefusal::Fail));
    }

    #[test]
    fn only_a_refusal_is_decided_here_and_never_onto_the_model_that_refused() {
        let ops = Fallbacks::default();
        let mut done = refusal("claude-opus-5-5");
        done.stop_reason = Some(StopReason::EndTurn);
        assert_eq!(
            after_answer(&done, "claude-opus-5-5", None, &ops, false),
            None
        );
        let same = after_answer(
            &refusal("claude-opus-5-5"),
            "claude-opus-5-5",
            Some("claude-opus-5-5"),
            &ops,
            false,
        );
        assert_eq!(same, Some(AfterRefusal::Fail));
    }

    #[test]
    fn a_refusal_view_reads_back_with_its_spend_flattened() {
        let v = RefusalView {
            model: "claude-fable-5-2".into(),
            n: 1,
            at: NOW,
            stop_details: None,
            fallback_model: "claude-opus-5-5".into(),
            result_key: refused_key("j1"),
            spend: Spend {
                input_tokens: 10,
                ..Spend::default()
            },
        };
        assert_eq!(
            v.describe(),
            "refused by claude-fable-5-2; retried once on claude-opus-5-5"
        );
        let with_details = RefusalView {
            stop_details: Some(StopDetails {
                kind: "refusal".into(),
                category: Some("cyber".into()),
                explanation: Some("Declined by a classifier.".into()),
            }),
            ..v.clone()
        };
        assert_eq!(
            with_details.describe(),
            "refused by claude-fable-5-2, category \"cyber\": Declined by a classifier; \
             retried once on claude-opus-5-5"
        );
        let json = serde_json::to_value(&v).unwrap();
        assert_eq!(json["input_tokens"], 10);
        assert_eq!(json["cost_micros"], 0);
        assert_eq!(serde_json::from_value::<RefusalView>(json).unwrap(), v);
    }
}
