//! The envelope's invariants: no plan passes a limit, no loop gets more than its backlog, every
//! loop with work gets some whenever the configuration passes [`check`], so backlogs drain.

use super::*;
use proptest::prelude::*;

fn paid(entry: Entry) -> Limits {
    Limits::of(Plan::Paid, entry, Configured::default()).unwrap()
}

/// A cron run's bookkeeping: its heartbeats, counts and metrics.
const RESERVE: Cost = Cost {
    fetches: 0,
    d1: 20,
    r2: 2,
    queue: 0,
    durable_object: 2,
};

/// A production flush: its claim, 1,000 request bodies read from R2, the create call, the mark.
const FLUSH: Cost = Cost {
    fetches: 1,
    d1: 4,
    r2: 1_000,
    queue: 0,
    durable_object: 0,
};

#[test]
fn the_plans_figures_are_the_pages() {
    let p = paid(Entry::Cron);
    assert_eq!(
        (p.subrequests, p.fetches, p.d1_queries, p.connections),
        (10_000, 10_000, 1_000, 6)
    );
    assert_eq!(
        (p.cpu_ms, p.wall_ms, p.memory_bytes),
        (30_000, Some(900_000), 128_000_000)
    );
    let free = Limits::of(Plan::Free, Entry::Fetch, Configured::default()).unwrap();
    assert_eq!(
        (
            free.subrequests,
            free.fetches,
            free.d1_queries,
            free.cpu_ms,
            free.wall_ms
        ),
        (1_050, 50, 50, 10, None)
    );
    assert_eq!(paid(Entry::Queue).wall_ms, Some(15 * 60_000));
    assert_eq!(paid(Entry::DurableObject).wall_ms, None);
}

#[test]
fn configured_limits_apply_up_to_the_plans_maximum_and_no_further() {
    let set = |subrequests, cpu_ms| Configured {
        subrequests: Some(subrequests),
        cpu_ms: Some(cpu_ms),
    };
    let fetch = Limits::of(Plan::Paid, Entry::Fetch, set(50_000, 300_000)).unwrap();
    assert_eq!((fetch.subrequests, fetch.cpu_ms), (50_000, 300_000));
    // A cron run under an hour's interval keeps its 30 s whatever cpu_ms says.
    let cron = Limits::of(Plan::Paid, Entry::Cron, set(50_000, 300_000)).unwrap();
    assert_eq!(cron.cpu_ms, 30_000);
    let lower = Limits::of(Plan::Paid, Entry::Queue, set(500, 1_000)).unwrap();
    assert_eq!((lower.subrequests, lower.cpu_ms), (500, 1_000));
    let err = Limits::of(Plan::Paid, Entry::Fetch, set(10_000_001, 1)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "[limits] subrequests = 10000001 is more than the plan allows (10000000)"
    );
    assert!(Limits::of(Plan::Free, Entry::Fetch, set(50, 11)).is_err());
}

#[test]
fn ten_production_flushes_do_not_fit_one_cron_run_and_the_plan_says_how_many_do() {
    // The case of the issue: 10 flushes of 1,000 bodies is ≈ 10,050 subrequests.
    let cron = paid(Entry::Cron);
    let got = shares(
        &cron,
        RESERVE,
        &[Work {
            per_item: FLUSH,
            backlog: 10,
        }],
    );
    // 80% of 10,000 is planned: 7 flushes, and 3 wait for the next run.
    assert_eq!(got, vec![7]);
    let used = FLUSH.times(7).subrequests + RESERVE.subrequests();
    assert!(used <= 8_000, "{used}");
}

#[test]
fn a_flush_that_cannot_fit_alone_is_refused_by_the_check() {
    let huge = Cost {
        r2: 100_000,
        ..FLUSH
    };
    let err = check(&paid(Entry::Cron), RESERVE, &[Cost::default(), huge]).unwrap_err();
    assert_eq!(err.work, 1);
    assert!(err.needs.subrequests > err.room.subrequests);
    assert_eq!(check(&paid(Entry::Cron), RESERVE, &[FLUSH, FLUSH]), Ok(()));
}

