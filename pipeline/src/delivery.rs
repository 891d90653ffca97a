//! What a lane consumer does with a delivered job, before and around its call: run it or not,
//! wait for the token budget in place or put the job back on its lane, and what a failed
//! `count_tokens` means. The consumer only carries these decisions out.

use crate::budget::Grant;
use crate::outcome::CallOutcome;
use crate::outcome::Failure;
use crate::retry::{decide, Decision};
use crate::status::{Lane, Mode, Status};
use crate::timing::Timing;

/// What becomes of a delivered job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Already done, canceled, or inside a Message Batch: ack the message, never pay twice.
    Skip,
    /// Its `expires_at` passed before it ran: expire it, ack.
    Expire,
    /// A retry delivered before its backoff ended (another message of the job came early): put
    /// it back on its lane for the rest of the backoff.
    NotYet { ms: u64 },
    /// A synchronous call now.
    Call,
    /// A batch-mode job: it joins the accumulation in D1 for the next flush.
    Accumulate,
}

/// Decides what a delivery of a job in `status` (with `expires_at`, in `mode`, not to run
/// before `run_after`) does at `now`.
pub fn on_delivery(
    status: Status,
    expires_at: Option<i64>,
    run_after: Option<i64>,
    mode: Mode,
    now: i64,
) -> Delivery {
    if status.is_terminal() || status == Status::Submitted {
        return Delivery::Skip;
    }
    if expires_at.is_some_and(|at| at < now) {
        return Delivery::Expire;
    }
    if let Some(at) = run_after.filter(|at| *at > now) {
        return Delivery::NotYet {
            ms: (at - now) as u64,
        };
    }
    match mode {
        Mode::Sync => Delivery::Call,
        Mode::Batch => Delivery::Accumulate,
    }
}

/// A reservation that fits within this long is waited for in place (cheaper and closer to the
/// limit than a re-sent message, whose delay has whole-second granularity)…
pub const SHORT_WAIT_MS: u64 = 5_000;
/// …up to this much waiting per job in one delivery; beyond, the job is deferred.
pub const MAX_INLINE_WAIT_MS: u64 = 30_000;
/// …and asking again at most this many times: each answer is a Durable Object request, which
/// counts against the invocation's subrequests (a refusal may say "50 ms" again and again).
pub const MAX_INLINE_ASKS: u32 = 4;
/// When the budget object does not answer, the job is put back this much later.
pub const BUDGET_SILENT_DEFER_MS: u64 = 1_000;
/// When `count_tokens` fails transiently, the job is put back this much later.
pub const COUNT_TOKENS_DEFER_MS: u64 = 5_000;

/// The next step after the budget answered a reservation, `waited_ms` into this delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetStep {
    /// Granted: call now.
    Go,
    /// Refused for a short while: wait this long in place, then ask again.
    Wait { ms: u64 },
    /// Refused for longer: put the job back on its lane after this long, without spending a
    /// retry.
    Defer { ms: u64 },
}

/// Decides whether to call, wait in place, or defer after `grant`, the answer to the
/// `asks`-th request of this delivery (the first is 1).
pub fn after_grant(grant: &Grant, waited_ms: u64, asks: u32) -> BudgetStep {
    if grant.granted {
        BudgetStep::Go
    } else if grant.retry_after_ms <= SHORT_WAIT_MS
        && waited_ms + grant.retry_after_ms <= MAX_INLINE_WAIT_MS
        && asks <= MAX_INLINE_ASKS
    {
        BudgetStep::Wait {
            ms: grant.retry_after_ms,
        }
    } else {
        BudgetStep::Defer {
            ms: grant.retry_after_ms,
        }
    }
}

/// The delivery delay of a deferral: whole seconds, at least one, at most a minute.
pub fn defer_delay_s(after_ms: u64) -> u32 {
    after_ms.div_ceil(1000).clamp(1, 60) as u32
}

