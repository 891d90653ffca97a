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

/// A user's usage by day, model and mode in a range of UTC days (?1 user, ?2 first day, ?3 the
/// day after the last; days since the epoch), from the rollup migration 0012's triggers keep:
/// days × models rows, however many jobs they hold.
pub const USAGE: &str = "SELECT day, NULLIF(model, '') AS model, mode, jobs, input_tokens, \
     output_tokens, cache_write_tokens, cache_read_tokens, cost_micros, cost_unknown, refusals \
     FROM usage_days WHERE user_id = ?1 AND day >= ?2 AND day < ?3 AND (jobs > 0 OR refusals > 0)";

/// Every user's usage by model over days [?1, ?2) (the spenders view): rows in proportion to
/// users × days × models of the range, whatever the history's size.
pub const SPENDERS: &str = "SELECT user_id, NULLIF(model, '') AS model, SUM(jobs) AS jobs, \
     SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens, \
     SUM(cache_write_tokens) AS cache_write_tokens, SUM(cache_read_tokens) AS cache_read_tokens, \
     SUM(cost_micros) AS cost_micros, SUM(cost_unknown) AS cost_unknown, \
     SUM(failures) AS failures, SUM(refusals) AS refusals, \
     SUM(jobs * (mode = 'sync_fast')) AS fast_jobs, \
     SUM(cost_micros * (mode = 'sync_fast')) AS fast_cost_micros, \
     SUM(jobs * (mode = 'sync@bedrock')) AS bedrock_jobs, \
     SUM(cost_micros * (mode = 'sync@bedrock')) AS bedrock_cost_micros, \
     SUM(jobs * (mode = 'sync@vertex')) AS vertex_jobs, \
     SUM(cost_micros * (mode = 'sync@vertex')) AS vertex_cost_micros \
     FROM usage_days INDEXED BY idx_usage_days_day \
     WHERE day >= ?1 AND day < ?2 AND (jobs > 0 OR refusals > 0) GROUP BY user_id, model";

/// Cost by tag over days [?1, ?2), of user ?3 (NULL for every user), from the tag rollup
/// (migration 0018): the tag in `user_id`, the spenders report's columns.
pub const TAG_USAGE: &str =
    "SELECT tag AS user_id, NULLIF(model, '') AS model, SUM(jobs) AS jobs, \
     SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens, \
     SUM(cache_write_tokens) AS cache_write_tokens, SUM(cache_read_tokens) AS cache_read_tokens, \
     SUM(cost_micros) AS cost_micros, SUM(cost_unknown) AS cost_unknown, \
     SUM(failures) AS failures, SUM(refusals) AS refusals, \
     SUM(jobs * (mode = 'sync_fast')) AS fast_jobs, \
     SUM(cost_micros * (mode = 'sync_fast')) AS fast_cost_micros, \
     SUM(jobs * (mode = 'sync@bedrock')) AS bedrock_jobs, \
     SUM(cost_micros * (mode = 'sync@bedrock')) AS bedrock_cost_micros, \
     SUM(jobs * (mode = 'sync@vertex')) AS vertex_jobs, \
     SUM(cost_micros * (mode = 'sync@vertex')) AS vertex_cost_micros \
     FROM usage_tag_days INDEXED BY idx_usage_tag_days_day \
     WHERE day >= ?1 AND day < ?2 AND (?3 IS NULL OR user_id = ?3) \
     AND (jobs > 0 OR refusals > 0) \
     GROUP BY tag, model";

/// Jobs per model created on day ?1 (days since the epoch) or later, every user (the
/// deprecated models' use): rows in proportion to users × days × models of the range.
pub const JOBS_BY_MODEL: &str = "SELECT model, SUM(jobs) AS jobs FROM usage_days \
     INDEXED BY idx_usage_days_day WHERE day >= ?1 AND jobs > 0 GROUP BY model";

/// A user's spending on day ?2 (days since the epoch; the daily cap), from the rollup.
pub const SPENT: &str = "SELECT COALESCE(SUM(cost_micros + unknown_cost_micros), 0) AS spent \
     FROM usage_days WHERE user_id = ?1 AND day = ?2";

/// The summed columns of both rollups (`usage_days`, `usage_tag_days`), in their order.
macro_rules! rollup_sums {
    () => {
        "jobs, input_tokens, output_tokens, cache_write_tokens, cache_read_tokens, cost_micros, \
         unknown_cost_micros, cost_unknown, failures, refusals"
    };
}

