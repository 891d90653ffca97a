use super::*;
use proptest::prelude::*;

#[test]
fn nearest_rank_percentiles() {
    let p = Percentiles::of((1..=100).rev().collect());
    assert_eq!((p.p50, p.p95, p.p99), (Some(50), Some(95), Some(99)));
    let one = Percentiles::of(vec![7]);
    assert_eq!((one.p50, one.p95, one.p99), (Some(7), Some(7), Some(7)));
    assert_eq!(Percentiles::of(vec![]), Percentiles::default());
    let p = Percentiles::of(vec![10, 20, 30, 40]);
    assert_eq!((p.p50, p.p95), (Some(20), Some(40)));
}

proptest! {
    #[test]
    fn percentiles_are_samples_and_ordered(v in proptest::collection::vec(0i64..1_000_000, 1..300)) {
        let p = Percentiles::of(v.clone());
        let (a, b, c) = (p.p50.unwrap(), p.p95.unwrap(), p.p99.unwrap());
        prop_assert!(a <= b && b <= c);
        for (x, pct) in [(a, 50usize), (b, 95), (c, 99)] {
            prop_assert!(v.contains(&x));
            // At least pct% of the samples are ≤ x, and fewer than pct% are < x.
            let le = v.iter().filter(|s| **s <= x).count();
            let lt = v.iter().filter(|s| **s < x).count();
            prop_assert!(le * 100 >= v.len() * pct);
            prop_assert!(lt * 100 < v.len() * pct);
        }
    }

    #[test]
    fn dlq_alert_fires_once_per_crossing(counts in proptest::collection::vec(0u64..20, 1..60), threshold in 0u64..10) {
        let mut above = false;
        let mut fired = 0;
        let mut crossings = 0;
        let mut prev = 0u64;
        for c in counts {
            let (now_above, fire) = dlq_crossing(above, c, threshold);
            if fire { fired += 1; }
            if prev <= threshold && c > threshold { crossings += 1; }
            above = now_above;
            prev = c;
        }
        prop_assert_eq!(fired, crossings);
    }
}

#[test]
fn metrics_from_rows() {
    let ended = |status: &str, created: i64, started: i64, done: i64, cost: u64| EndedJob {
        status: status.into(),
        model: Some("claude-sonnet-5-5".into()),
        created_at: created,
        started_at: Some(started),
        completed_at: done,
        input_tokens: 10,
        output_tokens: 5,
        cache_write_tokens: 0,
        cache_read_tokens: 0,
        cost_micros: UsdMicros(cost),
    };
    let rows = [
        ended("completed", 0, 100, 1_000, 3),
        ended("completed", 0, 200, 2_000, 4),
        ended("failed", 0, 0, 10, 0),
        ended("dead_lettered", 0, 0, 10, 0),
    ];
    let pending = [
        PendingGroup {
            lane: "high".into(),
            status: "queued".into(),
            n: 2,
            oldest: 11 * 60_000 - 5_000,
        },
        PendingGroup {
            lane: "bulk".into(),
            status: "submitted".into(),
            n: 3,
            oldest: 0,
        },
    ];
    let at = 11 * 60_000;
    let m = Metrics::compute(&MetricsInput {
        at,
        window_ms: 60_000,
        ended: &rows,
        pending: &pending,
        dead_letters_now: 1,
        budget: &[],
        previous: None,
    });
    assert_eq!((m.completed, m.failed, m.dead_lettered), (2, 1, 1));
    assert_eq!((m.failed_rate, m.dead_letter_rate), (0.25, 0.25));
    assert_eq!(m.end_to_end_ms.p50, Some(1_000));
    assert_eq!(m.run_ms.p99, Some(1_800));
    assert_eq!(m.models[0].cost_micros, 7);
    assert_eq!(m.lanes[0].queued, 2);
    assert_eq!(m.lanes[1].in_flight, 3);
    assert_eq!(m.lanes[1].oldest_pending_ms, Some(at));
    let w = m.warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("bulk"));
}

#[test]
fn budget_use_is_the_difference_over_the_limit() {
    let charge = |r: u64| BudgetCharge {
        class: "sonnet".into(),
        requests: r,
        input_tokens: r * 100,
        output_tokens: 0,
        rpm: 50,
        itpm: 10_000,
        otpm: 1_000,
    };
    let input = |at, budget: &[BudgetCharge], previous| {
        Metrics::compute(&MetricsInput {
            at,
            window_ms: 60_000,
            ended: &[],
            pending: &[],
            dead_letters_now: 0,
            budget,
            previous,
        })
    };
    let first = input(60_000, &[charge(10)], None);
    assert_eq!(first.budget[0].rpm, 0.0, "no baseline yet");
    let second = input(120_000, &[charge(35)], Some(&first));
    assert_eq!(second.budget[0].rpm, 0.5);
    assert_eq!(second.budget[0].itpm, 0.25);
}

#[test]
fn the_window_runs_from_the_previous_row_between_one_and_ten_minutes() {
    assert_eq!(window_ms(1_000_000, None), 60_000);
    assert_eq!(window_ms(1_000_000, Some(1_000_000 - 90_000)), 90_000);
    // Two runs within a minute still cover a minute; a long gap covers ten.
    assert_eq!(window_ms(1_000_000, Some(1_000_000 - 5_000)), 60_000);
    assert_eq!(window_ms(10_000_000, Some(0)), 600_000);
}
