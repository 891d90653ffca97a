//! The budget's invariants: a bucket never goes negative, reservations never exceed the limit,
//! a settlement replaces the estimate with the real usage.

use super::*;
use crate::anthropic::Usage;
use proptest::prelude::*;

const M: &str = "claude-sonnet-5-5";

fn settings(rpm: u64, itpm: u64, otpm: u64) -> Settings {
    Settings {
        limits: Limits { rpm, itpm, otpm },
        lanes: LaneLimits {
            high: 100,
            bulk: 100,
        },
        enforce: true,
        breaker: crate::breaker::Policy::default(),
    }
}

fn reserve(job: &str, input: u64, output: u64) -> Reserve {
    Reserve {
        job_id: job.into(),
        lane: Lane::High,
        model: M.into(),
        need: Need { input, output },
        ttl_ms: 60_000,
        user: None,
        routes: vec![],
    }
}

fn settle(job: &str, used: Option<(u64, u64)>) -> Settle {
    Settle {
        job_id: job.into(),
        model: None,
        used: used.map(|(input, output)| Need { input, output }),
        reported: vec![],
        rate_limited_for_s: None,
        route: Provider::Anthropic,
        signal: None,
    }
}

#[test]
fn a_bucket_refills_its_limit_per_minute_exactly() {
    let mut b = Bucket::full(60, 0);
    b.take(60);
    assert_eq!(b.remaining(), 0);
    assert_eq!(b.wait_ms(1), 1_000);
    b.refill(1_000);
    assert_eq!(b.remaining(), 1);
    b.refill(120_000);
    assert_eq!(b.remaining(), 60, "never beyond capacity");
}

#[test]
fn usage_beyond_the_level_is_debt_paid_back_before_anything_new() {
    let mut b = Bucket::full(60, 0);
    b.take(70);
    assert_eq!((b.remaining(), b.debt()), (0, 10));
    assert_eq!(b.wait_ms(1), 11_000);
    b.refill(10_000);
    assert_eq!((b.remaining(), b.debt()), (0, 0));
}

#[test]
fn a_reservation_that_does_not_fit_says_when_it_will() {
    let mut budget = Budget::default();
    let s = settings(60, 1_000, 1_000);
    assert!(budget.reserve(&reserve("a", 900, 10), &s, 0).granted);
    let g = budget.reserve(&reserve("b", 400, 10), &s, 0);
    assert!(!g.granted);
    assert_eq!(g.limited_by.as_deref(), Some("input_tokens"));
    // 300 tokens at 1,000 per minute: 18 s.
    assert_eq!(g.retry_after_ms, 18_000);
    assert!(budget.reserve(&reserve("b", 400, 10), &s, 18_000).granted);
}

#[test]
fn settling_refunds_the_unused_estimate_and_cache_reads_do_not_count() {
    let mut budget = Budget::default();
    let s = settings(60, 10_000, 1_000);
    assert!(budget.reserve(&reserve("a", 2_000, 1_000), &s, 0).granted);
    let usage = Usage {
        input_tokens: 100,
        output_tokens: 200,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 1_900,
        cache_creation: None,
        speed: None,
    };
    let mut st = settle("a", None);
    st.used = Some(Need::used(&usage));
    budget.settle(&st, &s, 0);
    let v = budget.view(&s, 0);
    assert_eq!(v.classes[0].input_tokens.remaining, 9_900);
    assert_eq!(v.classes[0].output_tokens.remaining, 800);
    assert_eq!(v.classes[0].requests.remaining, 59);
    assert_eq!(v.reservations, 0);
}

#[test]
fn an_error_answer_refunds_its_tokens_but_not_its_request() {
    let mut budget = Budget::default();
    let s = settings(60, 10_000, 1_000);
    budget.reserve(&reserve("a", 2_000, 1_000), &s, 0);
    budget.settle(&settle("a", None), &s, 0);
    let v = budget.view(&s, 0);
    assert_eq!(v.classes[0].input_tokens.remaining, 10_000);
    assert_eq!(v.classes[0].requests.remaining, 59);
}

