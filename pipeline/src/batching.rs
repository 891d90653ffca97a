//! The bulk lane on the Message Batches API: when to flush the accumulated batch-mode jobs into one
//! Message Batch, how many go into one create call, what an errored result does to its job, and
//! how a flush whose create call had an unknown outcome is resolved without paying twice.

use crate::anthropic::{BatchResult, ErrorType, Usage};
use crate::money::UsdMicros;
use crate::outcome::Failure;
use crate::outcome::{describe, CallOutcome};
use crate::pricing::Tier;
use crate::retry::is_permanent;
use crate::timing::Timing;

/// The Message Batches API takes at most this many requests per batch…
pub const MAX_REQUESTS_PER_BATCH: u32 = 100_000;
/// …and 256 MB. A Worker has 128 MB of memory, so one create call carries at most this much;
/// what does not fit goes into the next flush at once.
pub const MAX_FLUSH_BYTES: usize = 32 * 1024 * 1024;
/// A job whose batch request errored transiently (or expired) is resubmitted at most this many
/// times in later batches, then dead-lettered.
pub const MAX_BATCH_TRIES: u32 = 3;

/// Jobs claimed by one flush.
pub fn flush_size(timing: &Timing) -> u32 {
    timing.batch_flush_size.clamp(1, MAX_REQUESTS_PER_BATCH)
}

/// Whether the waiting jobs are flushed now: enough of them, or the oldest waited long enough.
pub fn flush_due(waiting: u32, oldest_at: Option<i64>, now: i64, timing: &Timing) -> bool {
    if waiting == 0 {
        return false;
    }
    waiting >= flush_size(timing)
        || oldest_at.is_some_and(|t| now - t >= timing.batch_flush_age_s as i64 * 1000)
}

/// Whether a request of `size` bytes joins a create call that holds `count` requests of `total`
/// bytes so far: while it fits in `max_bytes` — and the first always does.
pub fn fits(count: usize, total: usize, size: usize, max_bytes: usize) -> bool {
    count == 0 || total + size <= max_bytes
}

/// What becomes of a job after its line in a batch's results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A permanent error: the same request will always fail.
    Fail(String),
    /// Transient: back into the accumulation for a later batch.
    Resubmit(String),
    /// Transient, but resubmitted [`MAX_BATCH_TRIES`] times already.
    DeadLetter(String),
    /// The request was canceled (the job or its batch was canceled).
    Canceled,
}

/// An errored result line, classified like a synchronous error of the same type; `tries` is how
/// many times the job was resubmitted already.
pub fn errored(kind: ErrorType, message: &str, tries: u32) -> Outcome {
    let status = kind.status();
    let reason = format!("the batch request errored: {message} ({status})");
    if lost_file(kind, message) {
        // Its PDF is gone from the Files API: resubmitted, the PDF uploaded again.
        return transient(format!("{reason}; the PDF is uploaded again"), tries);
    }
    if is_permanent(status) {
        Outcome::Fail(reason)
    } else {
        transient(reason, tries)
    }
}

/// Whether an errored line says the file it read is gone ("File not found (404)", the Files
/// guide; its example message is "File `file_…` not found.").
fn lost_file(kind: ErrorType, message: &str) -> bool {
    kind == ErrorType::NotFoundError && crate::anthropic::files::names_a_missing_file(message)
}

/// Whether a result line failed because the file it read is gone at the provider: the job's
/// `file_id` is to be forgotten, so that its next request uploads the PDF again.
pub fn line_lost_its_file(result: &BatchResult) -> bool {
    matches!(result, BatchResult::Errored { error } if lost_file(error.error.kind, &error.error.message))
}

/// An expired result line: the batch ended (24 h) before this request was processed.
pub fn expired(tries: u32) -> Outcome {
    transient(
        "the batch request expired before it was processed".into(),
        tries,
    )
}

fn transient(reason: String, tries: u32) -> Outcome {
    if tries + 1 >= MAX_BATCH_TRIES {
        Outcome::DeadLetter(format!(
            "{reason}; given up after {} batches",
            MAX_BATCH_TRIES
        ))
    } else {
        Outcome::Resubmit(reason)
    }
}

/// A Message Batch the API answers 404 for — it was deleted, or the key now belongs to another
/// workspace (batches belong to one) — may never be seen again; a 404 right after a create may
/// also be the API catching up. So it is waited for a bounded time, then given up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// The first 404: note when, keep polling.
    FirstSeen,
    /// Missing since `since_ms` ago, not long enough to give up.
    Waiting { since_ms: i64 },
    /// Missing for the whole grace: its jobs are released ([`lost_batch_job`]), its results
    /// (and what it billed) never read.
    GiveUp,
}

