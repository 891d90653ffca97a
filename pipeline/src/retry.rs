//! What a consumer does after a call to Claude: the decision is made here, the Worker only
//! carries it out (ack, retry with a delay, or fail the job).

use crate::ops::failures::{ErrorClass, Failure};
use crate::status::Lane;
use crate::timing::Timing;

/// How a call to the Anthropic API ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallOutcome {
    /// A 2xx answer.
    Success,
    /// An error answer with its status, the API's error message and `retry-after` seconds.
    Http {
        status: u16,
        message: String,
        retry_after_s: Option<u32>,
    },
    /// Our own timeout fired before the API answered.
    Timeout,
    /// The request could not be sent, or no answer arrived.
    Network(String),
    /// A 2xx answer whose body could not be decoded. It was paid for: the job fails once with
    /// the reason and the raw body is kept; it is never retried as a network error.
    Undecodable { reason: String, raw: String },
}

/// What the consumer does with the queue message and the job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Done (the result is stored): acknowledge.
    Ack,
    /// A failure worth another try: the job waits with `reason` on its row, and the message is
    /// retried after `delay_s` (0 = the queue's own retry).
    Retry { delay_s: u32, reason: String },
    /// A permanent failure: the job is `failed` with this reason; acknowledge.
    Fail(Failure),
    /// Worth another try, but the job's deliveries are spent: it is dead-lettered now.
    DeadLetter(Failure),
}

/// Deliveries a job gets on its lane before it is dead-lettered: the lane consumer's
/// `max_retries` in wrangler.toml, plus the first (xtask tests that the two agree). Counted on
/// the job (its `attempts`), not on the message, so a message lost in a restart and sent again
/// by the reconciler does not start a fresh count.
pub fn max_deliveries(lane: Lane) -> u32 {
    match lane {
        Lane::High => 6,
        Lane::Bulk => 4,
    }
}

/// After delivery `attempt` of a job on `lane` failed with a retryable error: true when it was
/// the last one the job gets (the job is dead-lettered now rather than retried).
pub fn retries_exhausted(lane: Lane, attempt: u32) -> bool {
    attempt >= max_deliveries(lane)
}

/// Errors that the same request will always get again: retrying only pays again or wastes time.
pub fn is_permanent(status: u16) -> bool {
    matches!(status, 400 | 401 | 403 | 404 | 413)
}

/// Errors that go away by themselves: retried with backoff.
pub fn is_transient(status: u16) -> bool {
    matches!(status, 408 | 409 | 429 | 500 | 502 | 503 | 504 | 529)
}

/// Answers that say the model is overloaded or failing: two in a row switch to the next model
/// of the fallback chain.
pub fn is_overload(outcome: &CallOutcome) -> bool {
    matches!(outcome, CallOutcome::Http { status, .. } if *status == 529 || (500..600).contains(status))
}

/// Decides what to do after delivery `attempt` (the first delivery is 1) of a job on `lane`
/// ended with `outcome`: permanent errors fail the job; transient ones and timeouts back off (or
/// wait the server's `retry-after` when longer); a 429 without `retry-after` waits the cap (and
/// [`is_spend_limit`] raises the alert); anything else is a plain retry. A retry the job has no
/// delivery left for dead-letters it instead.
pub fn decide(outcome: &CallOutcome, attempt: u32, lane: Lane, timing: &Timing) -> Decision {
    let delay_s = match outcome {
        CallOutcome::Success => return Decision::Ack,
        CallOutcome::Http { status, .. } if is_permanent(*status) => {
            return Decision::Fail(Failure::of_outcome(outcome))
        }
        CallOutcome::Undecodable { .. } => return Decision::Fail(Failure::of_outcome(outcome)),
        CallOutcome::Http {
            status: 429,
            retry_after_s: None,
            ..
        } => timing.backoff_cap_s,
        CallOutcome::Http {
            status,
            retry_after_s,
            ..
        } if is_transient(*status) => timing.backoff_s(attempt, *retry_after_s),
        CallOutcome::Http { .. } => 0,
        CallOutcome::Timeout | CallOutcome::Network(_) => timing.backoff_s(attempt, None),
    };
    if retries_exhausted(lane, attempt) {
        // The job's budget is spent even if this message's is not (a message re-sent by the
        // reconciler after a restart counts from one again).
        return Decision::DeadLetter(Failure {
            reason: format!(
                "retries exhausted after {attempt} attempts; the last: {}",
                describe(outcome)
            ),
            class: ErrorClass::of_outcome(outcome),
        });
    }
    Decision::Retry {
        delay_s,
        reason: format!(
            "attempt {attempt} failed, retrying in {delay_s} s: {}",
            describe(outcome)
        ),
    }
}

/// A 429 without `retry-after` is a spend limit, not a rate limit: an operator must hear of it.
pub fn is_spend_limit(outcome: &CallOutcome) -> bool {
    matches!(
        outcome,
        CallOutcome::Http {
            status: 429,
            retry_after_s: None,
            ..
        }
    )
}