#[test]
fn a_redelivered_job_renews_its_reservation_instead_of_paying_twice() {
    let mut budget = Budget::default();
    let s = settings(60, 10_000, 1_000);
    budget.reserve(&reserve("a", 2_000, 100), &s, 0);
    assert!(budget.reserve(&reserve("a", 2_000, 100), &s, 0).granted);
    assert_eq!(budget.view(&s, 0).classes[0].input_tokens.remaining, 8_000);
}

#[test]
fn a_lapsed_lease_frees_its_slot_and_the_tokens_refill() {
    let mut budget = Budget::default();
    let mut s = settings(600, 10_000, 1_000);
    s.lanes = LaneLimits { high: 1, bulk: 1 };
    let mut r = reserve("a", 10_000, 10);
    r.ttl_ms = 5_000;
    assert!(budget.reserve(&r, &s, 0).granted);
    let g = budget.reserve(&reserve("b", 1, 1), &s, 1);
    assert_eq!(g.limited_by.as_deref(), Some("input_tokens"));
    // After a minute the dead worker's tokens are back and its slot is free.
    assert!(budget.reserve(&reserve("b", 1, 1), &s, 60_000).granted);
    assert_eq!(budget.view(&s, 60_000).reservations, 1);
}

#[test]
fn the_lane_limit_holds_alongside_the_tokens() {
    let mut budget = Budget::default();
    let mut s = settings(600, 100_000, 100_000);
    s.lanes = LaneLimits { high: 2, bulk: 1 };
    assert!(budget.reserve(&reserve("a", 1, 1), &s, 0).granted);
    assert!(budget.reserve(&reserve("b", 1, 1), &s, 0).granted);
    let g = budget.reserve(&reserve("c", 1, 1), &s, 0);
    assert_eq!(g.limited_by.as_deref(), Some("lane"));
    budget.settle(&settle("a", Some((1, 1))), &s, 0);
    assert!(budget.reserve(&reserve("c", 1, 1), &s, 0).granted);
}

#[test]
fn the_providers_headers_teach_limits_and_remaining() {
    let mut budget = Budget::default();
    let s = settings(50, 30_000, 8_000);
    budget.reserve(&reserve("a", 100, 100), &s, 0);
    let headers = [
        ("anthropic-ratelimit-requests-limit", "4000"),
        ("anthropic-ratelimit-requests-remaining", "3999"),
        ("anthropic-ratelimit-input-tokens-limit", "2000000"),
        ("anthropic-ratelimit-input-tokens-remaining", "1000"),
        (
            "anthropic-ratelimit-input-tokens-reset",
            "1970-01-01T00:00:01Z",
        ),
    ];
    let get = |k: &str| {
        headers
            .iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.to_string())
    };
    let mut st = settle("a", Some((100, 100)));
    st.reported = reported(get);
    assert_eq!(st.reported.len(), 2);
    assert_eq!(st.reported[1].reset_at, Some(1_000));
    budget.settle(&st, &s, 0);
    let v = budget.view(&s, 0);
    let c = &v.classes[0];
    assert_eq!(c.requests.limit, 4_000);
    // The requests bucket kept our (lower) count of 49 rather than 3,999.
    assert_eq!(c.requests.remaining, 49);
    assert_eq!(c.input_tokens.limit, 2_000_000);
    assert_eq!(c.input_tokens.remaining, 1_000);
    assert_eq!(c.output_tokens.limit, 8_000);
}

#[test]
fn a_429_pauses_the_class_until_the_reset_it_names() {
    let mut budget = Budget::default();
    let s = settings(50, 30_000, 8_000);
    budget.reserve(&reserve("a", 100, 100), &s, 0);
    let mut st = settle("a", None);
    st.rate_limited_for_s = Some(3);
    st.reported = vec![Reported {
        family: Family::OutputTokens,
        limit: Some(8_000),
        remaining: Some(0),
        reset_at: Some(7_500),
    }];
    budget.settle(&st, &s, 0);
    let g = budget.reserve(&reserve("b", 1, 1), &s, 1_000);
    assert_eq!(g.limited_by.as_deref(), Some("paused"));
    assert_eq!(g.retry_after_ms, 6_500);
    // Another model class is not paused.
    let mut other = reserve("c", 1, 1);
    other.model = "claude-haiku-4-5".into();
    assert!(budget.reserve(&other, &s, 1_000).granted);
    assert!(budget.reserve(&reserve("b", 1, 1), &s, 7_500).granted);
}

