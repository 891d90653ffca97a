use super::*;
use proptest::prelude::*;

const P: Policy = Policy {
    failures: 3,
    window_ms: 10_000,
    cool_down_ms: 5_000,
    probe_lease_ms: 20_000,
};

fn http(status: u16) -> CallOutcome {
    CallOutcome::Http {
        status,
        message: "x".into(),
        retry_after_s: None,
    }
}

#[test]
fn overloads_5xx_timeouts_and_network_failures_say_the_endpoint_is_unwell() {
    for o in [
        http(529),
        http(500),
        http(503),
        CallOutcome::Timeout,
        CallOutcome::Network("reset".into()),
    ] {
        assert_eq!(Signal::of(&o), Signal::Unwell, "{o:?}");
    }
    for o in [
        CallOutcome::Success,
        http(429),
        http(400),
        http(404),
        CallOutcome::Undecodable {
            reason: "r".into(),
            raw: "{".into(),
        },
    ] {
        assert_eq!(Signal::of(&o), Signal::Answered, "{o:?}");
    }
}

#[test]
fn a_streak_inside_the_window_opens_it_and_an_answer_ends_the_streak() {
    let mut b = Breaker::default();
    assert_eq!(b.record(Signal::Unwell, 0, &P), None);
    assert_eq!(b.record(Signal::Unwell, 1_000, &P), None);
    // An answer ends the streak: two more failures do not open it.
    assert_eq!(b.record(Signal::Answered, 2_000, &P), None);
    assert_eq!(b.record(Signal::Unwell, 3_000, &P), None);
    assert_eq!(b.record(Signal::Unwell, 4_000, &P), None);
    assert_eq!(b.record(Signal::Unwell, 5_000, &P), Some(Change::Opened));
    assert_eq!(b.phase(5_000, &P), Phase::Open);
}

#[test]
fn failures_spread_wider_than_the_window_never_open_it() {
    let mut b = Breaker::default();
    for i in 0..20 {
        // Two failures per window at most.
        assert_eq!(b.record(Signal::Unwell, i * 6_000, &P), None, "failure {i}");
    }
    assert_eq!(b.admit(200_000, &P), Admit::Call);
}

#[test]
fn an_open_breaker_refuses_until_its_cool_down_then_lets_one_probe_through() {
    let mut b = Breaker::Open { at: 10_000 };
    assert_eq!(b.admit(12_000, &P), Admit::Refuse { retry_in_ms: 3_000 });
    assert_eq!(b.admit(15_000, &P), Admit::Probe);
    // Its place is held while the probe is out.
    assert!(matches!(b.admit(15_001, &P), Admit::Refuse { .. }));
    assert_eq!(b.phase(15_001, &P), Phase::HalfOpen);
}

#[test]
fn a_probe_s_success_closes_it_and_its_failure_opens_it_again() {
    let mut b = Breaker::Open { at: 0 };
    assert_eq!(b.admit(5_000, &P), Admit::Probe);
    assert_eq!(b.record(Signal::Unwell, 6_000, &P), Some(Change::Reopened));
    assert_eq!(b.admit(7_000, &P), Admit::Refuse { retry_in_ms: 4_000 });
    assert_eq!(b.admit(11_000, &P), Admit::Probe);
    assert_eq!(b.record(Signal::Answered, 11_500, &P), Some(Change::Closed));
    assert_eq!(b.admit(11_600, &P), Admit::Call);
    assert_eq!(b, Breaker::default());
}

#[test]
fn a_probe_that_never_reports_frees_its_place_after_its_lease() {
    let mut b = Breaker::Open { at: 0 };
    assert_eq!(b.admit(5_000, &P), Admit::Probe);
    assert!(matches!(b.admit(24_999, &P), Admit::Refuse { .. }));
    assert_eq!(b.admit(25_000, &P), Admit::Probe);
}

#[test]
fn a_late_outcome_of_a_call_from_before_the_opening_changes_nothing() {
    let mut b = Breaker::Open { at: 1_000 };
    assert_eq!(b.record(Signal::Answered, 1_500, &P), None);
    assert_eq!(b, Breaker::Open { at: 1_000 });
}

#[test]
fn the_state_keeps_through_json() {
    for b in [
        Breaker::default(),
        Breaker::Closed {
            streak: 2,
            since: 7,
        },
        Breaker::Open { at: 9 },
        Breaker::HalfOpen {
            opened_at: 9,
            probe: Some(12),
        },
    ] {
        let json = serde_json::to_string(&b).unwrap();
        assert_eq!(serde_json::from_str::<Breaker>(&json).unwrap(), b, "{json}");
    }
}

/// One step of a run: a call asked for, then its outcome reported (or never, for a probe lost).
#[derive(Debug, Clone)]
struct Step {
    after_ms: i64,
    unwell: bool,
    reported: bool,
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(
        (0i64..8_000, any::<bool>(), prop::bool::weighted(0.9)).prop_map(
            |(after_ms, unwell, reported)| Step {
                after_ms,
                unwell,
                reported,
            },
        ),
        1..200,
    )
}

proptest! {
    /// Whatever the run: it opens only on a streak of `failures` let-through calls that all
    /// failed inside the window; while open (cooling down) it lets nothing through; and at most
    /// one probe is out at a time within its lease.
    #[test]
    fn it_opens_only_on_a_full_streak_and_never_calls_an_open_endpoint(run in steps()) {
        let mut b = Breaker::default();
        let mut now = 0;
        // The outcomes of the calls let through while closed, since the last answer.
        let mut streak: Vec<i64> = Vec::new();
        for s in run {
            now += s.after_ms;
            let phase = b.phase(now, &P);
            let admitted = b.admit(now, &P);
            match (phase, admitted) {
                (Phase::Open, a) => prop_assert!(matches!(a, Admit::Refuse { .. }), "{a:?} while open"),
                (Phase::Closed, a) => prop_assert_eq!(a, Admit::Call),
                (Phase::HalfOpen, _) => {}
            }
            if matches!(admitted, Admit::Refuse { .. }) || !s.reported {
                continue;
            }
            let signal = if s.unwell { Signal::Unwell } else { Signal::Answered };
            let was_closed = phase == Phase::Closed;
            let change = b.record(signal, now, &P);
            if was_closed {
                if s.unwell {
                    if streak.first().is_some_and(|f| now - f > P.window_ms) {
                        streak.clear();
                    }
                    streak.push(now);
                } else {
                    streak.clear();
                }
                let full = streak.len() as u32 >= P.failures;
                prop_assert_eq!(change == Some(Change::Opened), full);
                if full {
                    streak.clear();
                }
            } else {
                prop_assert_ne!(change, Some(Change::Opened));
            }
        }
    }
}

#[test]
fn refused_credentials_open_at_once_and_a_refused_probe_reopens() {
    let mut b = Breaker::default();
    assert_eq!(b.record(Signal::Refused, 1_000, &P), Some(Change::Opened));
    assert!(matches!(b.admit(1_001, &P), Admit::Refuse { .. }));
    assert_eq!(b.admit(1_000 + P.cool_down_ms, &P), Admit::Probe);
    assert_eq!(
        b.record(Signal::Refused, 1_000 + P.cool_down_ms + 1, &P),
        Some(Change::Reopened)
    );
    assert_eq!(b.phase(1_000 + P.cool_down_ms + 2, &P), Phase::Open);
}