/// The reason a job dead-lettered by the queue itself (its message's retries ran out) ends with:
/// the last retry's reason, restated as the end of the road.
pub fn dead_letter_reason(last_error: Option<&str>, attempts: u32) -> String {
    let Some(last) = last_error else {
        return "retries exhausted".into();
    };
    let retrying = last.strip_prefix("attempt ").and_then(|rest| {
        let (_, after) = rest.split_once(" failed, retrying in ")?;
        let (_, cause) = after.split_once(" s: ")?;
        Some(cause)
    });
    match retrying {
        Some(cause) => format!("retries exhausted after {attempts} attempts; the last: {cause}"),
        None => last.to_owned(),
    }
}

/// The model to ask after `overloads` consecutive overload answers: the requested one, or after
/// every two in a row the next one of `chain` (e.g. `["claude-sonnet-5-5", "claude-haiku-5-5"]`)
/// starting from the requested model; the last model of the chain is kept.
pub fn model_for<'a>(requested: &'a str, overloads: u32, chain: &'a [String]) -> &'a str {
    let steps = (overloads / 2) as usize;
    match chain.iter().position(|m| m == requested) {
        Some(i) if steps > 0 => chain[(i + steps).min(chain.len() - 1)].as_str(),
        _ => requested,
    }
}

