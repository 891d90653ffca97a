use super::*;
use crate::anthropic::admin::CostReport;
use crate::clock::date_ms;
use serde_json::json;

fn day(y: i32, m: u32, d: u32) -> i64 {
    date_ms(y, m, d).unwrap() / DAY_MS
}

/// The docs' example shape, with our amounts.
fn report(lines: &[(&str, Option<&str>, &str, &str)]) -> CostReport {
    let mut buckets: Vec<serde_json::Value> = Vec::new();
    for (start, model, cost_type, amount) in lines {
        let end = format!("{}T00:00:00Z", &start[..10]);
        buckets.push(json!({
            "starting_at": start, "ending_at": end,
            "results": [{"amount": amount, "currency": "USD", "cost_type": cost_type,
                         "model": model, "service_tier": "standard",
                         "token_type": "uncached_input_tokens", "workspace_id": null,
                         "description": "x", "context_window": "0-200k", "inference_geo": "global"}]
        }));
    }
    serde_json::from_value(json!({"data": buckets, "has_more": false, "next_page": null})).unwrap()
}

#[test]
fn the_docs_example_cost_report_parses() {
    let r: CostReport = serde_json::from_value(json!({"data":[{"ending_at":"2025-08-02T00:00:00Z","results":[{"amount":"123.78912","context_window":"0-200k","cost_type":"tokens","currency":"USD",
 "description":"Claude Sonnet 4 Usage - Input Tokens","inference_geo":"global","model":"claude-opus-4-6","service_tier":"standard",
 "token_type":"uncached_input_tokens","workspace_id":"wrkspc_01JwQvzr7rXLA5AGx3HKfFUJ"}],"starting_at":"2025-08-01T00:00:00Z"}],
 "has_more":true,"next_page":"page_MjAyNS0wNS0xNFQwMDowMDowMFo="})).unwrap();
    assert!(r.has_more);
    assert_eq!(
        r.data[0].results[0].model.as_deref(),
        Some("claude-opus-4-6")
    );
    // 123.78912 cents = $1.2378912 → 1,237,891 µ$.
    assert_eq!(
        cents_to_micros(&r.data[0].results[0].amount),
        Some(1_237_891)
    );
}

#[test]
fn cents_become_micro_dollars_exactly() {
    assert_eq!(cents_to_micros("123.45"), Some(1_234_500)); // the docs: $1.23 (and 0.45 ¢)
    assert_eq!(cents_to_micros("0"), Some(0));
    assert_eq!(cents_to_micros("1"), Some(10_000));
    assert_eq!(cents_to_micros("0.0001"), Some(1));
    assert_eq!(cents_to_micros("0.00005"), Some(1));
    assert_eq!(cents_to_micros("0.00004999"), Some(0));
    for bad in ["", ".5", "-1", "1e3", "1.2.3", "12a", " 1"] {
        assert_eq!(cents_to_micros(bad), None, "{bad:?}");
    }
}

#[test]
fn an_honest_month_has_no_difference_and_other_costs_are_apart() {
    let d1 = day(2026, 11, 30);
    let ours = [
        OurCost {
            day: d1,
            model: "claude-sonnet-5-5".into(),
            cost_micros: 1_234_500,
        },
        OurCost {
            day: d1 + 1,
            model: "claude-haiku-5-5".into(),
            cost_micros: 10_000,
        },
    ];
    let theirs = report(&[
        (
            "2026-11-30T00:00:00Z",
            Some("claude-sonnet-5-5"),
            "tokens",
            "100",
        ),
        (
            "2026-11-30T00:00:00Z",
            Some("claude-sonnet-5-5"),
            "tokens",
            "23.45",
        ),
        (
            "2026-12-01T00:00:00Z",
            Some("claude-haiku-5-5"),
            "tokens",
            "1",
        ),
        ("2026-12-01T00:00:00Z", None, "web_search", "3"),
    ]);
    let r = compare(&ours, &[theirs], d1, d1 + 2, Threshold::default()).unwrap();
    assert_eq!(r.flagged, 0, "{r:?}");
    assert_eq!(r.lines.len(), 2);
    assert!(r.lines.iter().all(|l| l.diff_micros == 0));
    assert_eq!(r.ours_micros, r.billed_micros);
    assert_eq!(r.other_micros, 30_000);
    assert_eq!(r.lines[0].day, "2026-11-30");
}

