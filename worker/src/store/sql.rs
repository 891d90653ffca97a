//! The query text that `EXPLAIN QUERY PLAN` is checked against (the ops suite and `cargo xtask
//! bench queries` include this file as it is, so the plan is checked on the real text). Pure:
//! it depends on `pipeline` only, and every status literal comes from `pipeline::status`.

use pipeline::jobs::Cursor;
use pipeline::ops::dlq::DlqFilter;
use pipeline::status::Status;

/// A bound SQL parameter of a query built at run time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SqlValue {
    Text(String),
    Int(i64),
}

/// A user's usage by day, model and mode in a range (?1 user, ?2 from, ?3 to).
pub const USAGE: &str = "SELECT created_at / 86400000 AS day, model, mode, COUNT(*) AS jobs, \
     SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens, \
     SUM(cache_write_tokens) AS cache_write_tokens, SUM(cache_read_tokens) AS cache_read_tokens, \
     SUM(CASE WHEN cost_unknown = 0 THEN cost_micros ELSE 0 END) AS cost_micros, \
     SUM(cost_unknown) AS cost_unknown \
     FROM jobs WHERE user_id = ?1 AND created_at >= ?2 AND created_at < ?3 \
     GROUP BY day, model, mode";

/// A user's spending since ?2 (the daily cap).
pub const SPENT: &str = "SELECT COALESCE(SUM(cost_micros), 0) AS spent FROM jobs \
     WHERE user_id = ?1 AND created_at >= ?2";

/// The `POST /api/claude` calls made in [?1, ?2), for the rollout view.
pub const ROLLOUT: &str = "SELECT path, status, created_at, completed_at, cost_micros FROM jobs \
     WHERE path IS NOT NULL AND created_at >= ?1 AND created_at < ?2";

/// Jobs that ended in the metrics window (?1 from, ?2 to), at most ?3.
pub const ENDED: &str = "SELECT status, model, created_at, started_at, completed_at, \
     input_tokens, output_tokens, cache_write_tokens, cache_read_tokens, cost_micros \
     FROM jobs WHERE completed_at >= ?1 AND completed_at < ?2 LIMIT ?3";

/// The metrics series since ?1, at most ?2 rows, newest first.
pub const METRICS_SERIES: &str =
    "SELECT at, body FROM metrics WHERE at >= ?1 ORDER BY at DESC LIMIT ?2";

/// Pending and in-flight work per lane.
pub fn pending() -> String {
    format!(
        "SELECT lane, status, COUNT(*) AS n, MIN(created_at) AS oldest \
         FROM jobs WHERE {} GROUP BY status, lane",
        Status::sql_in(&Status::LIVE)
    )
}

/// Dead letters now. (A dead letter that was replayed or discarded is handled: it no longer
/// counts.)
pub fn dead_now() -> String {
    format!(
        "SELECT COUNT(*) AS n FROM jobs INDEXED BY idx_jobs_dead_open \
         WHERE {} AND discarded_at IS NULL AND replayed_to IS NULL",
        Status::sql_in(&[Status::DeadLettered])
    )
}

/// Failed / dead-lettered jobs still without a class (rows stored before classes were
/// recorded when the failure happens). Named: without statistics the planner would walk every
/// failed job by status instead.
pub fn unclassified() -> String {
    format!(
        "SELECT id, error FROM jobs INDEXED BY idx_jobs_unclassified \
         WHERE error_class IS NULL AND {} LIMIT 500",
        Status::sql_in(&[Status::Failed, Status::DeadLettered])
    )
}

/// A user's jobs, newest first, after a cursor: ?1 user; ?2 status, ?3 lane, ?4 kind (each
/// NULL for any); ?5, ?6 the cursor's created_at and id; ?7 the limit.
pub fn jobs_list(columns: &str) -> String {
    format!(
        "SELECT {columns} FROM jobs WHERE user_id = ?1 \
         AND (?2 IS NULL OR status = ?2) AND (?3 IS NULL OR lane = ?3) AND (?4 IS NULL OR kind = ?4) \
         AND (created_at < ?5 OR (created_at = ?5 AND id < ?6)) \
         ORDER BY created_at DESC, id DESC LIMIT ?7"
    )
}

