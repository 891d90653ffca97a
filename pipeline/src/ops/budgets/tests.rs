use super::*;

fn budget(daily: Option<u64>, monthly: Option<u64>, today: u64, month: u64) -> DailyBudget {
    DailyBudget {
        daily_cap_micros: daily.map(UsdMicros::new),
        monthly_cap_micros: monthly.map(UsdMicros::new),
        committed_today_micros: UsdMicros::new(today),
        committed_month_micros: UsdMicros::new(month),
        ..DailyBudget::default()
    }
}

#[test]
fn a_request_fits_while_committed_plus_its_worst_case_stays_within_each_cap() {
    let m = UsdMicros::new;
    assert!(check_caps(&budget(Some(1_000), None, 600, 600), m(400)).is_ok());
    let r = check_caps(&budget(Some(1_000), None, 600, 600), m(401)).unwrap_err();
    assert_eq!(
        r,
        BudgetRefusal {
            cap: Cap::Daily,
            cap_micros: m(1_000),
            committed_micros: m(600),
            left_micros: m(400),
            needed_micros: m(401),
        }
    );
    let r = check_caps(&budget(Some(10_000), Some(5_000), 100, 4_900), m(200)).unwrap_err();
    assert_eq!((r.cap, r.left_micros), (Cap::Monthly, m(100)));
    assert!(check_caps(&budget(None, None, u64::MAX / 2, 0), m(1)).is_ok());
    let over = check_caps(&budget(Some(5), None, 9, 9), m(0)).unwrap_err();
    assert_eq!(
        over.left_micros,
        m(0),
        "an overdrawn cap has nothing left, not a negative"
    );
}

#[test]
fn a_refusal_is_a_429_naming_the_cap_with_the_figures_in_its_body() {
    let refusal = check_caps(
        &budget(Some(1_000_000), None, 999_000, 0),
        UsdMicros::new(2_000),
    )
    .unwrap_err();
    let e = ApiError::budget_exceeded(refusal);
    assert_eq!((e.status, e.body.code.as_str()), (429, "budget_exceeded"));
    assert!(
        e.body
            .error
            .contains("daily budget of $1.000000 has $0.001000 left"),
        "{}",
        e.body.error
    );
    let json = serde_json::to_value(&e.body).unwrap();
    assert_eq!(json["budget"]["cap"], "daily");
    assert_eq!(json["budget"]["committed_micros"], 999_000);
    assert_eq!(json["budget"]["needed_micros"], 2_000);
}

proptest::proptest! {
    #[test]
    fn admitted_requests_never_commit_past_a_cap(
        cap in 0u64..10_000_000, needs in proptest::collection::vec(0u64..3_000_000, 0..50),
    ) {
        let mut b = budget(Some(cap), Some(cap), 0, 0);
        for n in needs {
            if check_caps(&b, UsdMicros::new(n)).is_ok() {
                b.committed_today_micros += UsdMicros::new(n);
                b.committed_month_micros += UsdMicros::new(n);
            }
            proptest::prop_assert!(b.committed_today_micros.micros() <= cap);
        }
    }
}

#[test]
fn soft_threshold_and_settings() {
    let m = UsdMicros::new;
    assert!(
        soft_reached(m(5), Some(m(5)))
            && !soft_reached(m(4), Some(m(5)))
            && !soft_reached(m(9), None)
    );
    let s = BudgetSetting::parse(
        br#"{"user_id":"ann","daily_cap_micros":5000,"monthly_cap_micros":90000,"soft_micros":null}"#,
    )
    .unwrap();
    assert_eq!(
        (s.daily_cap_micros, s.monthly_cap_micros, s.soft_micros),
        (Some(m(5000)), Some(m(90_000)), None)
    );
    assert!(BudgetSetting::parse(br#"{"user_id":"ann"}"#)
        .unwrap()
        .is_empty());
    let w = BudgetSetting::parse(br#"{"user_id":"ann","share_weight":3}"#).unwrap();
    assert_eq!((w.share_weight, w.is_empty()), (Some(3), false));
    for bad in [
        &br#"{"user_id":"ann","daily_cap_micros":-1}"#[..],
        br#"{"user_id":"ann","daily_cap_micros":"5"}"#,
        br#"{"user_id":"ann","monthly_cap_micros":1.5}"#,
        br#"{"user_id":"ann","share_weight":0}"#,
        br#"{"user_id":"ann","share_weight":101}"#,
        br#"{"daily_cap_micros":5}"#,
        br#"{"user_id":"ann","cap":5}"#,
    ] {
        assert_eq!(BudgetSetting::parse(bad).unwrap_err().status, 400);
    }
}
#[test]
fn periods_are_the_utc_day_and_month_of_the_job() {
    // 2026-12-01T00:00:00Z and the millisecond before it.
    let dec = 1_796_083_200_000;
    assert_eq!(periods(dec), ("d:20788".into(), "m:2026-12".into()));
    assert_eq!(periods(dec - 1), ("d:20787".into(), "m:2026-11".into()));
}

#[test]
fn a_jobs_reservation_covers_its_fallbacks_and_is_halved_in_a_batch() {
    let now = 1_796_083_200_000;
    let req = crate::feedback::request("claude-sonnet-5-5", "It froze.");
    let chain: Vec<String> = ["claude-sonnet-5-5", "claude-haiku-5-5"]
        .map(String::from)
        .into();
    let alone = worst_case(&req, None, Mode::Sync, &[], now);
    assert_eq!(
        worst_case(&req, None, Mode::Sync, &chain, now),
        alone,
        "a cheaper fallback adds nothing"
    );
    let batch = worst_case(&req, None, Mode::Batch, &[], now);
    assert!(batch.micros() * 2 <= alone.micros() + 1 && batch.micros() * 2 + 1 >= alone.micros());
}

#[test]
fn a_refusal_after_a_race_names_a_cap_even_when_the_request_fits_again() {
    let r = explain_refusal(&budget(Some(1_000), Some(500), 10, 400), UsdMicros::new(50));
    assert_eq!((r.cap, r.left_micros), (Cap::Monthly, UsdMicros::new(100)));
    let r = explain_refusal(&budget(Some(1_000), None, 990, 990), UsdMicros::new(50));
    assert_eq!((r.cap, r.left_micros), (Cap::Daily, UsdMicros::new(10)));
}
#[test]
fn a_user_over_the_rate_or_the_queue_limit_is_told_when_to_come_back() {
    let l = UserLimits {
        max_queued: 10,
        max_per_min: 100,
    };
    assert!(check_user_limits(&l, 9, 99, 1).is_ok());
    let e = check_user_limits(&l, 0, 100, 1).unwrap_err();
    assert_eq!(
        (e.status, e.body.code.as_str(), e.body.retry_after_s),
        (429, "rate_limited", Some(60))
    );
    let e = check_user_limits(&l, 10, 0, 1).unwrap_err();
    assert_eq!(
        (e.body.code.as_str(), e.body.retry_after_s),
        ("too_many_queued", Some(10))
    );
    assert!(
        check_user_limits(&l, 5, 0, 6).is_err(),
        "an upload counts every file"
    );
    let off = UserLimits {
        max_queued: 0,
        max_per_min: 0,
    };
    assert!(check_user_limits(&off, u64::MAX / 2, u64::MAX / 2, 1).is_ok());
}