#[test]
fn a_mispriced_model_a_lost_job_and_a_double_payment_are_flagged() {
    let d = day(2026, 11, 30);
    let ours = [
        // Priced at half what was billed (a wrong price).
        OurCost {
            day: d,
            model: "claude-opus-5-5".into(),
            cost_micros: 500_000,
        },
        // Billed nothing we know of for this one: ours only (a call we recorded twice?).
        OurCost {
            day: d,
            model: "claude-haiku-5-5".into(),
            cost_micros: 90_000,
        },
        // Off by less than a cent: rounding, not flagged.
        OurCost {
            day: d,
            model: "claude-sonnet-5-5".into(),
            cost_micros: 2_000_000,
        },
    ];
    let theirs = report(&[
        (
            "2026-11-30T00:00:00Z",
            Some("claude-opus-5-5"),
            "tokens",
            "100",
        ),
        (
            "2026-11-30T00:00:00Z",
            Some("claude-sonnet-5-5"),
            "tokens",
            "200.5",
        ),
        // Billed, but we have no such cost (a lost job, or a call paid twice).
        (
            "2026-11-30T00:00:00Z",
            Some("claude-sonnet-5"),
            "tokens",
            "7",
        ),
    ]);
    let r = compare(&ours, &[theirs], d, d + 1, Threshold::default()).unwrap();
    let line = |m: &str| r.lines.iter().find(|l| l.model == m).unwrap();
    assert!(line("claude-opus-5-5").flagged);
    assert_eq!(line("claude-opus-5-5").diff_micros, 500_000);
    assert!(line("claude-haiku-5-5").flagged);
    assert_eq!(line("claude-haiku-5-5").billed_micros, 0);
    assert!(line("claude-sonnet-5").flagged);
    assert!(!line("claude-sonnet-5-5").flagged, "{r:?}");
    assert_eq!(r.flagged, 3);
}

#[test]
fn days_outside_the_range_and_bad_reports() {
    let d = day(2026, 11, 30);
    let ours = [OurCost {
        day: d - 1,
        model: "m".into(),
        cost_micros: 5,
    }];
    let theirs = report(&[("2026-12-01T00:00:00Z", Some("m"), "tokens", "9")]);
    let r = compare(&ours, &[theirs], d, d + 1, Threshold::default()).unwrap();
    assert!(r.lines.is_empty());
    let mut eur = report(&[("2026-11-30T00:00:00Z", Some("m"), "tokens", "9")]);
    eur.data[0].results[0].currency = "EUR".into();
    assert_eq!(
        compare(&[], &[eur], d, d + 1, Threshold::default()),
        Err(ReportError::Currency("EUR".into()))
    );
    let bad = report(&[("2026-11-30T00:00:00Z", Some("m"), "tokens", "-9")]);
    assert!(matches!(
        compare(&[], &[bad], d, d + 1, Threshold::default()),
        Err(ReportError::Amount(_))
    ));
}

#[test]
fn a_day_is_compared_an_hour_after_it_ends() {
    let d = day(2026, 12, 2);
    let midnight = d * DAY_MS;
    assert_eq!(settled_day(midnight + SETTLE_MS), d - 1);
    assert_eq!(settled_day(midnight + SETTLE_MS - 1), d - 2);
}

#[test]
fn the_report_query_asks_for_daily_buckets_by_description_a_page_at_a_time() {
    let day = 20_424; // 2025-12-02
    let q = report_query(day, day + 2, None);
    assert_eq!(
        q,
        "starting_at=2025-12-02T00%3A00%3A00Z&ending_at=2025-12-04T00%3A00%3A00Z\
         &bucket_width=1d&group_by%5B%5D=description&limit=31"
    );
    assert!(report_query(day, day + 2, Some("page_9")).ends_with("&page=page_9"));
}
