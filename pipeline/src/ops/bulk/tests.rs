use super::*;

fn parse(json: &str) -> Result<Plan, ApiError> {
    BulkRequest::parse(json.as_bytes(), "ops-admin")
}

#[test]
fn a_request_is_a_dry_run_unless_it_says_otherwise_and_statuses_default_to_the_actions() {
    let p = parse(r#"{"action":"cancel","filter":{"tag":"run=nightly"}}"#).unwrap();
    assert!(p.dry_run);
    assert_eq!(p.filter.status, vec![Status::Queued]);
    assert_eq!(p.reason, "canceled by ops-admin");
    let p = parse(r#"{"action":"replay","filter":{"model":"claude-sonnet-5-5"},"dry_run":false,"reason":"outage over"}"#)
        .unwrap();
    assert!(!p.dry_run);
    assert_eq!(p.filter.status, vec![Status::DeadLettered, Status::Failed]);
    assert_eq!(p.reason, "outage over");
    let p =
        parse(r#"{"action":"replay","filter":{"status":["failed"],"error_class":"overloaded"}}"#)
            .unwrap();
    assert_eq!(p.filter.status, vec![Status::Failed]);
    assert_eq!(p.filter.error_class, Some(ErrorClass::Overloaded));
}

#[test]
fn bad_requests_are_refused_naming_what_is_wrong() {
    let field = |json: &str| {
        let e = parse(json).unwrap_err();
        assert_eq!(e.status, 400, "{json}");
        e.body.field
    };
    assert_eq!(field(r#"{"action":"cancel"}"#).as_deref(), Some("filter"));
    assert_eq!(
        field(r#"{"action":"cancel","filter":{}}"#).as_deref(),
        Some("filter")
    );
    assert_eq!(
        field(r#"{"action":"cancel","filter":{"status":["completed"]}}"#).as_deref(),
        Some("filter.status")
    );
    assert_eq!(
        field(r#"{"action":"replay","filter":{"status":["queued"]}}"#).as_deref(),
        Some("filter.status")
    );
    assert_eq!(
        field(r#"{"action":"expire","filter":{"created_from":5,"created_to":5}}"#).as_deref(),
        Some("filter.created_from")
    );
    field(r#"{"action":"delete","filter":{"lane":"bulk"}}"#);
    field(r#"{"action":"cancel","filter":{"lane":"medium"}}"#);
    field(r#"{"action":"cancel","filter":{"colour":"red"}}"#);
    field(r#"{"action":"cancel","filter":{"lane":"bulk"},"force":true}"#);
    field(r#"["cancel"]"#);
}

#[test]
fn a_pause_by_filter_names_exactly_one_lane_model_or_user() {
    let p = parse(r#"{"action":"pause","filter":{"lane":"bulk"}}"#).unwrap();
    assert_eq!(
        pause_scope(&p.filter).unwrap(),
        (crate::pause::Scope::Lane, "bulk".to_owned())
    );
    let p = parse(r#"{"action":"pause","filter":{"user":"ann"}}"#).unwrap();
    assert_eq!(pause_scope(&p.filter).unwrap().0, crate::pause::Scope::User);
    for json in [
        r#"{"action":"pause","filter":{"lane":"bulk","user":"ann"}}"#,
        r#"{"action":"pause","filter":{"model":"claude-sonnet-5-5","tag":"k=x"}}"#,
        r#"{"action":"pause","filter":{"tag":"k=x"}}"#,
    ] {
        assert_eq!(parse(json).unwrap_err().status, 400, "{json}");
    }
}

#[test]
fn slices_are_bounded() {
    assert_eq!(Action::Cancel.slice(), CANCEL_SLICE);
    assert_eq!(Action::Replay.slice(), REPLAY_SLICE);
}
