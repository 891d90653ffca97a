//! What a consumer does after a call to Claude: the decision is made here, the Worker only
//! carries it out (ack, retry with a delay, or fail the job).

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

/// What the consumer does with the queue message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Done (the result is stored): acknowledge.
    Ack,
    /// A failure worth another try: retry the message after this delay (0 = the queue's
    /// own retry). The queue dead-letters it once its retries are exhausted.
    Retry {
        delay_s: u32,
        /// Raise an alert: a 429 without `retry-after` means a spend limit, not a rate limit.
        alert: bool,
    },
    /// A permanent failure: mark the job `failed` with this reason and acknowledge.
    Fail { reason: String },
}

/// Deliveries a job gets on its lane before it is dead-lettered: the lane consumer's
/// `max_retries` in wrangler.toml, plus the first (xtask tests that the two agree). Counted on
/// the job (its `attempts`), not on the message, so a message lost in a restart and sent again
/// by the reconciler does not start a fresh count.
pub fn max_deliveries(lane: crate::status::Lane) -> u32 {
    match lane {
        crate::status::Lane::High => 6,
        crate::status::Lane::Bulk => 4,
    }
}

/// After delivery `attempt` of a job on `lane` failed with a retryable error: true when it was
/// the last one the job gets (the job is dead-lettered now rather than retried).
pub fn retries_exhausted(lane: crate::status::Lane, attempt: u32) -> bool {
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

/// Decides what to do after delivery `attempt` (the first delivery is 1) ended with `outcome`:
/// permanent errors fail the job; transient ones and timeouts back off (or wait the server's
/// `retry-after` when longer); a 429 without `retry-after` waits the cap and alerts; anything
/// else is a plain retry, so `max_retries` takes it to the dead-letter queue.
pub fn decide(outcome: &CallOutcome, attempt: u32, timing: &Timing) -> Decision {
    match outcome {
        CallOutcome::Success => Decision::Ack,
        CallOutcome::Http {
            status, message, ..
        } if is_permanent(*status) => Decision::Fail {
            reason: format!("Anthropic API {status}: {message}"),
        },
        CallOutcome::Http {
            status: 429,
            retry_after_s: None,
            ..
        } => Decision::Retry {
            delay_s: timing.backoff_cap_s,
            alert: true,
        },
        CallOutcome::Http {
            status,
            retry_after_s,
            ..
        } if is_transient(*status) => Decision::Retry {
            delay_s: timing.backoff_s(attempt, *retry_after_s),
            alert: false,
        },
        CallOutcome::Http { .. } => Decision::Retry {
            delay_s: 0,
            alert: false,
        },
        CallOutcome::Undecodable { reason, .. } => Decision::Fail {
            reason: reason.clone(),
        },
        CallOutcome::Timeout | CallOutcome::Network(_) => Decision::Retry {
            delay_s: timing.backoff_s(attempt, None),
            alert: false,
        },
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

    fn http(status: u16, retry_after_s: Option<u32>) -> CallOutcome {
        CallOutcome::Http {
            status,
            message: "m".into(),
            retry_after_s,
        }
    }

    fn retry(delay_s: u32) -> Decision {
        Decision::Retry {
            delay_s,
            alert: false,
        }
    }

    // The seed's non-negotiable three: success → ack; 429 → retry, no ack; 400 → failed + ack.
    #[test]
    fn success_is_acked_without_a_retry() {
        assert_eq!(
            decide(&CallOutcome::Success, 1, &Timing::production()),
            Decision::Ack
        );
    }

    #[test]
    fn a_429_is_retried_not_acked() {
        assert!(matches!(
            decide(&http(429, Some(30)), 1, &Timing::production()),
            Decision::Retry { .. }
        ));
    }

    #[test]
    fn a_400_fails_the_row_and_acks() {
        assert!(matches!(
            decide(&http(400, None), 1, &Timing::production()),
            Decision::Fail { .. }
        ));
    }

    #[test]
    fn a_paid_answer_that_cannot_be_decoded_fails_once_and_is_never_retried() {
        let outcome = CallOutcome::Undecodable {
            reason: "the answer could not be decoded: missing field `usage`".into(),
            raw: "{}".into(),
        };
        for attempt in 1..=6 {
            assert_eq!(
                decide(&outcome, attempt, &Timing::production()),
                Decision::Fail {
                    reason: "the answer could not be decoded: missing field `usage`".into()
                }
            );
        }
        assert!(!is_overload(&outcome));
    }

    #[test]
    fn permanent_errors_fail_the_job_without_retrying() {
        for s in [400, 401, 403, 404, 413] {
            assert!(
                matches!(
                    decide(&http(s, None), 1, &Timing::test()),
                    Decision::Fail { .. }
                ),
                "{s}"
            );
        }
    }

    #[test]
    fn transient_errors_and_timeouts_are_retried_with_backoff() {
        let t = Timing::production();
        for s in [408, 409, 500, 502, 503, 504, 529] {
            assert_eq!(decide(&http(s, None), 2, &t), retry(120), "{s}");
        }
        assert_eq!(decide(&CallOutcome::Timeout, 1, &t), retry(60));
        assert_eq!(
            decide(&CallOutcome::Network("reset".into()), 1, &t),
            retry(60)
        );
    }

    #[test]
    fn a_429_with_retry_after_is_retried_after_that_delay_when_longer() {
        let t = Timing::production();
        assert_eq!(decide(&http(429, Some(300)), 1, &t), retry(300));
        assert_eq!(decide(&http(429, Some(5)), 1, &t), retry(60));
    }

    #[test]
    fn a_429_without_retry_after_is_a_spend_limit_it_waits_the_cap_and_alerts() {
        let t = Timing::production();
        assert_eq!(
            decide(&http(429, None), 1, &t),
            Decision::Retry {
                delay_s: 600,
                alert: true
            }
        );
    }

    #[test]
    fn any_other_error_is_a_plain_retry_towards_the_dlq() {
        for s in [402, 418, 422, 501] {
            assert_eq!(
                decide(&http(s, None), 1, &Timing::production()),
                retry(0),
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
        use crate::status::Lane;
        assert!(!retries_exhausted(Lane::High, 5));
        assert!(retries_exhausted(Lane::High, 6));
        // A seventh delivery (a message re-sent by the reconciler) is exhausted at once.
        assert!(retries_exhausted(Lane::High, 7));
        assert!(!retries_exhausted(Lane::Bulk, 3));
        assert!(retries_exhausted(Lane::Bulk, 4));
    }
}
