//! What a consumer does after a call to Claude: the decision is made here, the Worker only
//! carries it out (ack, retry with a delay, or fail the job).

use crate::outcome::{describe, CallOutcome, ErrorClass, Failure};
use crate::status::Lane;
use crate::timing::Timing;

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

/// Every model [`model_for`] can send a job asking for `requested` to: that one, then the rest
/// of `chain` after it — what a budget must reserve for.
pub fn reachable_models<'a>(requested: &'a str, chain: &'a [String]) -> Vec<&'a str> {
    let mut models = vec![requested];
    if let Some(i) = chain.iter().position(|m| m == requested) {
        models.extend(chain[i + 1..].iter().map(String::as_str));
    }
    models
}

#[cfg(test)]
mod tests;