/// What a failed `count_tokens` (asked before the reservation) does to the job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CountFailed {
    /// The API refuses this request for good (an unreadable or encrypted PDF): the call would
    /// be refused the same way, so the job fails now, unpaid.
    Fail(Failure),
    /// The Anthropic API is unwell and another route may serve the call: reserve the request's
    /// worst case (settled to what it used) rather than wait for a count only the Anthropic
    /// API gives.
    WorstCase,
    /// Anything else: put the job back on its lane after this long.
    Defer { ms: u64 },
}

/// Decides what a failed `count_tokens` means for a job on `lane`; `failover`: another route
/// than the Anthropic API is configured.
pub fn after_count_failed(
    outcome: &CallOutcome,
    lane: Lane,
    timing: &Timing,
    failover: bool,
) -> CountFailed {
    match decide(outcome, 1, lane, timing) {
        Decision::Fail(f) => CountFailed::Fail(f),
        _ if failover && crate::breaker::Signal::of(outcome) == crate::breaker::Signal::Unwell => {
            CountFailed::WorstCase
        }
        _ => CountFailed::Defer {
            ms: COUNT_TOKENS_DEFER_MS,
        },
    }
}

/// How a stage of a sync call (prepare, reserve, claim and call) ends the delivery before the
/// next stage runs, and so what becomes of its queue message: decided by the stage, carried out
/// in one place by the consumer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// No room left in this invocation for the call: the job goes back on its lane at once,
    /// spending none of its retries.
    DeliverAgain,
    /// Try again after `delay_s` (0: the queue's own delay); a retry of the message.
    Retry { delay_s: u32 },
    /// Back on the lane after `ms`, without spending a retry.
    Defer { ms: u64 },
    /// The job fails now, before any paid call.
    Fail(Failure),
    /// The stage has answered the message itself (acknowledged it, or moved the job on).
    Done,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(granted: bool, retry_after_ms: u64) -> Grant {
        Grant {
            granted,
            retry_after_ms,
            limited_by: None,
            route: Default::default(),
            probe: false,
        }
    }

    #[test]
    fn a_retry_delivered_before_its_backoff_ended_waits_the_rest_of_it() {
        assert_eq!(
            on_delivery(Status::Queued, None, Some(1_500), Mode::Sync, 1_000),
            Delivery::NotYet { ms: 500 }
        );
        assert_eq!(
            on_delivery(Status::Queued, None, Some(1_000), Mode::Sync, 1_000),
            Delivery::Call
        );
        assert_eq!(
            on_delivery(Status::Completed, None, Some(9_000), Mode::Sync, 1_000),
            Delivery::Skip,
            "a finished job is skipped whatever its backoff said"
        );
    }

    #[test]
    fn a_finished_canceled_or_batched_job_is_never_run_again() {
        for s in Status::ALL {
            let d = on_delivery(s, None, None, Mode::Sync, 0);
            let skip = s.is_terminal() || s == Status::Submitted;
            assert_eq!(d == Delivery::Skip, skip, "{s}");
        }
    }

    #[test]
    fn an_expired_job_is_expired_without_a_call_and_a_live_one_runs_by_its_mode() {
        assert_eq!(
            on_delivery(Status::Queued, Some(99), None, Mode::Sync, 100),
            Delivery::Expire
        );
        assert_eq!(
            on_delivery(Status::Queued, Some(100), None, Mode::Sync, 100),
            Delivery::Call
        );
        assert_eq!(
            on_delivery(Status::Running, None, None, Mode::Batch, 100),
            Delivery::Accumulate
        );
        // Done is done, even past its expiry.
        assert_eq!(
            on_delivery(Status::Completed, Some(1), None, Mode::Sync, 100),
            Delivery::Skip
        );
    }

    #[test]
    fn a_short_refusal_is_waited_for_in_place_and_a_long_one_deferred() {
        assert_eq!(after_grant(&grant(true, 0), 0, 1), BudgetStep::Go);
        assert_eq!(
            after_grant(&grant(false, 2_000), 0, 1),
            BudgetStep::Wait { ms: 2_000 }
        );
        assert_eq!(
            after_grant(&grant(false, 6_000), 0, 1),
            BudgetStep::Defer { ms: 6_000 }
        );
        // Waited long enough in this delivery already.
        assert_eq!(
            after_grant(&grant(false, 2_000), 29_000, 2),
            BudgetStep::Defer { ms: 2_000 }
        );
        // Asked often enough: short waits again and again are deferred too.
        assert_eq!(
            after_grant(&grant(false, 50), 200, MAX_INLINE_ASKS),
            BudgetStep::Wait { ms: 50 }
        );
        assert_eq!(
            after_grant(&grant(false, 50), 250, MAX_INLINE_ASKS + 1),
            BudgetStep::Defer { ms: 50 }
        );
    }

    #[test]
    fn a_deferral_waits_whole_seconds_between_one_and_sixty() {
        assert_eq!(defer_delay_s(0), 1);
        assert_eq!(defer_delay_s(1_001), 2);
        assert_eq!(defer_delay_s(3_600_000), 60);
    }

    #[test]
    fn a_refused_count_fails_the_job_and_anything_else_defers_it() {
        let t = Timing::production();
        let refused = CallOutcome::Http {
            status: 400,
            message: "the PDF cannot be read".into(),
            retry_after_s: None,
        };
        assert!(matches!(
            after_count_failed(&refused, Lane::Bulk, &t, false),
            CountFailed::Fail(_)
        ));
        assert_eq!(
            after_count_failed(&CallOutcome::Timeout, Lane::Bulk, &t, false),
            CountFailed::Defer { ms: 5_000 }
        );
    }

    #[test]
    fn an_unwell_count_reserves_the_worst_case_only_when_another_route_may_serve() {
        let t = Timing::production();
        let overloaded = CallOutcome::Http {
            status: 529,
            message: "Overloaded".into(),
            retry_after_s: None,
        };
        assert_eq!(
            after_count_failed(&overloaded, Lane::High, &t, true),
            CountFailed::WorstCase
        );
        assert_eq!(
            after_count_failed(&overloaded, Lane::High, &t, false),
            CountFailed::Defer { ms: 5_000 }
        );
        // Our own limit is not the route's health: another route would not help.
        let limited = CallOutcome::Http {
            status: 429,
            message: "rate limited".into(),
            retry_after_s: Some(3),
        };
        assert!(matches!(
            after_count_failed(&limited, Lane::High, &t, true),
            CountFailed::Defer { .. }
        ));
        // A request refused for good fails, whatever routes there are.
        let refused = CallOutcome::Http {
            status: 400,
            message: "The PDF is encrypted".into(),
            retry_after_s: None,
        };
        assert!(matches!(
            after_count_failed(&refused, Lane::High, &t, true),
            CountFailed::Fail(_)
        ));
    }

    proptest::proptest! {
        #[test]
        fn waiting_in_place_never_exceeds_the_caps(steps in proptest::collection::vec(0u64..10_000, 1..40)) {
            let (mut waited, mut asks) = (0, 0);
            for ms in steps {
                asks += 1;
                match after_grant(&grant(false, ms), waited, asks) {
                    BudgetStep::Wait { ms } => waited += ms,
                    _ => break,
                }
                proptest::prop_assert!(waited <= MAX_INLINE_WAIT_MS);
                proptest::prop_assert!(asks <= MAX_INLINE_ASKS);
            }
        }
    }

    #[test]
    fn a_failed_count_fails_a_refused_job_and_defers_a_timed_out_one() {
        let timing = Timing::production();
        let refused = CallOutcome::Http {
            status: 400,
            message: "The PDF is encrypted".into(),
            retry_after_s: None,
        };
        let next = after_count_failed(&refused, Lane::High, &timing, false);
        assert!(matches!(next, CountFailed::Fail(f) if f.reason.contains("encrypted")));
        let next = after_count_failed(&CallOutcome::Timeout, Lane::High, &timing, false);
        assert_eq!(
            next,
            CountFailed::Defer {
                ms: COUNT_TOKENS_DEFER_MS
            }
        );
    }
}