#[test]
fn switched_off_the_budget_tracks_but_never_refuses_tokens() {
    let mut budget = Budget::default();
    let mut s = settings(1, 10, 10);
    s.enforce = false;
    for i in 0..5 {
        assert!(
            budget
                .reserve(&reserve(&format!("j{i}"), 100, 100), &s, 0)
                .granted
        );
    }
    assert_eq!(budget.view(&s, 0).classes[0].requests.debt, 4);
}

#[test]
fn a_settlement_is_read_from_the_calls_outcome() {
    use crate::outcome::CallOutcome;
    let limited = Err(CallOutcome::Http {
        status: 429,
        message: "slow down".into(),
        retry_after_s: Some(7),
    });
    let s = Settle::after_call("j", (Provider::Anthropic, M), &limited, vec![]);
    assert_eq!((s.used, s.rate_limited_for_s), (None, Some(7)));
    assert_eq!(s.signal, Some(crate::breaker::Signal::Answered));
    let down = Err(CallOutcome::Timeout);
    assert_eq!(
        Settle::after_call("j", (Provider::Anthropic, M), &down, vec![]),
        Settle {
            signal: Some(crate::breaker::Signal::Unwell),
            ..Settle::unused("j", M)
        }
    );
    // An unreadable 200 was still billed: what it used counts against the buckets.
    let garbled = Err(CallOutcome::Undecodable {
        reason: "r".into(),
        raw: r#"{"content":{},"usage":{"input_tokens":10,"output_tokens":4}}"#.into(),
    });
    let s = Settle::after_call("j", (Provider::Anthropic, M), &garbled, vec![]);
    assert_eq!(
        s.used,
        Some(Need {
            input: 10,
            output: 4
        })
    );
}

#[test]
fn dated_models_share_their_class() {
    assert_eq!(
        class_of("claude-haiku-4-5"),
        class_of("claude-haiku-4-5-20251001")
    );
    assert_eq!(class_of("claude-opus-4-8"), class_of("claude-opus-4-5"));
    assert_ne!(class_of("claude-sonnet-5"), class_of(M));
    assert_ne!(class_of("claude-haiku-4-5"), class_of(M));
    assert_eq!(class_of("some-new-model"), "some-new-model");
}

/// Operations of the property tests: reserve (job, input, output), settle (job, real input,
/// real output), or let time pass.
#[derive(Debug, Clone)]
enum Op {
    Reserve(u8, u64, u64),
    Settle(u8, u64, u64),
    Wait(i64),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        (0u8..12, 0u64..3_000, 0u64..800).prop_map(|(j, i, o)| Op::Reserve(j, i, o)),
        (0u8..12, 0u64..3_000, 0u64..900).prop_map(|(j, i, o)| Op::Settle(j, i, o)),
        (0i64..5_000).prop_map(Op::Wait),
    ];
    proptest::collection::vec(op, 1..300)
}