/// Each job's contribution to the rollups, as their triggers count it: the job under the model
/// that answered (0012, 0018; a fast-mode job under the mode `sync_fast`, 0024; a job answered
/// on another route under `sync@bedrock`, 0025), and its refused attempt under the model that
/// refused (0023).
/// `{key}` is the group's columns before the model, `{from}` the rows (jobs, or jobs with one
/// of their tags as `t.value`) and `{range}` their filter.
macro_rules! contributions {
    ($key:literal, $from:literal, $range:literal) => {
        concat!(
            "SELECT ", $key, ", COALESCE(model, '') AS model, \
             mode || substr('_fast', 1, 5 * (speed IS 'fast')) || COALESCE('@' || route, '') \
             AS mode, 1 AS jobs, input_tokens, \
             output_tokens, cache_write_tokens, cache_read_tokens, \
             cost_micros * (cost_unknown = 0) AS cost_micros, \
             cost_micros * (cost_unknown != 0) AS unknown_cost_micros, \
             cost_unknown != 0 AS cost_unknown, \
             status IN ('failed', 'dead_lettered') AS failures, 0 AS refusals FROM ", $from,
            " WHERE ", $range,
            " UNION ALL SELECT ", $key, ", json_extract(refusal, '$.model'), mode, 0, \
             json_extract(refusal, '$.input_tokens'), json_extract(refusal, '$.output_tokens'), \
             json_extract(refusal, '$.cache_write_tokens'), \
             json_extract(refusal, '$.cache_read_tokens'), \
             json_extract(refusal, '$.cost_micros') * (json_extract(refusal, '$.cost_unknown') = 0), \
             json_extract(refusal, '$.cost_micros') * (json_extract(refusal, '$.cost_unknown') != 0), \
             json_extract(refusal, '$.cost_unknown') != 0, 0, 1 FROM ", $from,
            " WHERE refusal IS NOT NULL AND ", $range
        )
    };
}

/// The sums of a group of [`contributions!`], as the rollups keep them.
macro_rules! sums_of_contributions {
    () => {
        "SUM(jobs) AS jobs, SUM(input_tokens) AS input_tokens, \
         SUM(output_tokens) AS output_tokens, SUM(cache_write_tokens) AS cache_write_tokens, \
         SUM(cache_read_tokens) AS cache_read_tokens, SUM(cost_micros) AS cost_micros, \
         SUM(unknown_cost_micros) AS unknown_cost_micros, SUM(cost_unknown) AS cost_unknown, \
         SUM(failures) AS failures, SUM(refusals) AS refusals"
    };
}

/// The rollups' summed columns, for the rebuild's inserts.
pub const ROLLUP_SUMS: &str = rollup_sums!();

/// The rollup recomputed from the jobs of days [?1, ?2) (the consistency check and the
/// rebuild): the same columns as `usage_days`.
pub const USAGE_SCAN: &str = concat!(
    "SELECT user_id, day, model, mode, ",
    sums_of_contributions!(),
    " FROM (",
    contributions!(
        "user_id, CAST(created_at / 86400000 AS INTEGER) AS day",
        "jobs",
        "created_at >= ?1 * 86400000 AND created_at < ?2 * 86400000"
    ),
    ") GROUP BY 1, 2, 3, 4"
);

/// The rollup's rows of days [?1, ?2), as `USAGE_SCAN` answers them.
pub const USAGE_ROWS: &str = concat!(
    "SELECT user_id, day, model, mode, ",
    rollup_sums!(),
    " FROM usage_days WHERE day >= ?1 AND day < ?2 AND (jobs > 0 OR refusals > 0)"
);

/// The tag rollup recomputed from the jobs of days [?1, ?2): a group per tag of each job.
pub const TAG_SCAN: &str = concat!(
    "SELECT tag, user_id, day, model, mode, ",
    sums_of_contributions!(),
    " FROM (",
    contributions!(
        "t.value AS tag, user_id, CAST(created_at / 86400000 AS INTEGER) AS day",
        "jobs, json_each(jobs.tags) AS t",
        "jobs.tags IS NOT NULL AND created_at >= ?1 * 86400000 AND created_at < ?2 * 86400000"
    ),
    ") GROUP BY 1, 2, 3, 4, 5"
);

/// The tag rollup's rows of days [?1, ?2), as `TAG_SCAN` answers them.
pub const TAG_ROWS: &str = concat!(
    "SELECT tag, user_id, day, model, mode, ",
    rollup_sums!(),
    " FROM usage_tag_days WHERE day >= ?1 AND day < ?2 AND (jobs > 0 OR refusals > 0)"
);

/// A user's jobs waiting in `queued` (the per-user limit), from the rollup.
pub const USER_QUEUED: &str = "SELECT n FROM user_queued WHERE user_id = ?1";

