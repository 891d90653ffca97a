//! The query text's own checks (kept out of `sql.rs`, which the ops suite includes as it is).

use super::sql::*;
use pipeline::ops::dlq::DlqFilter;

#[test]
fn the_dlq_filter_becomes_numbered_parameters() {
    let f = DlqFilter {
        status: Some("all".into()),
        error_class: Some("overloaded".into()),
        user: Some("ann".into()),
        from: Some(5),
        ..DlqFilter::default()
    };
    let (sql, params) = dlq_where(&f, pipeline::status::Status::Failed, 1);
    assert_eq!(
        sql,
        "status = 'failed' AND status IN ('failed','dead_lettered') AND discarded_at IS NULL \
         AND error_class = ?1 \
         AND user_id = ?2 AND completed_at >= ?3"
    );
    assert_eq!(params.len(), 3);
}

#[test]
fn a_dlq_page_over_two_statuses_merges_one_limited_select_per_status() {
    let f = DlqFilter {
        status: Some("all".into()),
        error_class: Some("overloaded".into()),
        ..DlqFilter::default()
    };
    let (sql, params) = dlq_list(&f, "id, completed_at", None, 50);
    assert_eq!(sql.matches("LIMIT ?4").count(), 3, "{sql}");
    assert_eq!(sql.matches(" UNION ALL ").count(), 1, "{sql}");
    assert!(sql.contains("status = 'dead_lettered'") && sql.contains("status = 'failed'"));
    assert!(sql.contains("completed_at <= ?2 AND (completed_at < ?2 OR id < ?3)"));
    assert_eq!(params.len(), 4);
    assert_eq!(params[3], SqlValue::Int(51));
    let (one, _) = dlq_list(&DlqFilter::default(), "id", None, 50);
    assert!(!one.contains("UNION"), "{one}");
}

#[test]
fn the_partial_indexes_are_spelled_as_the_migrations_spell_them() {
    let migrations = include_str!("../../../migrations/0008_ops.sql");
    assert!(migrations.contains("status = 'dead_lettered' AND discarded_at IS NULL"));
    assert!(unclassified().contains("status IN ('failed','dead_lettered')"));
    assert!(migrations.contains("status IN ('failed','dead_lettered')"));
    assert!(pending().contains("status IN ('queued','running','submitted')"));
}

#[test]
fn the_dlq_partial_indexes_hold_exactly_the_dlq_statuses() {
    use pipeline::status::Status;
    assert_eq!(
        DLQ_STATUSES,
        Status::sql_in(&[Status::Failed, Status::DeadLettered])
    );
    let migration = include_str!("../../../migrations/0013_fewer_index_writes.sql");
    assert_eq!(
        migration.matches(&format!("WHERE {DLQ_STATUSES}")).count(),
        2
    );
    assert!(migration.contains(&format!("error_class IS NOT NULL AND {DLQ_STATUSES}")));
}

#[test]
fn the_bulk_filter_puts_its_statuses_first_and_numbers_its_fields() {
    use pipeline::ops::bulk::BulkFilter;
    use pipeline::status::{Lane, Status};
    let f = BulkFilter {
        status: vec![Status::Queued],
        user: Some("ann".into()),
        lane: Some(Lane::Bulk),
        created_to: Some(9),
        tag: Some("run=nightly".into()),
        ..BulkFilter::default()
    };
    let (sql, params) = bulk_where(&f);
    assert_eq!(
        sql,
        "status = 'queued' AND user_id = ?1 AND lane = ?2 AND created_at < ?3 \
         AND EXISTS (SELECT 1 FROM json_each(jobs.tags) WHERE value = ?4)"
    );
    assert_eq!(params[1], SqlValue::Text("bulk".into()));
    assert_eq!(params[2], SqlValue::Int(9));
    let ended = BulkFilter {
        status: vec![Status::DeadLettered, Status::Failed],
        ..BulkFilter::default()
    };
    let (sql, params) = bulk_where(&ended);
    assert!(
        sql.ends_with("AND discarded_at IS NULL AND replayed_to IS NULL"),
        "{sql}"
    );
    assert!(params.is_empty());
}
