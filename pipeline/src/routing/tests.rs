use super::*;
use proptest::prelude::*;

const MIN: u64 = 60_000;
const HOUR: u64 = 60 * MIN;

fn policy() -> Policy {
    Policy {
        rescue_ms: 15 * MIN,
        sync_ms: 5 * MIN,
        margin_ms: 10 * MIN,
        default_batch_ms: HOUR,
        min_samples: 5,
        accumulate_ms: 61 * MIN,
    }
}

fn measured(samples: u32, p95_ms: u64) -> BatchDurations {
    BatchDurations { samples, p95_ms }
}

#[test]
fn a_loose_deadline_goes_to_a_batch_with_its_rescue_time_before_the_deadline() {
    let p = policy();
    let now = 1_000 * HOUR;
    let deadline = now + 24 * HOUR;
    assert_eq!(
        route(&p, now, deadline, BatchDurations::default()),
        Route::Batch {
            rescue_at: deadline - p.rescue_ms,
            reason: Reason::DeadlineAllowsBatch
        }
    );
}

#[test]
fn the_boundary_is_accumulation_plus_the_expected_batch_plus_margin_plus_rescue() {
    let p = policy();
    let now = 5 * HOUR;
    let needs = p.accumulate_ms + p.default_batch_ms + p.margin_ms + p.rescue_ms;
    assert!(matches!(
        route(&p, now, now + needs, BatchDurations::default()),
        Route::Batch { .. }
    ));
    assert_eq!(
        route(&p, now, now + needs - 1, BatchDurations::default()),
        Route::Sync {
            reason: Reason::DeadlineTooCloseForBatch
        }
    );
}

#[test]
fn a_deadline_closer_than_one_synchronous_call_is_refused_with_the_figures() {
    let p = policy();
    assert_eq!(
        route(&p, 10 * MIN, 12 * MIN, BatchDurations::default()),
        Route::Refuse {
            left_ms: 2 * MIN,
            needed_ms: p.sync_ms
        }
    );
    // A deadline already past: nothing left.
    assert_eq!(
        route(&p, 10 * MIN, 9 * MIN, BatchDurations::default()),
        Route::Refuse {
            left_ms: 0,
            needed_ms: p.sync_ms
        }
    );
    assert!(matches!(
        route(&p, 10 * MIN, 15 * MIN, BatchDurations::default()),
        Route::Sync { .. }
    ));
}

#[test]
fn measured_batch_durations_replace_the_default_once_there_are_enough() {
    let p = policy();
    assert_eq!(p.expected_batch_ms(measured(4, 5 * MIN)), HOUR);
    assert_eq!(p.expected_batch_ms(measured(5, 5 * MIN)), 5 * MIN);
    // Fast measured batches open the batch path to tighter deadlines…
    let now = 0;
    let deadline = 2 * HOUR;
    assert!(matches!(
        route(&p, now, deadline, measured(10, 5 * MIN)),
        Route::Batch { .. }
    ));
    assert!(matches!(
        route(&p, now, deadline, measured(1, 5 * MIN)),
        Route::Sync { .. }
    ));
    // …and slow ones close it; no estimate goes past the 24-hour expiry.
    assert!(matches!(
        route(&p, now, 20 * HOUR, measured(10, 20 * HOUR)),
        Route::Sync { .. }
    ));
    assert_eq!(
        p.expected_batch_ms(measured(10, 30 * HOUR)),
        BATCH_EXPIRY_MS
    );
}

#[test]
fn a_running_batch_is_cancelled_at_the_earliest_rescue_time_of_its_jobs() {
    assert_eq!(watch(99, Some(100)), Watch::Wait);
    assert_eq!(watch(100, Some(100)), Watch::Cancel);
    assert_eq!(watch(101, Some(100)), Watch::Cancel);
    // A batch of jobs without deadlines is never cancelled for routing.
    assert_eq!(watch(u64::MAX, None), Watch::Wait);
    assert!(accumulated_past_rescue(100, Some(100)));
    assert!(!accumulated_past_rescue(99, Some(100)));
    assert!(!accumulated_past_rescue(u64::MAX, None));
}

#[test]
fn a_job_answered_by_its_cancelled_batch_keeps_that_answer_and_is_paid_once() {
    let p = policy();
    let now = 10 * HOUR;
    for deadline in [None, Some(now + MIN), Some(now + 48 * HOUR)] {
        assert_eq!(
            after_batch(
                &p,
                now,
                deadline,
                BatchDurations::default(),
                LineResult::Succeeded
            ),
            AfterBatch::Usual
        );
        assert_eq!(
            after_batch(
                &p,
                now,
                deadline,
                BatchDurations::default(),
                LineResult::Errored
            ),
            AfterBatch::Usual
        );
    }
}

#[test]
fn a_canceled_request_moves_to_sync_or_back_to_a_batch_by_what_its_deadline_allows() {
    let p = policy();
    let now = 10 * HOUR;
    // The job whose rescue time came: sync.
    assert_eq!(
        after_batch(
            &p,
            now,
            Some(now + p.rescue_ms),
            BatchDurations::default(),
            LineResult::Canceled
        ),
        AfterBatch::MoveToSync {
            reason: Reason::BatchRanLate
        }
    );
    // Already past its deadline: still answered, as soon as possible.
    assert_eq!(
        after_batch(
            &p,
            now,
            Some(now - 1),
            BatchDurations::default(),
            LineResult::Expired
        ),
        AfterBatch::MoveToSync {
            reason: Reason::BatchRanLate
        }
    );
    // A neighbour with a loose deadline, cancelled for the other's sake: another batch.
    let loose = now + 48 * HOUR;
    assert_eq!(
        after_batch(
            &p,
            now,
            Some(loose),
            BatchDurations::default(),
            LineResult::Canceled
        ),
        AfterBatch::Reaccumulate {
            rescue_at: loose - p.rescue_ms
        }
    );
    // Without a deadline, the batch's usual rules.
    assert_eq!(
        after_batch(
            &p,
            now,
            None,
            BatchDurations::default(),
            LineResult::Canceled
        ),
        AfterBatch::Usual
    );
}