/// What a 404 on retrieving a batch means at `now`, the first having been seen at
/// `first_seen`, after `grace_ms` of them.
pub fn after_missing(first_seen: Option<i64>, now: i64, grace_ms: i64) -> Missing {
    match first_seen {
        None => Missing::FirstSeen,
        Some(at) if now - at >= grace_ms => Missing::GiveUp,
        Some(at) => Missing::Waiting { since_ms: now - at },
    }
}

/// What becomes of a job of a batch given up as lost: back into the accumulation for a new
/// batch (its try counted), or dead-lettered once it has been in [`MAX_BATCH_TRIES`] batches.
pub fn lost_batch_job(batch_id: &str, tries: u32) -> Outcome {
    transient(
        format!(
            "its Message Batch {batch_id} is unknown to the API (404); its results cannot be read"
        ),
        tries,
    )
}

/// What becomes of a job after its line in a batch's results, a success aside (a successful line
/// is settled like any paid answer): `tries` is how many times the job was resubmitted already.
pub fn line_outcome(result: &BatchResult, tries: u32) -> Option<Outcome> {
    Some(match result {
        BatchResult::Succeeded { .. } => return None,
        BatchResult::Errored { error } => errored(error.error.kind, &error.error.message, tries),
        BatchResult::Expired => expired(tries),
        BatchResult::Canceled => Outcome::Canceled,
        BatchResult::Unreadable { reason } => Outcome::Fail(reason.clone()),
        BatchResult::Unknown => {
            Outcome::Fail("its batch result has a type this client does not know".into())
        }
    })
}

/// What the results line of a job canceled inside its batch bills: a request that ran anyway
/// (the batch had already processed it, or the job was not the batch's last) is paid for at the
/// batch rate, and its usage and cost are recorded on the canceled job — paid work is never
/// dropped from the books; any other line billed nothing.
pub fn bill_after_cancel(result: &BatchResult, at_ms: i64) -> Option<(Usage, Option<UsdMicros>)> {
    match result {
        BatchResult::Succeeded { message } => Some((
            message.usage,
            crate::pricing::cost_micros(&message.model, &message.usage, Tier::Batch, at_ms),
        )),
        _ => None,
    }
}

/// How a flush's create call ended, and what it means for the flush's jobs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Created {
    /// The batch exists: the jobs are `submitted` in it.
    Batch(String),
    /// Refused for good (4xx). When the API named the request at fault (`requests.N…`), only
    /// that job fails and the rest wait for the next flush at once; otherwise every job fails.
    Refused {
        culprit: Option<usize>,
        failure: Failure,
    },
    /// Refused for now (429, 5xx): nothing was created; the jobs wait for a later flush.
    NotNow(String),
    /// No answer: the batch may or may not exist. Never sent again; recovery decides.
    Unknown(String),
}

/// Reads the create call's result.
pub fn after_create(result: Result<String, &CallOutcome>) -> Created {
    match result {
        Ok(id) => Created::Batch(id),
        Err(CallOutcome::Http {
            status, message, ..
        }) if is_permanent(*status) => Created::Refused {
            culprit: offending_index(message),
            failure: Failure::new(format!("Anthropic API {status}: {message}")),
        },
        Err(e @ CallOutcome::Http { .. }) => Created::NotNow(describe(e)),
        Err(e) => Created::Unknown(format!("outcome unknown: {}", describe(e))),
    }
}

/// `requests.N` in an API error message about a batch: the index of the request at fault.
pub fn offending_index(message: &str) -> Option<usize> {
    let rest = &message[message.find("requests.")? + "requests.".len()..];
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

/// A batch on the account that no flush of ours knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown {
    pub id: String,
    /// Epoch ms.
    pub created_at: i64,
    /// Requests in it (the sum of its request counts).
    pub requests: u64,
}

/// How a flush left `claimed` (its create call timed out or the Worker died) is resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recovery {
    /// The create call may still be in flight: look again later.
    Wait,
    /// The create reached the API: these jobs are in this batch.
    Adopt(String),
    /// No batch of the account can be it: the create never happened; the jobs wait again.
    Release,
}