/// The `POST /api/claude` calls made in [?1, ?2), for the rollout view.
pub const ROLLOUT: &str = "SELECT path, status, created_at, completed_at, cost_micros FROM jobs \
     WHERE path IS NOT NULL AND created_at >= ?1 AND created_at < ?2";

/// Jobs that ended in the metrics window that closes at ?1, at most ?2: the window opens at the
/// previous metrics row, at most 10 minutes and at least 1 before ?1 (as
/// `pipeline::ops::metrics::window_ms` computes it), so the cron reads the minute that ended in
/// the same round trip as that row.
pub const ENDED: &str = "SELECT status, mode, model, created_at, started_at, completed_at, \
     input_tokens, output_tokens, cache_write_tokens, cache_read_tokens, cost_micros \
     FROM jobs WHERE completed_at >= ?1 - MIN(600000, MAX(60000, \
     ?1 - COALESCE((SELECT MAX(at) FROM metrics), ?1 - 60000))) \
     AND completed_at < ?1 LIMIT ?2";

/// The metrics series since ?1, at most ?2 rows, newest first.
pub const METRICS_SERIES: &str =
    "SELECT at, body FROM metrics WHERE at >= ?1 ORDER BY at DESC LIMIT ?2";

/// Pending and in-flight work per lane and mode (the sync and batch paths): the counts from the
/// rollup, the oldest by one indexed lookup per lane, mode and status.
pub fn pending() -> String {
    format!(
        "SELECT c.lane, c.mode, c.status, c.n, (SELECT MIN(j.created_at) FROM jobs j \
         WHERE j.status = c.status AND j.lane = c.lane AND j.mode = c.mode) AS oldest \
         FROM job_counts c WHERE c.{} AND c.n > 0",
        Status::sql_in(&Status::LIVE)
    )
}

/// Dead letters now (from the rollup). A dead letter that was replayed or discarded is
/// handled: it no longer counts.
pub const DEAD_NOW: &str =
    "SELECT n FROM job_counts WHERE status = 'dead_open' AND lane = 'all' AND mode = 'all'";

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

