use super::*;
use proptest::prelude::*;

fn tags(t: &[&str]) -> Vec<String> {
    t.iter().map(|s| s.to_string()).collect()
}

#[test]
fn tags_are_sorted_and_kept_as_given() {
    assert_eq!(
        parse(&tags(&[
            "team=search",
            "customer=acme-co",
            "feature=summaries.v2"
        ]))
        .unwrap(),
        tags(&["customer=acme-co", "feature=summaries.v2", "team=search"])
    );
    assert_eq!(from_json(None).unwrap(), Vec::<String>::new());
    assert_eq!(parse(&[]).unwrap(), Vec::<String>::new());
    assert!(parse(&tags(&[
        "env=prod",
        "owner=ann@example.com",
        "path=a/b:c+d"
    ]))
    .is_ok());
}

#[test]
fn malformed_tags_are_a_400_naming_the_field() {
    for bad in [
        "team",
        "=search",
        "team=",
        "Team=search",
        "-team=search",
        "team=sea rch",
        "team=séarch",
        "tea,m=x",
        &format!("{}=x", "k".repeat(MAX_KEY_CHARS + 1)),
        &format!("k={}", "v".repeat(MAX_VALUE_CHARS + 1)),
    ] {
        let e = parse(&tags(&[bad])).unwrap_err();
        assert_eq!(e.status, 400, "{bad}");
        assert_eq!(e.body.field.as_deref(), Some("tags"), "{bad}");
    }
    assert!(parse(&tags(&[&format!("{}=x", "k".repeat(MAX_KEY_CHARS))])).is_ok());
    assert!(parse(&tags(&[&format!("k={}", "v".repeat(MAX_VALUE_CHARS))])).is_ok());
}

#[test]
fn at_most_eight_tags_and_one_per_key() {
    let eight: Vec<String> = (0..MAX_TAGS).map(|i| format!("k{i}=v")).collect();
    assert!(parse(&eight).is_ok());
    let nine: Vec<String> = (0..=MAX_TAGS).map(|i| format!("k{i}=v")).collect();
    assert!(parse(&nine).unwrap_err().body.error.contains("at most 8"));
    let e = parse(&tags(&["team=a", "team=b"])).unwrap_err();
    assert!(e.body.error.contains("one tag per key"), "{}", e.body.error);
    // The same tag twice is the same key twice.
    assert!(parse(&tags(&["team=a", "team=a"])).is_err());
}

#[test]
fn a_body_field_must_be_an_array_of_strings() {
    use serde_json::json;
    assert_eq!(from_json(None).unwrap(), Vec::<String>::new());
    assert_eq!(from_json(Some(&json!(null))).unwrap(), Vec::<String>::new());
    assert_eq!(
        from_json(Some(&json!(["b=1", "a=2"]))).unwrap(),
        tags(&["a=2", "b=1"])
    );
    for bad in [
        json!("team=a"),
        json!([1]),
        json!({"team": "a"}),
        json!(["team"]),
    ] {
        assert_eq!(from_json(Some(&bad)).unwrap_err().status, 400, "{bad}");
    }
}

#[test]
fn the_listing_filter_takes_one_valid_tag() {
    assert_eq!(parse_filter("team=search").unwrap(), "team=search");
    let e = parse_filter("team").unwrap_err();
    assert_eq!(e.body.code, "invalid_filter");
    assert_eq!(e.body.field.as_deref(), Some("tag"));
}

#[test]
fn the_column_is_a_json_array_or_nothing() {
    assert_eq!(to_column(&[]), None);
    let t = tags(&["a=1", "b=2"]);
    assert_eq!(to_column(&t).as_deref(), Some(r#"["a=1","b=2"]"#));
    assert_eq!(from_column(to_column(&t).as_deref()), t);
    assert_eq!(from_column(None), Vec::<String>::new());
    assert_eq!(from_column(Some("not json")), Vec::<String>::new());
}

proptest! {
    /// Whatever is accepted is sorted, unique by key, and survives the column.
    #[test]
    fn accepted_tags_are_sorted_unique_by_key_and_round_trip(
        raw in proptest::collection::vec("[a-c]{1,2}=[A-Za-z0-9:@]{1,4}", 0..10)
    ) {
        if let Ok(t) = parse(&raw) {
            prop_assert!(t.len() <= MAX_TAGS);
            prop_assert!(t.windows(2).all(|w| w[0].split('=').next() < w[1].split('=').next()));
            prop_assert_eq!(from_column(to_column(&t).as_deref()), t);
        }
    }
}
