//! The operator's queries, in one place so that `EXPLAIN QUERY PLAN` is checked against the
//! real text (`cargo xtask bench queries` and the plan test).

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
/// Jobs that ended in the metrics window (?1 from, ?2 to), at most ?3.
pub const ENDED: &str = "SELECT status, model, created_at, started_at, completed_at, \
     input_tokens, output_tokens, cache_write_tokens, cache_read_tokens, cost_micros \
     FROM jobs WHERE completed_at >= ?1 AND completed_at < ?2 LIMIT ?3";
/// Pending and in-flight work per lane.
pub const PENDING: &str = "SELECT lane, status, COUNT(*) AS n, MIN(created_at) AS oldest \
     FROM jobs WHERE status IN ('queued','running','submitted') GROUP BY status, lane";
/// Dead letters now.
/// (A dead letter that was replayed or discarded is handled: it no longer counts.)
pub const DEAD_NOW: &str = "SELECT COUNT(*) AS n FROM jobs INDEXED BY idx_jobs_dead_open \
     WHERE status = 'dead_lettered' AND discarded_at IS NULL AND replayed_to IS NULL";
/// Failed / dead-lettered jobs still to classify.
/// (Named: without statistics the planner would walk every failed job by status instead.)
pub const UNCLASSIFIED: &str = "SELECT id, error FROM jobs INDEXED BY idx_jobs_unclassified \
     WHERE error_class IS NULL AND status IN ('failed','dead_lettered') LIMIT 500";
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
         (SELECT COUNT(*) FROM jobs j WHERE j.batch_id = b.id AND j.status = 'completed') AS completed, \
         (SELECT COALESCE(SUM(cost_micros), 0) FROM jobs j WHERE j.batch_id = b.id) AS cost \
         FROM batches b WHERE b.user_id = ?1 \
         AND (b.created_at < ?2 OR (b.created_at = ?2 AND b.id < ?3)) \
         ORDER BY b.created_at DESC, b.id DESC LIMIT ?4",
        crate::status::Status::terminal_sql_list()
    )
}

/// The metrics series since ?1, at most ?2 rows, newest first.
pub const METRICS_SERIES: &str =
    "SELECT at, body FROM metrics WHERE at >= ?1 ORDER BY at DESC LIMIT ?2";
