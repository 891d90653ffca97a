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
    /// The request could not be sent or the answer could not be read.
    Network(String),
}

/// What the consumer does with the queue message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Done (the result is stored): acknowledge.
    Ack,
    /// A transient failure: retry the message after this delay (the queue dead-letters it once
    /// its retries are exhausted).
    Retry { delay_s: u32 },
    /// A permanent failure: mark the job `failed` with this reason and acknowledge.
    Fail { reason: String },
}

/// Errors that the same request will always get again: retrying only pays again or wastes time.
pub fn is_permanent(status: u16) -> bool {
    (400..500).contains(&status) && !matches!(status, 408 | 409 | 425 | 429)
}

/// Decides what to do after delivery `attempt` (the first delivery is 1) ended with `outcome`.
pub fn decide(outcome: &CallOutcome, attempt: u32, timing: &Timing) -> Decision {
    match outcome {
        CallOutcome::Success => Decision::Ack,
        CallOutcome::Http {
            status, message, ..
        } if is_permanent(*status) => Decision::Fail {
            reason: format!("Anthropic API {status}: {message}"),
        },
        CallOutcome::Http { retry_after_s, .. } => Decision::Retry {
            delay_s: timing.backoff_s(attempt, *retry_after_s),
        },
        CallOutcome::Timeout | CallOutcome::Network(_) => Decision::Retry {
            delay_s: timing.backoff_s(attempt, None),
        },
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
        for s in [429, 500, 502, 503, 504, 529, 408] {
            assert_eq!(
                decide(&http(s, None), 2, &t),
                Decision::Retry { delay_s: 120 },
                "{s}"
            );
        }
        assert_eq!(
            decide(&CallOutcome::Timeout, 1, &t),
            Decision::Retry { delay_s: 60 }
        );
        assert_eq!(
            decide(&CallOutcome::Network("reset".into()), 1, &t),
            Decision::Retry { delay_s: 60 }
        );
    }

    #[test]
    fn a_429_with_retry_after_is_retried_after_that_delay_when_longer() {
        let t = Timing::production();
        assert_eq!(
            decide(&http(429, Some(300)), 1, &t),
            Decision::Retry { delay_s: 300 }
        );
        assert_eq!(
            decide(&http(429, Some(5)), 1, &t),
            Decision::Retry { delay_s: 60 }
        );
    }

    #[test]
    fn success_is_acknowledged() {
        assert_eq!(
            decide(&CallOutcome::Success, 3, &Timing::test()),
            Decision::Ack
        );
    }
}