/// How far the API's clock and ours may disagree, at most.
pub const CLOCK_SKEW_MS: i64 = 60_000;

/// The margin around a create call's window: the call timeout, between 5 s and
/// [`CLOCK_SKEW_MS`] (a fast test profile resolves in seconds, production in a minute).
pub fn margin_ms(call_timeout_ms: i64) -> i64 {
    call_timeout_ms.clamp(5_000, CLOCK_SKEW_MS)
}

/// Resolves a flush claimed at `claimed_at` with `jobs` requests, given the account's batches
/// that no flush knows. The create call was sent after the claim and gave up after
/// `call_timeout_ms`, so its batch (if any) was created within that window and has exactly
/// `jobs` requests; of several such, the one created closest to the claim.
pub fn recover(
    claimed_at: i64,
    jobs: u64,
    unknown: &[Unknown],
    now: i64,
    call_timeout_ms: i64,
) -> Recovery {
    let margin = margin_ms(call_timeout_ms);
    let window_end = claimed_at + call_timeout_ms + margin;
    if now < window_end {
        return Recovery::Wait;
    }
    unknown
        .iter()
        .filter(|b| {
            b.requests == jobs && b.created_at >= claimed_at - margin && b.created_at <= window_end
        })
        .min_by_key(|b| (b.created_at - claimed_at).abs())
        .map(|b| Recovery::Adopt(b.id.clone()))
        .unwrap_or(Recovery::Release)
}