proptest! {
    #[test]
    fn no_bucket_ever_goes_negative_or_beyond_its_capacity(ops in ops()) {
        let s = settings(30, 5_000, 2_000);
        let mut budget = Budget::default();
        let mut now = 0;
        for op in ops {
            match op {
                Op::Reserve(j, i, o) => { budget.reserve(&reserve(&format!("j{j}"), i, o), &s, now); }
                Op::Settle(j, i, o) => { budget.settle(&settle(&format!("j{j}"), Some((i, o))), &s, now); }
                Op::Wait(ms) => now += ms,
            }
            for c in budget.classes.values() {
                for b in [&c.requests, &c.input, &c.output] {
                    prop_assert!(b.level <= b.capacity());
                    prop_assert!(b.debt == 0 || b.level == 0, "debt only when empty");
                }
            }
        }
    }

    #[test]
    fn reservations_never_exceed_the_limit_within_a_window(ops in ops()) {
        // Granted reservations, settled at their estimate: over any interval, what was granted
        // is at most one full bucket plus the refill of the interval.
        let s = settings(30, 5_000, 2_000);
        let mut budget = Budget::default();
        let mut now = 0;
        let mut grants: Vec<(i64, u64, u64)> = vec![];
        for op in ops {
            match op {
                Op::Reserve(j, i, o) => {
                    let job = format!("j{j}");
                    let renewing = budget.leases.get(&job).is_some_and(|l| l.expires_at > now);
                    if budget.reserve(&reserve(&job, i, o), &s, now).granted && !renewing {
                        grants.push((now, i, o));
                    }
                }
                Op::Settle(j, _, _) => {
                    let job = format!("j{j}");
                    if let Some(l) = budget.leases.get(&job).cloned() {
                        budget.settle(&settle(&job, Some((l.need.input, l.need.output))), &s, now);
                    }
                }
                Op::Wait(ms) => now += ms,
            }
        }
        for (a, &(t0, _, _)) in grants.iter().enumerate() {
            let (mut reqs, mut input, mut output) = (0u64, 0u64, 0u64);
            for &(t, i, o) in &grants[a..] {
                reqs += 1;
                input += i.min(5_000);
                output += o.min(2_000);
                let window = (t - t0) as u64;
                prop_assert!(reqs * 60_000 <= 30 * 60_000 + 30 * window);
                prop_assert!(input * 60_000 <= 5_000 * 60_000 + 5_000 * window);
                prop_assert!(output * 60_000 <= 2_000 * 60_000 + 2_000 * window);
            }
        }
    }

    #[test]
    fn reconciliation_is_exact(ops in ops()) {
        // Whatever the estimates, once every reservation is settled the buckets have been
        // charged exactly the real usage, and at the same instant they stand exactly where a
        // budget charged the real usage directly would.
        let s = settings(1_000, 1_000_000, 1_000_000);
        let mut budget = Budget::default();
        let mut direct = Budget::default();
        let mut real = (0u64, 0u64, 0u64);
        for op in ops {
            if let Op::Reserve(j, i, o) = op {
                let job = format!("j{j}");
                if budget.reserve(&reserve(&job, i, o), &s, 0).granted {
                    let (ri, ro) = (i / 2 + j as u64, o + j as u64);
                    budget.settle(&settle(&job, Some((ri, ro))), &s, 0);
                    direct.reserve(&reserve(&job, ri, ro), &s, 0);
                    direct.settle(&settle(&job, Some((ri, ro))), &s, 0);
                    real.0 += 1;
                    real.1 += ri;
                    real.2 += ro;
                }
            }
        }
        let (a, b) = (budget.view(&s, 0), direct.view(&s, 0));
        prop_assert_eq!(&a.classes, &b.classes);
        if let Some(c) = a.classes.first() {
            prop_assert_eq!((c.requests.charged, c.input_tokens.charged, c.output_tokens.charged), real);
        }
    }
}

#[test]
fn what_a_user_is_granted_counts_in_their_share_for_a_minute() {
    let mut b = Budget::default();
    let s = settings(1_000, 1_000_000, 1_000_000);
    let mut r = reserve("j1", 100, 400);
    r.user = Some("whale".into());
    assert!(b.reserve(&r, &s, 0).granted);
    let users = ["whale".to_string(), "ann".to_string()];
    let u = b.usage(&users, 1_000);
    assert_eq!((u["whale"], u["ann"]), (500, 0));
    assert_eq!(
        b.usage(&users, 61_000)["whale"],
        0,
        "a minute later it is forgotten"
    );
}

mod routes {
    use super::*;
    use crate::breaker::{Change, Phase, Policy, Signal};

    const A: Provider = Provider::Anthropic;
    const B: Provider = Provider::Bedrock;

    fn on(job: &str, routes: &[Provider]) -> Reserve {
        Reserve {
            routes: routes.to_vec(),
            ..reserve(job, 100, 100)
        }
    }

    fn called(job: &str, route: Provider, signal: Signal) -> Settle {
        Settle {
            model: Some(M.into()),
            route,
            signal: Some(signal),
            ..settle(job, None)
        }
    }