#[test]
fn deadlines_met_and_missed() {
    assert!(met(100, 100));
    assert!(met(100, 99));
    assert!(!met(100, 101));
}

#[test]
fn reasons_have_stable_names() {
    assert_eq!(
        Reason::DeadlineAllowsBatch.as_str(),
        "deadline_allows_batch"
    );
    assert_eq!(
        Reason::DeadlineTooCloseForBatch.as_str(),
        "deadline_too_close_for_batch"
    );
    assert_eq!(Reason::BatchRanLate.as_str(), "batch_ran_late");
}

fn policies() -> impl Strategy<Value = Policy> {
    (
        0..HOUR,
        0..HOUR,
        0..HOUR,
        0..30 * HOUR,
        0u32..10,
        0..2 * HOUR,
    )
        .prop_map(
            |(rescue_ms, sync_ms, margin_ms, default_batch_ms, min_samples, accumulate_ms)| {
                Policy {
                    rescue_ms: rescue_ms.max(sync_ms),
                    sync_ms,
                    margin_ms,
                    default_batch_ms,
                    min_samples,
                    accumulate_ms,
                }
            },
        )
}

proptest! {
    /// A job sent to a batch has, at its rescue time, at least a synchronous call's time left,
    /// and its rescue time comes after the batch is expected to have ended (with the margin).
    #[test]
    fn a_batch_route_always_leaves_room_for_the_rescue(
        p in policies(),
        now in 0..1_000 * HOUR,
        left in 0..60 * HOUR,
        samples in 0u32..20,
        p95 in 0..40 * HOUR,
    ) {
        let m = measured(samples, p95);
        match route(&p, now, now + left, m) {
            Route::Batch { rescue_at, .. } => {
                prop_assert!(now + left - rescue_at >= p.sync_ms);
                prop_assert!(rescue_at >= now + p.accumulate_ms + p.expected_batch_ms(m) + p.margin_ms);
            }
            Route::Sync { .. } => prop_assert!(left >= p.sync_ms),
            Route::Refuse { left_ms, needed_ms } => {
                prop_assert_eq!(left_ms, left);
                prop_assert!(left_ms < needed_ms);
            }
        }
    }

    /// More time never turns a batch route into a sync one, nor a sync one into a refusal.
    #[test]
    fn a_later_deadline_never_routes_to_a_dearer_path(
        p in policies(),
        now in 0..1_000 * HOUR,
        left in 0..60 * HOUR,
        more in 0..60 * HOUR,
        samples in 0u32..20,
        p95 in 0..40 * HOUR,
    ) {
        let m = measured(samples, p95);
        let rank = |r: Route| match r {
            Route::Batch { .. } => 0,
            Route::Sync { .. } => 1,
            Route::Refuse { .. } => 2,
        };
        prop_assert!(rank(route(&p, now, now + left + more, m)) <= rank(route(&p, now, now + left, m)));
    }
}

#[test]
fn the_p95_is_the_nearest_rank_of_the_durations() {
    assert_eq!(BatchDurations::of(&[]), BatchDurations::default());
    assert_eq!(BatchDurations::of(&[7]), measured(1, 7));
    let twenty: Vec<u64> = (1..=20).rev().collect();
    // 95 % of 20 is 19: the 19th smallest.
    assert_eq!(BatchDurations::of(&twenty), measured(20, 19));
    let hundred_and_one: Vec<u64> = (0..101).collect();
    assert_eq!(BatchDurations::of(&hundred_and_one).p95_ms, 95);
}

#[test]
fn the_test_profile_routes_within_seconds() {
    let p = Policy::of(&crate::timing::Timing::test());
    // Flush age 3 s plus a 1 s cron period.
    assert_eq!(p.accumulate_ms, 4_000);
    assert_eq!(p.sync_ms, 10_000);
    let production = Policy::of(&crate::timing::Timing::production());
    assert_eq!(production.default_batch_ms, HOUR);
    assert_eq!(production.accumulate_ms, HOUR + MIN);
}

#[test]
fn a_deadline_is_met_by_completing_before_it() {
    assert_eq!(deadline_met(100, Some(100), true, 200), Some(true));
    assert_eq!(deadline_met(100, Some(101), true, 200), Some(false));
    // Failed or canceled: missed.
    assert_eq!(deadline_met(100, None, true, 50), Some(false));
    // Still running: open until the deadline passes.
    assert_eq!(deadline_met(100, None, false, 50), None);
    assert_eq!(deadline_met(100, None, false, 101), Some(false));
}

proptest! {
    #[test]
    fn the_p95_is_one_of_the_samples_and_at_least_most_of_them(
        d in proptest::collection::vec(0u64..100_000, 1..200)
    ) {
        let m = BatchDurations::of(&d);
        prop_assert!(d.contains(&m.p95_ms));
        let at_most = d.iter().filter(|&&x| x <= m.p95_ms).count();
        prop_assert!(at_most * 100 >= d.len() * 95);
    }
}