/// A user's jobs, newest first, after a cursor: ?1 user; ?2 status, ?3 lane, ?4 kind, ?8 a tag
/// (each NULL for any); ?5, ?6 the cursor's created_at and id; ?7 the limit.
pub fn jobs_list(columns: &str) -> String {
    format!(
        "SELECT {columns} FROM jobs WHERE user_id = ?1 \
         AND (?2 IS NULL OR status = ?2) AND (?3 IS NULL OR lane = ?3) AND (?4 IS NULL OR kind = ?4) \
         AND (?8 IS NULL OR EXISTS (SELECT 1 FROM json_each(jobs.tags) WHERE value = ?8)) \
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

/// The condition of the DLQ's partial indexes: only failed and dead-lettered jobs are in them,
/// so the 90% of jobs that complete never write an entry.
pub const DLQ_STATUSES: &str = "status IN ('failed','dead_lettered')";

/// The DLQ filter's WHERE clause for one status and its parameters (`?N` numbered from
/// `first`), for the list and the bulk replay; served by `idx_jobs_dlq_class` with a class,
/// a user's `idx_jobs_user_status_completed` with a user, `idx_jobs_status_completed` else.
pub fn dlq_where(f: &DlqFilter, status: Status, first: usize) -> (String, Vec<SqlValue>) {
    // The second status term is the condition of the DLQ's partial indexes (migration 0013):
    // SQLite uses a partial index only when the query repeats its condition.
    let mut sql = format!(
        "{} AND {DLQ_STATUSES} AND discarded_at IS NULL",
        Status::sql_in(&[status])
    );
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

/// One ordered, limited select per status of the filter, merged in the same order: each walks
/// its own index range from the cursor and stops at the page, so a page reads about
/// `limit` rows per status however many failures are stored (one `status IN (…)` with an
/// ORDER BY would read and sort them all). `tail` follows each status's clause (it may use
/// `?{n+1}`…), `order` is the ORDER BY and `limit` the parameter number of the LIMIT.
fn per_status(
    f: &DlqFilter,
    columns: &str,
    tail: &str,
    order: &str,
    limit: usize,
) -> (String, Vec<SqlValue>) {
    let mut params = Vec::new();
    let parts: Vec<String> = f
        .statuses()
        .iter()
        .map(|s| {
            let (clause, p) = dlq_where(f, *s, 1);
            params = p;
            format!(
                "SELECT * FROM (SELECT {columns} FROM jobs WHERE {clause}{tail} \
                 ORDER BY {order} LIMIT ?{limit})"
            )
        })
        .collect();
    let sql = match parts.as_slice() {
        [one] => one.clone(),
        _ => format!(
            "{} ORDER BY {order} LIMIT ?{limit}",
            parts.join(" UNION ALL ")
        ),
    };
    (sql, params)
}

/// The number of parameters the filter binds (the same for every status).
fn filter_params(f: &DlqFilter) -> usize {
    dlq_where(f, Status::DeadLettered, 1).1.len()
}

/// The triage list's query: `columns` of the matching jobs ended before the cursor, newest
/// first, one more than `limit` (so the caller knows whether a next page exists). `columns`
/// must include `completed_at` and `id` (the merge orders by them).
pub fn dlq_list(
    f: &DlqFilter,
    columns: &str,
    cursor: Option<&Cursor>,
    limit: u32,
) -> (String, Vec<SqlValue>) {
    let n = filter_params(f);
    let (at, id) = match cursor {
        Some(c) => (c.created_at, c.id.clone()),
        None => (1 << 52, String::new()),
    };
    // `completed_at <= a` is the index range; the OR only settles ties at `a`.
    let tail = format!(
        " AND completed_at <= ?{a} AND (completed_at < ?{a} OR id < ?{b})",
        a = n + 1,
        b = n + 2
    );
    let (sql, mut params) = per_status(f, columns, &tail, "completed_at DESC, id DESC", n + 3);
    params.extend([
        SqlValue::Int(at),
        SqlValue::Text(id),
        SqlValue::Int(limit as i64 + 1),
    ]);
    (sql, params)
}

/// The bulk replay's query: up to `limit` + 1 matching jobs not yet replayed, oldest first.
pub fn dlq_replay(f: &DlqFilter, columns: &str, limit: u32) -> (String, Vec<SqlValue>) {
    let n = filter_params(f);
    let (sql, mut params) = per_status(
        f,
        columns,
        " AND replayed_to IS NULL",
        "completed_at, id",
        n + 1,
    );
    params.push(SqlValue::Int(limit as i64 + 1));
    (sql, params)
}

/// The bulk filter's WHERE clause (`pipeline::ops::bulk`) and its parameters, `?1` on: the
/// statuses first (so `idx_jobs_status_created`, or a user's `idx_jobs_user_status`, serves
/// it), then each field given; a replay's statuses leave out what was discarded or replayed.
pub fn bulk_where(f: &pipeline::ops::bulk::BulkFilter) -> (String, Vec<SqlValue>) {
    let mut sql = Status::sql_in(&f.status);
    let ended = f
        .status
        .iter()
        .all(|s| matches!(s, Status::Failed | Status::DeadLettered));
    if ended {
        sql.push_str(" AND discarded_at IS NULL AND replayed_to IS NULL");
    }
    let mut params = Vec::new();
    let mut add = |clause: &str, v: SqlValue, sql: &mut String| {
        params.push(v);
        sql.push_str(&clause.replace('?', &format!("?{}", params.len())));
    };
    let text = |s: &str| SqlValue::Text(s.to_owned());
    if let Some(u) = &f.user {
        add(" AND user_id = ?", text(u), &mut sql);
    }
    if let Some(m) = &f.model {
        add(" AND model = ?", text(m), &mut sql);
    }
    if let Some(l) = f.lane {
        add(" AND lane = ?", text(l.as_str()), &mut sql);
    }
    if let Some(m) = f.mode {
        add(" AND mode = ?", text(m.as_str()), &mut sql);
    }
    if let Some(c) = f.error_class {
        add(" AND error_class = ?", text(c.as_str()), &mut sql);
    }
    if let Some(t) = f.created_from {
        add(" AND created_at >= ?", SqlValue::Int(t), &mut sql);
    }
    if let Some(t) = f.created_to {
        add(" AND created_at < ?", SqlValue::Int(t), &mut sql);
    }
    if let Some(tag) = &f.tag {
        let clause = " AND EXISTS (SELECT 1 FROM json_each(jobs.tags) WHERE value = ?)";
        add(clause, text(tag), &mut sql);
    }
    (sql, params)
}

/// Calls per route since ?1 (`GET /api/routes`), from the attempt log by `idx_attempts_ended`:
/// the calls that did not end their job well are errors.
pub const ROUTE_CALLS: &str = "SELECT route, COUNT(*) AS calls, \
     SUM(outcome IN ('retry', 'failed', 'dead_lettered')) AS errors \
     FROM job_attempts WHERE ended_at >= ?1 GROUP BY route";

/// Jobs completed per route since ?1 and their cost (`GET /api/routes`), by `idx_jobs_completed`.
pub const ROUTE_SPEND: &str = "SELECT route, COUNT(*) AS jobs, \
     COALESCE(SUM(cost_micros), 0) AS cost_micros FROM jobs \
     WHERE completed_at >= ?1 AND status = 'completed' GROUP BY route";
