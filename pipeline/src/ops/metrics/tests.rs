use super::*;
use crate::money::UsdMicros;
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
        mode: "sync".into(),
        model: Some("claude-sonnet-5-5".into()),
        created_at: created,
        started_at: Some(started),
        completed_at: done,
        columns: SpendColumns {
            input_tokens: 10,
            output_tokens: 5,
            cache_write_tokens: 0,
            cache_read_tokens: 0,
            cost_micros: UsdMicros::new(cost),
        },
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
            mode: "sync".into(),
            status: "queued".into(),
            n: 2,
            oldest: 11 * 60_000 - 5_000,
        },
        PendingGroup {
            lane: "bulk".into(),
            mode: "batch".into(),
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
        slo: Slo::default(),
    });
    assert_eq!((m.completed, m.failed, m.dead_lettered), (2, 1, 1));
    assert_eq!((m.failed_rate, m.dead_letter_rate), (0.25, 0.25));
    assert_eq!(m.end_to_end_ms.p50, Some(1_000));
    assert_eq!(m.run_ms.p99, Some(1_800));
    assert_eq!(m.models[0].spend.cost_micros, 7);
    assert_eq!(m.lanes[0].queued, 2);
    assert_eq!(m.lanes[1].in_flight, 3);
    assert_eq!(m.lanes[1].oldest_pending_ms, Some(at));
    // 11 minutes inside a batch is no warning: the batch path's thresholds are hours.
    assert_eq!(m.warnings(), vec![]);
    assert_eq!(m.batch.as_ref().unwrap().submitted, 3);
    assert_eq!(m.sync.as_ref().unwrap().waiting, 2);
    assert_eq!(m.sync.as_ref().unwrap().oldest_waiting_ms, Some(5_000));
}

fn job(status: &str, mode: &str, created: i64, started: Option<i64>, done: i64) -> EndedJob {
    EndedJob {
        status: status.into(),
        mode: mode.into(),
        model: Some("claude-sonnet-5-5".into()),
        created_at: created,
        started_at: started,
        completed_at: done,
        columns: SpendColumns {
            input_tokens: 0,
            output_tokens: 0,
            cache_write_tokens: 0,
            cache_read_tokens: 0,
            cost_micros: UsdMicros::new(0),
        },
    }
}

fn pending(lane: &str, mode: &str, status: &str, n: u64, oldest: i64) -> PendingGroup {
    PendingGroup {
        lane: lane.into(),
        mode: mode.into(),
        status: status.into(),
        n,
        oldest,
    }
}

fn row(at: i64, ended: &[EndedJob], pending: &[PendingGroup]) -> Metrics {
    Metrics::compute(&MetricsInput {
        at,
        window_ms: 60_000,
        ended,
        pending,
        dead_letters_now: 0,
        budget: &[],
        previous: None,
        slo: Slo::default(),
    })
}

const H: i64 = 3_600_000;

#[test]
fn each_path_has_its_own_figures() {
    let at = 10 * H;
    let ended = [
        job("completed", "sync", at - 3_000, Some(at - 2_000), at - 500),
        job("completed", "batch", at - 2 * H, Some(at - H), at - 1_000),
        job("failed", "batch", at - 2 * H, Some(at - H), at - 1_000),
    ];
    let m = row(at, &ended, &[]);
    let (sync, batch) = (m.sync.unwrap(), m.batch.unwrap());
    assert_eq!(sync.completed, 1);
    assert_eq!(sync.run_ms.p50, Some(1_500));
    assert_eq!(sync.end_to_end_ms.p50, Some(2_500));
    assert_eq!((batch.completed, batch.failed), (1, 1));
    assert_eq!(batch.to_submission_ms.p50, Some(H));
    assert_eq!(batch.in_batch_ms.p50, Some(H - 1_000));
    assert_eq!(batch.end_to_end_ms.p50, Some(2 * H - 1_000));
    // The whole-pipeline figures mix them (kept for the latency chart).
    assert_eq!(m.end_to_end_ms.p95, Some(2 * H - 1_000));
}

