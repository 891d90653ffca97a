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
    let (sql, params) = dlq_where(&f, 1);
    assert_eq!(
        sql,
        "status IN ('dead_lettered','failed') AND discarded_at IS NULL AND error_class = ?1 \
         AND user_id = ?2 AND completed_at >= ?3"
    );
    assert_eq!(params.len(), 3);
}

#[test]
fn the_partial_indexes_are_spelled_as_the_migrations_spell_them() {
    let migrations = include_str!("../../../migrations/0008_ops.sql");
    assert!(dead_now().contains("status = 'dead_lettered' AND discarded_at IS NULL"));
    assert!(migrations.contains("status = 'dead_lettered' AND discarded_at IS NULL"));
    assert!(unclassified().contains("status IN ('failed','dead_lettered')"));
    assert!(migrations.contains("status IN ('failed','dead_lettered')"));
    assert!(pending().contains("status IN ('queued','running','submitted')"));
}