pub mod cache;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_flush_is_due_at_the_size_or_the_age() {
        let t = Timing::production();
        assert!(!flush_due(0, None, 0, &t));
        assert!(!flush_due(999, Some(0), 3_599_999, &t));
        assert!(flush_due(1_000, Some(0), 0, &t));
        assert!(flush_due(1, Some(0), 3_600_000, &t));
    }

    #[test]
    fn a_flush_never_exceeds_the_apis_request_count() {
        let mut t = Timing::production();
        t.batch_flush_size = 250_000;
        assert_eq!(flush_size(&t), 100_000);
        t.batch_flush_size = 0;
        assert_eq!(flush_size(&t), 1);
    }

    #[test]
    fn requests_fit_the_byte_limit_but_one_always_goes() {
        assert!(fits(0, 0, 30, 25), "the first goes whatever its size");
        assert!(fits(1, 10, 10, 25));
        assert!(!fits(2, 20, 10, 25));
        assert!(fits(2, 20, 5, 25));
    }

    #[test]
    fn errored_results_are_classified_like_sync_errors() {
        assert!(matches!(
            errored(ErrorType::InvalidRequestError, "bad", 0),
            Outcome::Fail(_)
        ));
        assert!(matches!(
            errored(ErrorType::OverloadedError, "busy", 0),
            Outcome::Resubmit(_)
        ));
        assert!(matches!(
            errored(ErrorType::ApiError, "oops", 1),
            Outcome::Resubmit(_)
        ));
        assert!(matches!(
            errored(ErrorType::ApiError, "oops", 2),
            Outcome::DeadLetter(_)
        ));
        assert!(matches!(expired(0), Outcome::Resubmit(_)));
    }

    #[test]
    fn a_line_whose_file_is_gone_is_resubmitted_and_forgets_the_file() {
        let missing = "File `file_011CNha8iCJcU1wXNR6q4V8w` not found.";
        assert!(matches!(
            errored(ErrorType::NotFoundError, missing, 0),
            Outcome::Resubmit(_)
        ));
        // A missing model stays permanent.
        assert!(matches!(
            errored(ErrorType::NotFoundError, "model: claude-nope", 0),
            Outcome::Fail(_)
        ));
        let line: BatchResult = serde_json::from_value(serde_json::json!({"type": "errored",
            "error": {"type": "error", "error": {"type": "not_found_error", "message": missing}}}))
        .unwrap();
        assert!(line_lost_its_file(&line));
        assert!(!line_lost_its_file(&BatchResult::Expired));
    }

    #[test]
    fn the_request_at_fault_is_read_from_the_apis_message() {
        assert_eq!(
            offending_index("requests.12.params.max_tokens: Field required"),
            Some(12)
        );
        assert_eq!(offending_index("requests: List should have"), None);
        assert_eq!(offending_index("something else"), None);
    }

    fn b(id: &str, created_at: i64, requests: u64) -> Unknown {
        Unknown {
            id: id.into(),
            created_at,
            requests,
        }
    }

    #[test]
    fn an_unknown_outcome_waits_out_the_call_then_adopts_or_releases() {
        let claimed = 1_000_000;
        let timeout = 300_000;
        let after = claimed + timeout + CLOCK_SKEW_MS;
        let found = [b("other", claimed + 10, 7), b("ours", claimed + 500, 3)];
        assert_eq!(
            recover(claimed, 3, &found, after - 1, timeout),
            Recovery::Wait
        );
        assert_eq!(
            recover(claimed, 3, &found, after, timeout),
            Recovery::Adopt("ours".into())
        );
        // Nothing of the right size in the window: the create never reached the API.
        assert_eq!(
            recover(claimed, 3, &[b("late", after + 1, 3)], after + 5, timeout),
            Recovery::Release
        );
        assert_eq!(recover(claimed, 3, &[], after, timeout), Recovery::Release);
    }

    proptest! {
        #[test]
        fn recovery_only_adopts_a_batch_of_the_right_size_in_the_window(
            claimed in 0i64..1_000_000_000,
            jobs in 1u64..50,
            others in proptest::collection::vec((-600_000i64..600_000, 1u64..50), 0..10),
        ) {
            let found: Vec<Unknown> = others.iter().enumerate()
                .map(|(i, (dt, n))| b(&format!("b{i}"), claimed + dt, *n)).collect();
            let now = claimed + 400_000;
            match recover(claimed, jobs, &found, now, 300_000) {
                Recovery::Adopt(id) => {
                    let x = found.iter().find(|u| u.id == id).unwrap();
                    prop_assert_eq!(x.requests, jobs);
                    prop_assert!(x.created_at >= claimed - CLOCK_SKEW_MS);
                    prop_assert!(x.created_at <= claimed + 300_000 + CLOCK_SKEW_MS);
                }
                Recovery::Release => prop_assert!(!found.iter().any(|u| u.requests == jobs
                    && u.created_at >= claimed - CLOCK_SKEW_MS
                    && u.created_at <= claimed + 300_000 + CLOCK_SKEW_MS)),
                Recovery::Wait => prop_assert!(false, "the window is over"),
            }
        }
    }

    #[test]
    fn a_create_refused_for_good_fails_the_request_at_fault_or_all() {
        let http = |status: u16, message: &str| CallOutcome::Http {
            status,
            message: message.into(),
            retry_after_s: None,
        };
        let named = http(400, "requests.3.params.max_tokens: too large");
        assert!(matches!(
            after_create(Err(&named)),
            Created::Refused { culprit: Some(3), ref failure }
                if failure.reason.starts_with("Anthropic API 400")
        ));
        assert!(matches!(
            after_create(Err(&http(413, "too big"))),
            Created::Refused { culprit: None, .. }
        ));
        assert!(matches!(
            after_create(Err(&http(529, "overloaded"))),
            Created::NotNow(_)
        ));
        assert!(matches!(
            after_create(Err(&CallOutcome::Timeout)),
            Created::Unknown(ref n) if n.starts_with("outcome unknown")
        ));
        assert_eq!(
            after_create(Ok("msgbatch_1".into())),
            Created::Batch("msgbatch_1".into())
        );
    }

    #[test]
    fn every_result_line_but_a_success_has_an_outcome() {
        assert_eq!(
            line_outcome(&BatchResult::Canceled, 0),
            Some(Outcome::Canceled)
        );
        assert!(matches!(
            line_outcome(&BatchResult::Unknown, 0),
            Some(Outcome::Fail(_))
        ));
        assert!(matches!(
            line_outcome(&BatchResult::Expired, MAX_BATCH_TRIES),
            Some(Outcome::DeadLetter(_))
        ));
    }
    #[test]
    fn a_batch_the_api_no_longer_knows_is_waited_for_then_given_up() {
        assert_eq!(after_missing(None, 1_000, 60_000), Missing::FirstSeen);
        assert_eq!(
            after_missing(Some(1_000), 31_000, 60_000),
            Missing::Waiting { since_ms: 30_000 }
        );
        assert_eq!(after_missing(Some(1_000), 61_000, 60_000), Missing::GiveUp);
        assert!(
            matches!(lost_batch_job("msgbatch_1", 0), Outcome::Resubmit(r) if r.contains("msgbatch_1"))
        );
        assert!(matches!(
            lost_batch_job("msgbatch_1", MAX_BATCH_TRIES - 1),
            Outcome::DeadLetter(_)
        ));
    }
}