#[test]
fn batch_work_waiting_an_hour_raises_no_sync_warning() {
    let at = 10 * H;
    // A batch job completed after two hours and another accumulating for an hour (under the
    // production flush age plus grace: 70 min), beside a fast sync path.
    let ended = [
        job("completed", "batch", at - 2 * H, Some(at - H), at - 1_000),
        job("completed", "sync", at - 3_000, Some(at - 2_000), at - 500),
    ];
    let waiting = [
        pending("bulk", "batch", "queued", 40, at - H),
        pending("high", "sync", "queued", 1, at - 1_000),
    ];
    let m = row(at, &ended, &waiting);
    assert_eq!(m.warnings(), vec![], "{:?}", m.warnings());
}

#[test]
fn a_slow_sync_path_warns_and_names_its_path_and_figure() {
    let at = 10 * H;
    let ended: Vec<EndedJob> = (0..20)
        .map(|i| {
            job(
                "completed",
                "sync",
                at - 90_000 - i,
                Some(at - 89_000),
                at - 1,
            )
        })
        .collect();
    let waiting = [pending("high", "sync", "queued", 3, at - 11 * 60_000)];
    let w = row(at, &ended, &waiting).warnings();
    let named: Vec<(&str, &str)> = w
        .iter()
        .map(|w| (w.path.as_str(), w.metric.as_str()))
        .collect();
    assert_eq!(
        named,
        [("sync", "p95_end_to_end_ms"), ("sync", "oldest_waiting_ms")]
    );
    assert_eq!(w[0].threshold_ms, Some(60_000));
    assert!(
        w[0].message.starts_with("sync path: p95"),
        "{}",
        w[0].message
    );
    assert!(
        w[0].message.contains("(threshold 60.0 s)"),
        "{}",
        w[0].message
    );
    assert_eq!(w[1].value_ms, Some(11 * 60_000));
}

#[test]
fn a_sync_job_on_the_bulk_lane_waits_from_the_end_of_its_delivery_delay() {
    let at = 10 * H;
    let slo = Slo::default();
    let m = row(
        at,
        &[],
        &[pending(
            "bulk",
            "sync",
            "queued",
            1,
            at - slo.sync_wait_ms - 1,
        )],
    );
    assert_eq!(
        m.sync.as_ref().unwrap().oldest_waiting_ms,
        Some(slo.sync_wait_ms + 1 - slo.bulk_delay_ms)
    );
    assert_eq!(m.warnings(), vec![]);
}

#[test]
fn batch_warnings_come_past_the_flush_age_and_before_the_expiry() {
    let at = 30 * H;
    let slo = Slo::default();
    assert!(slo.batch_submit_ms > slo.batch_flush_age_ms);
    assert!(slo.batch_submit_ms + slo.batch_in_batch_ms < BATCH_EXPIRY_MS);
    let late = [
        pending(
            "bulk",
            "batch",
            "queued",
            5,
            at - slo.batch_submit_ms - 60_000,
        ),
        pending("bulk", "batch", "submitted", 5, at - 20 * H),
    ];
    let w = row(at, &[], &late).warnings();
    let named: Vec<(&str, &str)> = w
        .iter()
        .map(|w| (w.path.as_str(), w.metric.as_str()))
        .collect();
    assert_eq!(
        named,
        [
            ("batch", "oldest_accumulating_ms"),
            ("batch", "oldest_submitted_ms")
        ]
    );
    assert!(w.iter().all(|w| w.message.starts_with("batch path: ")));
}

#[test]
fn a_row_from_before_per_path_slos_is_judged_by_the_old_thresholds() {
    let mut m = row(
        10 * H,
        &[],
        &[pending("high", "sync", "queued", 1, 10 * H - 11 * 60_000)],
    );
    m.sync = None;
    m.batch = None;
    m.slo = None;
    let back: Metrics = serde_json::from_value({
        let mut v = serde_json::to_value(&m).unwrap();
        let o = v.as_object_mut().unwrap();
        o.remove("sync");
        o.remove("batch");
        o.remove("slo");
        v
    })
    .unwrap();
    let w = back.warnings();
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].metric, "oldest_waiting_ms");
}

#[test]
fn spans_read_as_people_say_them() {
    assert_eq!(span(850), "850 ms");
    assert_eq!(span(12_500), "12.5 s");
    assert_eq!(span(90_000), "90.0 s");
    assert_eq!(span(14 * 60_000 + 5), "14 min");
    assert_eq!(span(20 * H), "20.0 h");
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
            slo: Slo::default(),
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