/// A user's uploads with their progress, newest first: ?1 user; ?2, ?3 the cursor; ?4 limit.
pub fn uploads_list() -> String {
    format!(
        "SELECT b.id, b.mode, b.template, b.total, b.created_at, b.canceled_at, \
         (SELECT COUNT(*) FROM jobs j WHERE j.batch_id = b.id AND j.status IN ({})) AS done, \
         (SELECT COUNT(*) FROM jobs j WHERE j.batch_id = b.id AND j.{}) AS completed, \
         (SELECT COALESCE(SUM(cost_micros), 0) FROM jobs j WHERE j.batch_id = b.id) AS cost \
         FROM batches b WHERE b.user_id = ?1 \
         AND (b.created_at < ?2 OR (b.created_at = ?2 AND b.id < ?3)) \
         ORDER BY b.created_at DESC, b.id DESC LIMIT ?4",
        Status::terminal_sql_list(),
        Status::sql_in(&[Status::Completed])
    )
}

/// The DLQ filter's WHERE clause and its parameters (`?N` numbered from `first`), for the list
/// and the bulk replay; served by `idx_jobs_status_completed` (or a user's
/// `idx_jobs_user_status`).
pub fn dlq_where(f: &DlqFilter, first: usize) -> (String, Vec<SqlValue>) {
    let mut sql = format!("{} AND discarded_at IS NULL", Status::sql_in(f.statuses()));
    let mut params = Vec::new();
    let mut add = |clause: &str, v: SqlValue, sql: &mut String| {
        params.push(v);
        sql.push_str(&clause.replace('?', &format!("?{}", first + params.len() - 1)));
    };
    if let Some(c) = &f.error_class {
        add(" AND error_class = ?", SqlValue::Text(c.clone()), &mut sql);
    }
    if let Some(u) = &f.user {
        add(" AND user_id = ?", SqlValue::Text(u.clone()), &mut sql);
    }
    if let Some(m) = &f.model {
        add(" AND model = ?", SqlValue::Text(m.clone()), &mut sql);
    }
    if let Some(from) = f.from {
        add(" AND completed_at >= ?", SqlValue::Int(from), &mut sql);
    }
    if let Some(to) = f.to {
        add(" AND completed_at < ?", SqlValue::Int(to), &mut sql);
    }
    (sql, params)
}

/// The triage list's query: `columns` of the matching jobs ended before the cursor, newest
/// first, one more than `limit` (so the caller knows whether a next page exists).
pub fn dlq_list(
    f: &DlqFilter,
    columns: &str,
    cursor: Option<&Cursor>,
    limit: u32,
) -> (String, Vec<SqlValue>) {
    let (clause, mut params) = dlq_where(f, 1);
    let n = params.len();
    let (at, id) = match cursor {
        Some(c) => (c.created_at, c.id.clone()),
        None => (1 << 52, String::new()),
    };
    params.extend([
        SqlValue::Int(at),
        SqlValue::Text(id),
        SqlValue::Int(limit as i64 + 1),
    ]);
    (
        format!(
            "SELECT {columns} FROM jobs WHERE {clause} \
             AND (completed_at < ?{a} OR (completed_at = ?{a} AND id < ?{b})) \
             ORDER BY completed_at DESC, id DESC LIMIT ?{c}",
            a = n + 1,
            b = n + 2,
            c = n + 3
        ),
        params,
    )
}

/// The bulk replay's query: up to `limit` + 1 matching jobs not yet replayed, oldest first.
pub fn dlq_replay(f: &DlqFilter, columns: &str, limit: u32) -> (String, Vec<SqlValue>) {
    let (clause, mut params) = dlq_where(f, 1);
    params.push(SqlValue::Int(limit as i64 + 1));
    (
        format!(
            "SELECT {columns} FROM jobs WHERE {clause} AND replayed_to IS NULL \
             ORDER BY completed_at, id LIMIT ?{}",
            params.len()
        ),
        params,
    )
}