/// A human reason for a transient failure, kept on the row while the job waits for its retry.
pub fn describe(outcome: &CallOutcome) -> String {
    match outcome {
        CallOutcome::Success => "ok".into(),
        CallOutcome::Http {
            status, message, ..
        } => format!("Anthropic API {status}: {message}"),
        CallOutcome::Timeout => "the call to the Anthropic API timed out".into(),
        CallOutcome::Network(e) => format!("network error calling the Anthropic API: {e}"),
        CallOutcome::Undecodable { reason, .. } => reason.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn http(status: u16, retry_after_s: Option<u32>) -> CallOutcome {
        CallOutcome::Http {
            status,
            message: "m".into(),
            retry_after_s,
        }
    }

    /// The decision of a first delivery on the high lane.
    fn first(outcome: &CallOutcome, t: &Timing) -> Decision {
        decide(outcome, 1, Lane::High, t)
    }

    fn delay(d: &Decision) -> Option<u32> {
        match d {
            Decision::Retry { delay_s, .. } => Some(*delay_s),
            _ => None,
        }
    }

    // The seed's non-negotiable three: success → ack; 429 → retry, no ack; 400 → failed + ack.
    #[test]
    fn success_is_acked_without_a_retry() {
        assert_eq!(
            first(&CallOutcome::Success, &Timing::production()),
            Decision::Ack
        );
    }

    #[test]
    fn a_429_is_retried_not_acked() {
        assert!(matches!(
            first(&http(429, Some(30)), &Timing::production()),
            Decision::Retry { .. }
        ));
    }

    #[test]
    fn a_400_fails_the_row_and_acks() {
        assert_eq!(
            first(&http(400, None), &Timing::production()),
            Decision::Fail(Failure {
                reason: "Anthropic API 400: m".into(),
                class: ErrorClass::InvalidRequest
            })
        );
    }

    #[test]
    fn a_paid_answer_that_cannot_be_decoded_fails_once_and_is_never_retried() {
        let outcome = CallOutcome::Undecodable {
            reason: "the answer could not be decoded: missing field `usage`".into(),
            raw: "{}".into(),
        };
        for attempt in 1..=6 {
            assert!(
                matches!(
                    decide(&outcome, attempt, Lane::High, &Timing::production()),
                    Decision::Fail(Failure { ref reason, .. })
                        if reason == "the answer could not be decoded: missing field `usage`"
                ),
                "{attempt}"
            );
        }
        assert!(!is_overload(&outcome));
    }

    #[test]
    fn permanent_errors_fail_the_job_without_retrying() {
        for s in [400, 401, 403, 404, 413] {
            assert!(
                matches!(first(&http(s, None), &Timing::test()), Decision::Fail(_)),
                "{s}"
            );
        }
    }

    #[test]
    fn transient_errors_and_timeouts_are_retried_with_backoff() {
        let t = Timing::production();
        for s in [408, 409, 500, 502, 503, 504, 529] {
            assert_eq!(
                delay(&decide(&http(s, None), 2, Lane::High, &t)),
                Some(120),
                "{s}"
            );
        }
        assert_eq!(delay(&first(&CallOutcome::Timeout, &t)), Some(60));
        assert_eq!(
            delay(&first(&CallOutcome::Network("reset".into()), &t)),
            Some(60)
        );
    }

    #[test]
    fn a_retry_keeps_its_reason_on_the_row() {
        assert_eq!(
            first(&http(529, None), &Timing::production()),
            Decision::Retry {
                delay_s: 60,
                reason: "attempt 1 failed, retrying in 60 s: Anthropic API 529: m".into()
            }
        );
    }

    #[test]
    fn a_429_with_retry_after_is_retried_after_that_delay_when_longer() {
        let t = Timing::production();
        assert_eq!(delay(&first(&http(429, Some(300)), &t)), Some(300));
        assert_eq!(delay(&first(&http(429, Some(5)), &t)), Some(60));
        assert!(!is_spend_limit(&http(429, Some(5))));
    }

    #[test]
    fn a_429_without_retry_after_is_a_spend_limit_it_waits_the_cap_and_alerts() {
        let t = Timing::production();
        assert_eq!(delay(&first(&http(429, None), &t)), Some(600));
        assert!(is_spend_limit(&http(429, None)));
    }

    #[test]
    fn any_other_error_is_a_plain_retry_towards_the_dlq() {
        for s in [402, 418, 422, 501] {
            assert_eq!(
                delay(&first(&http(s, None), &Timing::production())),
                Some(0),
                "{s}"
            );
        }
    }

    #[test]
    fn two_overloads_in_a_row_fall_back_to_the_next_model() {
        let chain = vec![
            "claude-sonnet-5-5".to_string(),
            "claude-haiku-5-5".to_string(),
        ];
        assert_eq!(
            model_for("claude-sonnet-5-5", 0, &chain),
            "claude-sonnet-5-5"
        );
        assert_eq!(
            model_for("claude-sonnet-5-5", 1, &chain),
            "claude-sonnet-5-5"
        );
        assert_eq!(
            model_for("claude-sonnet-5-5", 2, &chain),
            "claude-haiku-5-5"
        );
        assert_eq!(
            model_for("claude-sonnet-5-5", 9, &chain),
            "claude-haiku-5-5"
        );
        assert_eq!(
            model_for("claude-opus-5", 4, &chain),
            "claude-opus-5",
            "not in the chain"
        );
        assert!(is_overload(&http(529, None)) && is_overload(&http(503, None)));
        assert!(!is_overload(&http(429, None)));
    }

    #[test]
    fn the_retry_budget_is_the_jobs_whatever_happened_to_its_messages() {
        assert!(!retries_exhausted(Lane::High, 5));
        assert!(retries_exhausted(Lane::High, 6));
        // A seventh delivery (a message re-sent by the reconciler) is exhausted at once.
        assert!(retries_exhausted(Lane::High, 7));
        assert!(!retries_exhausted(Lane::Bulk, 3));
        assert!(retries_exhausted(Lane::Bulk, 4));
    }

    #[test]
    fn the_delivery_that_spends_the_budget_dead_letters_with_the_last_cause() {
        let t = Timing::production();
        assert_eq!(
            decide(&http(529, None), 6, Lane::High, &t),
            Decision::DeadLetter(Failure {
                reason: "retries exhausted after 6 attempts; the last: Anthropic API 529: m".into(),
                class: ErrorClass::Overloaded
            })
        );
        assert!(matches!(
            decide(&CallOutcome::Timeout, 4, Lane::Bulk, &t),
            Decision::DeadLetter(Failure {
                class: ErrorClass::Timeout,
                ..
            })
        ));
        // A permanent error on the last delivery is still a plain failure.
        assert!(matches!(
            decide(&http(400, None), 6, Lane::High, &t),
            Decision::Fail(_)
        ));
    }

    #[test]
    fn a_queue_dead_letter_restates_the_last_retry_as_the_end() {
        assert_eq!(
            dead_letter_reason(
                Some("attempt 3 failed, retrying in 4 s: Anthropic API 529: Overloaded"),
                3
            ),
            "retries exhausted after 3 attempts; the last: Anthropic API 529: Overloaded"
        );
        assert_eq!(dead_letter_reason(Some("boom"), 2), "boom");
        assert_eq!(dead_letter_reason(None, 2), "retries exhausted");
    }

    fn outcome() -> impl Strategy<Value = CallOutcome> {
        // Messages free of the words the text classifier looks for.
        let message = prop::sample::select(vec!["m", "Overloaded", "boom", "bad things"]);
        prop_oneof![
            (300u16..700, message, proptest::option::of(0u32..100)).prop_map(
                |(status, m, retry_after_s)| CallOutcome::Http {
                    status,
                    message: m.into(),
                    retry_after_s
                }
            ),
            Just(CallOutcome::Timeout),
            Just(CallOutcome::Network("connection reset".into())),
        ]
    }

    proptest! {
        #[test]
        fn the_class_taken_from_the_outcome_is_the_class_its_text_reads_as(o in outcome(), attempt in 1u32..8) {
            prop_assert_eq!(ErrorClass::of_outcome(&o), ErrorClass::of(&describe(&o)));
            match decide(&o, attempt, Lane::High, &Timing::production()) {
                Decision::Fail(f) | Decision::DeadLetter(f) => {
                    prop_assert_eq!(f.class, ErrorClass::of(&f.reason));
                }
                Decision::Retry { reason, .. } => {
                    prop_assert_eq!(ErrorClass::of(&reason), ErrorClass::of_outcome(&o));
                }
                Decision::Ack => prop_assert!(false, "an error is never acked"),
            }
        }
    }
}