#[test]
fn the_room_is_shared_first_one_each_then_in_equal_parts() {
    let cron = paid(Entry::Cron);
    let line = Cost {
        d1: 0,
        r2: 1,
        ..Cost::default()
    };
    let got = shares(
        &cron,
        Cost::default(),
        &[
            Work {
                per_item: line,
                backlog: 1_000_000,
            },
            Work {
                per_item: line,
                backlog: 1_000_000,
            },
        ],
    );
    assert_eq!(got, vec![4_000, 4_000]);
    let got = shares(
        &cron,
        Cost::default(),
        &[
            Work {
                per_item: line,
                backlog: 10,
            },
            Work {
                per_item: line,
                backlog: 1_000_000,
            },
        ],
    );
    assert_eq!(got, vec![10, 7_990], "what one loop leaves, the next takes");
}

/// Backlogs at the edges as often as in the middle: none, a few, many.
fn backlog(max: u64) -> impl Strategy<Value = u64> {
    prop_oneof![Just(0u64), 1u64..10, 0..max]
}

/// Costs with zeros (a loop that makes no call of a kind) as often as not.
fn cost() -> impl Strategy<Value = Cost> {
    let few = || prop_oneof![Just(0u32), 1u32..3];
    let many = |max| prop_oneof![Just(0u32), 1u32..max];
    (few(), many(40), many(2_000), few(), few()).prop_map(
        |(fetches, d1, r2, queue, durable_object)| Cost {
            fetches,
            d1,
            r2,
            queue,
            durable_object,
        },
    )
}

fn limits() -> impl Strategy<Value = Limits> {
    (
        prop_oneof![Just(Plan::Free), Just(Plan::Paid)],
        prop_oneof![Just(Entry::Fetch), Just(Entry::Queue), Just(Entry::Cron)],
        proptest::option::of(1u32..20_000),
    )
        .prop_map(|(plan, entry, subrequests)| {
            let subrequests = subrequests.map(|n| if plan == Plan::Free { n.min(50) } else { n });
            let configured = Configured {
                subrequests,
                cpu_ms: None,
            };
            Limits::of(plan, entry, configured).unwrap()
        })
}

proptest! {
    #[test]
    fn no_plan_passes_a_limit_or_a_backlog(
        limits in limits(),
        reserve in cost(),
        work in proptest::collection::vec((cost(), backlog(50_000)), 0..6),
    ) {
        let work: Vec<Work> = work.into_iter().map(|(per_item, backlog)| Work { per_item, backlog }).collect();
        let got = shares(&limits, reserve, &work);
        prop_assert_eq!(got.len(), work.len());
        let used = work
            .iter()
            .zip(&got)
            .fold(reserve.times(1), |sum, (w, &n)| sum + w.per_item.times(n));
        let fits_reserve = limits.room().after(reserve.times(1)).is_some();
        if fits_reserve {
            prop_assert!(limits.room().after(used).is_some(), "{used:?} past {:?}", limits.room());
        } else {
            prop_assert!(got.iter().all(|&n| n == 0));
        }
        for (w, &n) in work.iter().zip(&got) {
            prop_assert!(n <= w.backlog);
        }
        let per_item: Vec<Cost> = work.iter().filter(|w| w.backlog > 0).map(|w| w.per_item).collect();
        if check(&limits, reserve, &per_item).is_ok() {
            for (w, &n) in work.iter().zip(&got) {
                prop_assert!(w.backlog == 0 || n > 0, "{w:?} got nothing");
            }
        }
    }

    #[test]
    fn every_backlog_drains_run_after_run(
        limits in limits(),
        reserve in cost(),
        work in proptest::collection::vec((cost(), backlog(5_000)), 1..5),
    ) {
        let per_item: Vec<Cost> = work.iter().map(|(c, _)| *c).collect();
        prop_assume!(check(&limits, reserve, &per_item).is_ok());
        let mut work: Vec<Work> = work.into_iter().map(|(per_item, backlog)| Work { per_item, backlog }).collect();
        let total: u64 = work.iter().map(|w| w.backlog).sum();
        let mut runs = 0;
        while work.iter().any(|w| w.backlog > 0) {
            let got = shares(&limits, reserve, &work);
            for (w, n) in work.iter_mut().zip(got) {
                w.backlog -= n;
            }
            runs += 1;
            prop_assert!(runs <= total, "no progress after {runs} runs");
        }
    }
}