    /// Five unwell calls on `route` in a row, each reserved and settled at `now`.
    fn fail_five(b: &mut Budget, s: &Settings, route: Provider, now: i64) -> Option<Tripped> {
        let mut last = None;
        for i in 0..5 {
            let job = format!("f{route:?}{now}{i}");
            b.reserve(&on(&job, &[route]), s, now);
            last = b.settle(&called(&job, route, Signal::Unwell), s, now);
        }
        last
    }

    #[test]
    fn an_open_primary_sends_calls_to_the_next_route_on_its_own_budget() {
        let s = settings(1_000, 1_000_000, 1_000_000);
        let mut b = Budget::default();
        let tripped = fail_five(&mut b, &s, A, 0).unwrap();
        assert_eq!((tripped.route, tripped.change), (A, Change::Opened));
        assert_eq!(tripped.model, M);
        let g = b.reserve(&on("j", &[A, B]), &s, 1_000);
        assert!(g.granted);
        assert_eq!((g.route, g.probe), (B, false));
        let view = b.view(&s, 1_000);
        assert!(view.classes.iter().any(|c| c.class == "bedrock:sonnet-5-5"));
        // A redelivery keeps the route it was granted.
        assert_eq!(b.reserve(&on("j", &[A, B]), &s, 1_500).route, B);
    }

    #[test]
    fn after_the_cool_down_one_probe_goes_to_the_primary_and_its_answer_closes_it() {
        let s = settings(1_000, 1_000_000, 1_000_000);
        let p = Policy::default();
        let mut b = Budget::default();
        fail_five(&mut b, &s, A, 0);
        let later = p.cool_down_ms + 1;
        let probe = b.reserve(&on("p", &[A, B]), &s, later);
        assert_eq!((probe.route, probe.probe), (A, true));
        let other = b.reserve(&on("o", &[A, B]), &s, later);
        assert_eq!(
            (other.route, other.probe),
            (B, false),
            "one probe at a time"
        );
        let closed = b.settle(&called("p", A, Signal::Answered), &s, later + 10);
        assert_eq!(closed.map(|t| t.change), Some(Change::Closed));
        assert_eq!(b.reserve(&on("n", &[A, B]), &s, later + 20).route, A);
    }

    #[test]
    fn every_route_open_refuses_until_the_first_cool_down_ends() {
        let s = settings(1_000, 1_000_000, 1_000_000);
        let mut b = Budget::default();
        fail_five(&mut b, &s, A, 0);
        fail_five(&mut b, &s, B, 10_000);
        let g = b.reserve(&on("j", &[A, B]), &s, 12_000);
        assert!(!g.granted);
        assert_eq!(g.limited_by.as_deref(), Some("breaker"));
        assert_eq!(g.retry_after_ms, 30_000 - 12_000);
    }

    #[test]
    fn with_one_route_the_breaker_is_kept_but_never_refuses() {
        let s = settings(1_000, 1_000_000, 1_000_000);
        let mut b = Budget::default();
        fail_five(&mut b, &s, A, 0);
        let view = b.view(&s, 1);
        assert_eq!(view.breakers.len(), 1);
        assert_eq!(view.breakers[0].phase, Phase::Open);
        assert_eq!(view.breakers[0].open_since, Some(0));
        for routes in [vec![], vec![A]] {
            let g = b.reserve(&on(&format!("j{}", routes.len()), &routes), &s, 2);
            assert!(g.granted && g.route == A && !g.probe);
        }
    }

    #[test]
    fn a_probe_refused_for_tokens_does_not_hold_the_probes_place() {
        let s = settings(1_000, 1_000_000, 1_000_000);
        let mut b = Budget::default();
        fail_five(&mut b, &s, A, 0);
        // The primary's class is paused by a 429 past the cool-down.
        let limited = Settle {
            rate_limited_for_s: Some(60),
            model: Some(M.into()),
            ..settle("x", None)
        };
        b.settle(&limited, &s, 0);
        let later = Policy::default().cool_down_ms + 1;
        let g = b.reserve(&on("p", &[A, B]), &s, later);
        assert_eq!(g.limited_by.as_deref(), Some("paused"));
        let after_pause = 60_001;
        let g = b.reserve(&on("q", &[A, B]), &s, after_pause);
        assert_eq!((g.route, g.probe), (A, true), "the place was free");
    }
}
