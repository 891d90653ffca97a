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