#[test]
fn a_use_within_every_limit_passes_none_and_the_first_one_over_is_named() {
    let l = paid(Entry::Queue);
    let mut used = Used {
        subrequests: 10_000,
        fetches: 40,
        d1_queries: 1_000,
        connections: 6,
        wall_ms: 900_000,
        memory_bytes: 128_000_000,
    };
    assert_eq!(l.passed(&used), None, "at a limit is not past it");
    used.d1_queries = 1_001;
    let p = l.passed(&used).unwrap();
    assert_eq!(
        (p.figure, p.used, p.limit),
        (Figure::D1Queries, 1_001, 1_000)
    );
    assert_eq!(p.to_string(), "d1_queries 1001 of 1000 allowed");
}

#[test]
fn an_http_request_has_no_wall_limit_and_its_share_is_not_shown() {
    let l = paid(Entry::Fetch);
    let used = Used {
        wall_ms: 10_000_000,
        ..Used::default()
    };
    assert_eq!(l.passed(&used), None);
    assert!(l.shares(&used).iter().all(|(f, _)| *f != Figure::WallMs));
    let cron = paid(Entry::Cron).shares(&Used {
        subrequests: 8_000,
        ..Used::default()
    });
    assert_eq!(cron[0], (Figure::Subrequests, 80.0));
}

#[test]
fn the_plan_var_is_paid_unless_it_says_free() {
    assert_eq!(Plan::from_var(None), Ok(Plan::Paid));
    assert_eq!(Plan::from_var(Some(" Free ")), Ok(Plan::Free));
    assert!(Plan::from_var(Some("pro"))
        .unwrap_err()
        .contains("WORKERS_PLAN"));
}

#[test]
fn an_allowance_takes_whole_items_and_refuses_the_one_that_does_not_fit() {
    let mut a = Allowance::new(Room {
        subrequests: 10,
        fetches: 3,
        d1: 10,
    });
    let call = Cost {
        fetches: 1,
        d1: 1,
        ..Cost::default()
    };
    assert_eq!(a.take_up_to(&call, 10), 3, "three fetches fit");
    assert!(!a.take(&call));
    assert_eq!(
        a.left(),
        Room {
            subrequests: 4,
            fetches: 0,
            d1: 7
        }
    );
    assert!(a.take(&Cost {
        d1: 4,
        ..Cost::default()
    }));
}

proptest! {
    /// Whatever the weights, the parts and the reserve fit the limits together, and every
    /// loop with work gets a part of every figure once each figure's room is at least the total
    /// weight (a smaller room is shared in proportion, and a light loop's share may round to 0).
    #[test]
    fn split_parts_add_up_to_less_than_the_whole(
        weights in proptest::collection::vec(0u64..50, 1..8),
        configured in 50u32..200_000,
    ) {
        let limits = Limits::of(
            Plan::Paid,
            Entry::Cron,
            Configured { subrequests: Some(configured), cpu_ms: None },
        ).unwrap();
        let parts = split(&limits, RESERVE, &weights);
        let sum = parts.iter().fold(RESERVE.times(1), |s, p| s + *p);
        prop_assert!(limits.room().after(sum).is_some());
        let total: u64 = weights.iter().sum();
        for (w, p) in weights.iter().zip(&parts) {
            if *w == 0 {
                prop_assert_eq!(*p, Room::default());
            } else if limits
                .room()
                .after(RESERVE.times(1))
                .is_some_and(|left| left.d1.min(left.subrequests).min(left.fetches) >= total)
            {
                prop_assert!(p.d1 > 0 && p.subrequests > 0 && p.fetches > 0);
            }
        }
    }
}

#[test]
fn a_flush_size_that_cannot_fit_a_cron_run_is_refused_naming_the_var() {
    let paid = Limits::of(Plan::Paid, Entry::Cron, Configured::default()).unwrap();
    assert_eq!(check_flush_size(&paid, 1_000), Ok(()));
    let max = max_flush_size(&paid);
    // Half of what the run's bookkeeping leaves of the 8,000 planned (80% of 10,000), less the
    // flush's own calls.
    let half = (8_000 - costs::CRON_RESERVE.subrequests()) / 2;
    assert_eq!(max as u64, half - costs::FLUSH.subrequests());
    assert_eq!(check_flush_size(&paid, max), Ok(()));
    let refused = check_flush_size(&paid, 100_000).unwrap_err();
    assert_eq!(refused, FlushTooLarge { size: 100_000, max });
    let message = refused.to_string();
    assert!(message.contains("BATCH_FLUSH_SIZE = 100000"), "{message}");
    assert!(
        message.contains(&format!("set it to {max} or less")),
        "{message}"
    );
    // A raised [limits] subrequests lets larger flushes fit.
    let raised = Configured {
        subrequests: Some(1_000_000),
        cpu_ms: None,
    };
    let big = Limits::of(Plan::Paid, Entry::Cron, raised).unwrap();
    assert!(max_flush_size(&big) > 100_000);
}

proptest! {
    /// Whatever the configuration, the largest flush the check lets through fits, beside the
    /// run's bookkeeping and an equal half for the poll, within every limit.
    #[test]
    fn the_largest_allowed_flush_fits_the_cron_run(configured in 50u32..2_000_000) {
        let limits = Limits::of(
            Plan::Paid,
            Entry::Cron,
            Configured { subrequests: Some(configured), cpu_ms: None },
        ).unwrap();
        let max = max_flush_size(&limits) as u64;
        // Below the bookkeeping's own needs no flush fits, and every size is refused.
        prop_assume!(max > 0);
        let flush = costs::FLUSH.times(1) + costs::FLUSH_PROMPT_ROW.times(max);
        let whole = costs::CRON_RESERVE.times(1) + flush + flush;
        prop_assert!(limits.room().after(whole).is_some());
        let one_more = flush + costs::FLUSH_PROMPT_ROW.times(1);
        let half = split(&limits, costs::CRON_RESERVE, &[1, 1])[0];
        prop_assert!(half.after(one_more).is_none());
    }
}

#[test]
fn a_queue_invocation_starts_a_five_minute_call_only_while_it_can_end_inside_twelve_minutes() {
    let queue = Limits::of(Plan::Paid, Entry::Queue, Configured::default()).unwrap();
    let limit = queue.wall_ms;
    assert_eq!(limit, Some(900_000));
    let call = 300_000;
    assert!(call_fits(0, call, limit));
    assert!(call_fits(420_000, call, limit), "ends at 12 min: 80% of 15");
    assert!(!call_fits(420_001, call, limit));
    // An HTTP request's wall time is not capped.
    let fetch = Limits::of(Plan::Paid, Entry::Fetch, Configured::default()).unwrap();
    assert!(call_fits(u64::MAX, call, fetch.wall_ms));
}

proptest! {
    /// Calls started only when they fit end inside the plan's share of the limit, however
    /// long each takes up to its worst case, and the first call always starts.
    #[test]
    fn serial_calls_that_fit_never_pass_the_wall_limit(
        call_ms in 1u64..400_000,
        took in proptest::collection::vec(0.0f64..=1.0, 1..50),
    ) {
        let limit = Some(900_000);
        let mut elapsed = 0u64;
        let mut started = 0;
        for t in took {
            if !call_fits(elapsed, call_ms, limit) {
                break;
            }
            started += 1;
            elapsed += (call_ms as f64 * t) as u64;
            prop_assert!(elapsed <= 720_000);
        }
        prop_assert!(started >= 1, "a call up to 6.7 min always fits an idle invocation");
    }
}

#[test]
fn a_cron_run_starts_new_work_inside_its_minute_only() {
    assert!(may_start(Entry::Cron, 0));
    assert!(may_start(Entry::Cron, CRON_PLAN_MS - 1));
    assert!(!may_start(Entry::Cron, CRON_PLAN_MS));
    assert!(may_start(Entry::Fetch, 10 * CRON_PLAN_MS));
    assert!(may_start(Entry::Queue, 10 * CRON_PLAN_MS));
}

proptest! {
    /// A queue batch's sync calls: the first always runs; past it, what runs fits the room.
    #[test]
    fn the_calls_that_run_fit_the_room_and_the_first_always_runs(
        limits in limits(),
        costs in proptest::collection::vec(cost(), 0..12),
    ) {
        let room = limits.room().after(costs::CALLER_RESERVE.times(1)).unwrap_or_default();
        let runs = calls_that_fit(room, &costs);
        prop_assert_eq!(runs.len(), costs.len());
        if !costs.is_empty() {
            prop_assert!(runs[0], "the first call always runs");
        }
        let taken = costs
            .iter()
            .zip(&runs)
            .filter(|(_, r)| **r)
            .fold(Room::default(), |sum, (c, _)| sum + c.times(1));
        let first_alone_fits = costs.first().is_none_or(|c| room.after(c.times(1)).is_some());
        if first_alone_fits {
            prop_assert!(room.after(taken).is_some(), "{taken:?} passes {room:?}");
        } else {
            prop_assert_eq!(runs.iter().filter(|r| **r).count(), 1, "only the first, alone");
        }
        // Nothing left behind would still have fitted at its turn.
        let mut used = Room::default();
        for (c, r) in costs.iter().zip(&runs) {
            let with = used + c.times(1);
            if *r {
                used = with;
            } else {
                prop_assert!(room.after(with).is_none());
            }
        }
    }
}

#[test]
fn a_paid_queue_invocation_runs_a_whole_bulk_batch_of_pdf_calls() {
    let queue = Limits::of(Plan::Paid, Entry::Queue, Configured::default()).unwrap();
    let room = queue.room().after(costs::CALLER_RESERVE.times(1)).unwrap();
    let pdf = costs::SYNC_CALL + costs::sync_pdf(true, false);
    assert!(calls_that_fit(room, &[pdf; 10]).iter().all(|r| *r));
    // With 100 subrequests configured, a few run and the rest wait for the next invocation.
    let tight = Limits::of(
        Plan::Paid,
        Entry::Queue,
        Configured {
            subrequests: Some(100),
            cpu_ms: None,
        },
    )
    .unwrap();
    let room = tight
        .room()
        .after(costs::CALLER_RESERVE.times(1))
        .unwrap_or_default();
    let runs = calls_that_fit(room, &[pdf; 10]);
    let n = runs.iter().filter(|r| **r).count();
    assert!((1..10).contains(&n), "{runs:?}");
}

#[test]
fn plans_aim_at_80_percent_of_every_limit() {
    let paid = Limits::of(Plan::Paid, Entry::Cron, Configured::default()).unwrap();
    assert_eq!(
        paid.room(),
        Room {
            subrequests: 8_000,
            fetches: 8_000,
            d1: 800
        }
    );
    assert_eq!(paid.planned_connections(), 4);
    let free = Limits::of(Plan::Free, Entry::Fetch, Configured::default()).unwrap();
    assert_eq!(free.room().d1, 40);
    assert_eq!(free.planned_connections(), 4);
}

proptest! {
    /// Whatever the backlog, a run's shares with its reserve stay inside PLAN_PCT of each limit.
    #[test]
    fn shares_stay_inside_the_planned_part_of_each_limit(
        limits in limits(),
        work in proptest::collection::vec((cost(), 0u64..100_000), 1..5),
    ) {
        let work: Vec<Work> = work
            .into_iter()
            .map(|(per_item, backlog)| Work { per_item, backlog })
            .collect();
        let given = shares(&limits, costs::CALLER_RESERVE, &work);
        let used = work
            .iter()
            .zip(&given)
            .fold(costs::CALLER_RESERVE.times(1), |sum, (w, n)| sum + w.per_item.times(*n));
        if given.iter().any(|n| *n > 0) {
            prop_assert!(used.subrequests * 100 <= limits.subrequests as u64 * PLAN_PCT);
            prop_assert!(used.d1 * 100 <= limits.d1_queries as u64 * PLAN_PCT);
            prop_assert!(used.fetches * 100 <= limits.fetches as u64 * PLAN_PCT);
        }
    }
}

#[test]
fn a_cron_run_ends_inside_its_minute() {
    // The last item starts just before CRON_PLAN_MS; its call is cut at CRON_CALL_MS.
    let last_call_ends = CRON_PLAN_MS + call_timeout_ms(Entry::Cron, 300_000);
    assert!(last_call_ends <= 60_000, "{last_call_ends}");
    // Webhooks run beside the rest from the run's start: 20, four at a time, 5 s each at most.
    let webhooks = 20_u64.div_ceil(paid(Entry::Cron).planned_connections() as u64) * 5_000;
    assert!(webhooks <= CRON_PLAN_MS + CRON_CALL_MS);
    assert_eq!(call_timeout_ms(Entry::Cron, 300_000), CRON_CALL_MS);
    assert_eq!(call_timeout_ms(Entry::Cron, 5_000), 5_000);
    assert_eq!(call_timeout_ms(Entry::Queue, 300_000), 300_000);
}
