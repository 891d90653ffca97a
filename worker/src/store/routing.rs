//! What deadline routing (`pipeline::routing`, `crate::routing`) reads and writes: our own
//! batches' durations per model, the live jobs past their rescue time, the batches cancelled
//! for them, the jobs moved to a synchronous call, and the Dashboard's figures.

use pipeline::money::UsdMicros;
use pipeline::status::{Mode, Status, Transition};
use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::D1Result;

use super::{num, Statement, Store};

/// `rescue_at IS NOT NULL AND status IN ('queued','submitted')`: spelled as the partial index
/// `idx_jobs_rescue` is, so the planner may use it.
fn live_with_rescue() -> String {
    format!(
        "rescue_at IS NOT NULL AND {}",
        Status::sql_in(&[Status::Queued, Status::Submitted])
    )
}

/// The Message Batches holding a submitted job past its rescue time that the cron has not
/// cancelled yet.
fn due_batches_sql() -> String {
    format!(
        "SELECT DISTINCT j.anthropic_batch_id AS batch FROM jobs j INDEXED BY idx_jobs_rescue \
         JOIN flushes f ON f.anthropic_batch_id = j.anthropic_batch_id \
         WHERE j.rescue_at IS NOT NULL AND j.status IN ({q}, {s}) AND j.rescue_at <= ?1 \
         AND j.status = {s} AND f.rescued_at IS NULL LIMIT 20",
        q = Status::Queued.sql(),
        s = Status::Submitted.sql()
    )
}

/// The set of a job moved to a synchronous call (its reason `batch_ran_late`).
fn reroute_set() -> String {
    let t = Transition::Reroute;
    format!(
        "{}, mode = '{}', lane = 'high', route_reason = 'batch_ran_late', rescue_at = NULL, \
         accumulated_at = NULL, flush_id = NULL, anthropic_batch_id = NULL, updated_at = ?2",
        t.set(),
        Mode::Sync.as_str()
    )
}

/// The deadline jobs' figures over a window (the Dashboard's routing panel).
#[derive(Debug, Default, Clone, Deserialize, serde::Serialize)]
pub struct RoutingRow {
    pub jobs: i64,
    /// Answered by a Message Batch, at half price.
    pub by_batch: i64,
    /// Sent straight to a synchronous call.
    pub by_sync: i64,
    /// Moved from their batch (or accumulation) to a synchronous call.
    pub moved: i64,
    pub met: i64,
    pub missed: i64,
    /// What the batch-answered ones cost (the batch price: half of what they would have cost
    /// synchronously, so also what routing saved on them).
    pub batch_cost_micros: UsdMicros,
    pub cost_micros: UsdMicros,
}

impl Store {
    /// How long this model's most recent batches took, `created_at` to `ended_at` (ms; the
    /// ones cancelled for a deadline count as long as they ran, a lower bound).
    pub async fn batch_durations(&self, model: &str) -> worker::Result<Vec<u64>> {
        #[derive(Deserialize)]
        struct Row {
            ms: i64,
        }
        let rows: Vec<Row> = self
            .all(
                "SELECT batch_ended_at - batch_created_at AS ms FROM flushes \
                 INDEXED BY idx_flushes_ended WHERE batch_ended_at IS NOT NULL \
                 AND ',' || models || ',' LIKE ?1 ORDER BY batch_ended_at DESC LIMIT ?2",
                &[
                    format!("%,{model},%").into(),
                    num(pipeline::routing::WINDOW as i64),
                ],
            )
            .await?;
        Ok(rows.into_iter().map(|r| r.ms.max(0) as u64).collect())
    }

    /// Records an ended batch's times as the API reports them, and the models inside it (its
    /// jobs are still `submitted` in it: run before its results settle). Once: a later poll of
    /// the same batch changes nothing.
    pub async fn record_batch_times(
        &self,
        batch_id: &str,
        created_at: i64,
        ended_at: i64,
    ) -> worker::Result<()> {
        self.run(
            "UPDATE flushes SET batch_created_at = ?2, batch_ended_at = ?3, models = \
             (SELECT group_concat(model) FROM (SELECT DISTINCT model FROM jobs \
              WHERE anthropic_batch_id = ?1 AND model IS NOT NULL)) \
             WHERE anthropic_batch_id = ?1 AND batch_ended_at IS NULL",
            &[batch_id.into(), num(created_at), num(ended_at)],
        )
        .await?;
        Ok(())
    }

    /// The batches to cancel now for a job's deadline (read by [`due_batches_of`]).
    pub fn due_batches_statement(&self, now: i64) -> worker::Result<Statement> {
        self.statement(&due_batches_sql(), &[num(now)])
    }

    /// The cron cancelled this batch for a job's deadline.
    pub async fn mark_rescued(&self, batch_id: &str, now: i64) -> worker::Result<()> {
        self.run(
            "UPDATE flushes SET rescued_at = ?2 WHERE anthropic_batch_id = ?1 \
             AND rescued_at IS NULL",
            &[batch_id.into(), num(now)],
        )
        .await?;
        Ok(())
    }

    /// Whether the cron cancelled this batch for a job's deadline.
    pub async fn rescued(&self, batch_id: &str) -> worker::Result<bool> {
        #[derive(Deserialize)]
        struct Row {
            n: i64,
        }
        let row: Option<Row> = self
            .first(
                "SELECT COUNT(*) AS n FROM flushes WHERE anthropic_batch_id = ?1 \
                 AND rescued_at IS NOT NULL",
                &[batch_id.into()],
            )
            .await?;
        Ok(row.is_some_and(|r| r.n > 0))
    }

    /// Moves the jobs still accumulating past their rescue time to a synchronous call (they
    /// never reached the API: nothing to cancel, nothing paid); answers their ids, to send to
    /// the high lane. A job a flush claims meanwhile is not moved (the guard).
    pub async fn reroute_accumulated(&self, now: i64, limit: u32) -> worker::Result<Vec<String>> {
        #[derive(Deserialize)]
        struct Row {
            id: String,
        }
        // `+status`: the outer guard must not steer the planner off the ids (the primary key).
        let sql = format!(
            "UPDATE jobs SET {} WHERE id IN (SELECT id FROM jobs INDEXED BY idx_jobs_rescue \
             WHERE {} AND rescue_at <= ?2 AND {} AND accumulated_at IS NOT NULL \
             AND flush_id IS NULL LIMIT ?1) AND +{} AND flush_id IS NULL RETURNING id",
            reroute_set(),
            live_with_rescue(),
            Status::sql_in(&[Status::Queued]),
            Transition::Reroute.guard()
        );
        let rows: Vec<Row> = self.all(&sql, &[num(limit as i64), num(now)]).await?;
        Ok(rows.into_iter().map(|r| r.id).collect())
    }

    /// A job of batch `batch_id` answered `canceled` or `expired` whose deadline no longer
    /// allows a batch: moved to a synchronous call.
    pub fn reroute_from_batch(
        &self,
        id: &str,
        batch_id: &str,
        now: i64,
    ) -> worker::Result<Statement> {
        let sql = format!(
            "UPDATE jobs SET {} WHERE id = ?1 AND {} AND {} AND anthropic_batch_id = ?3",
            reroute_set(),
            Transition::Reroute.guard(),
            Status::sql_in(&[Status::Submitted])
        );
        self.statement(&sql, &[id.into(), num(now), batch_id.into()])
    }

    /// A job whose batch was cancelled for another job's deadline while its own still allows a
    /// batch: back to the accumulation with a new rescue time (not a try: nothing failed).
    pub fn reaccumulate(
        &self,
        id: &str,
        batch_id: &str,
        rescue_at: Option<i64>,
        now: i64,
    ) -> worker::Result<Statement> {
        let t = Transition::Resubmit;
        let sql = format!(
            "UPDATE jobs SET {}, anthropic_batch_id = NULL, flush_id = NULL, accumulated_at = ?3, \
             rescue_at = COALESCE(?4, rescue_at), updated_at = ?3 \
             WHERE id = ?1 AND {} AND anthropic_batch_id = ?2",
            t.set(),
            t.guard()
        );
        let rescue = rescue_at.map_or(JsValue::NULL, num);
        self.statement(&sql, &[id.into(), batch_id.into(), num(now), rescue])
    }

    /// The deadline jobs created since `since` (epoch ms): how they were routed and whether
    /// they met their deadlines.
    pub async fn routing_summary(&self, since: i64) -> worker::Result<RoutingRow> {
        let sql = format!(
            "SELECT COUNT(*) AS jobs, \
             COALESCE(SUM(mode = 'batch' AND status = {c}), 0) AS by_batch, \
             COALESCE(SUM(route_reason = 'deadline_too_close_for_batch'), 0) AS by_sync, \
             COALESCE(SUM(route_reason = 'batch_ran_late'), 0) AS moved, \
             COALESCE(SUM(status = {c} AND completed_at <= deadline_at), 0) AS met, \
             COALESCE(SUM((status = {c} AND completed_at > deadline_at) \
               OR (status IN ({t}) AND status != {c}) \
               OR (status NOT IN ({t}) AND ?2 > deadline_at)), 0) AS missed, \
             COALESCE(SUM(CASE WHEN mode = 'batch' AND status = {c} THEN cost_micros END), 0) \
               AS batch_cost_micros, \
             COALESCE(SUM(cost_micros), 0) AS cost_micros \
             FROM jobs INDEXED BY idx_jobs_deadline WHERE deadline_at IS NOT NULL \
             AND created_at >= ?1",
            c = Status::Completed.sql(),
            t = Status::terminal_sql_list()
        );
        let row: Option<RoutingRow> = self
            .first(&sql, &[num(since), num(crate::config::now_ms())])
            .await?;
        Ok(row.unwrap_or_default())
    }
}

impl Store {
    /// Prompt-cache use per template (else kind), model and mode of the jobs created in
    /// [`from`, `to`), one user's or (`None`) everyone's — the latter a scan of the jobs
    /// retention keeps (an admin's view; the usage rollup has no template).
    pub async fn cache_use(
        &self,
        user: Option<&str>,
        from: i64,
        to: i64,
    ) -> worker::Result<Vec<pipeline::ops::cache_use::CacheSums>> {
        let sums = "SELECT COALESCE(template, kind) AS template, model, mode, COUNT(*) AS jobs, \
             SUM(input_tokens) AS input_tokens, SUM(cache_write_tokens) AS cache_write_tokens, \
             SUM(cache_read_tokens) AS cache_read_tokens FROM jobs";
        let rest = "created_at >= ?1 AND created_at < ?2 AND model IS NOT NULL \
             AND input_tokens + cache_write_tokens + cache_read_tokens > 0 \
             GROUP BY 1, model, mode";
        match user {
            Some(u) => {
                let sql = format!("{sums} WHERE user_id = ?3 AND {rest}");
                self.all(&sql, &[num(from), num(to), u.into()]).await
            }
            None => {
                let sql = format!("{sums} WHERE {rest}");
                self.all(&sql, &[num(from), num(to)]).await
            }
        }
    }

    /// Our cost per UTC day and model over days [`from_day`, `to_day`), from the usage rollup
    /// (which retention leaves: what was billed stays counted), for reconciliation: the
    /// Anthropic API's only (a job answered on another route is keyed `mode@route`, 0025).
    pub async fn our_costs(
        &self,
        from_day: i64,
        to_day: i64,
    ) -> worker::Result<Vec<pipeline::ops::reconcile::OurCost>> {
        self.all(
            "SELECT day, model, SUM(cost_micros) AS cost_micros FROM usage_days \
             WHERE day >= ?1 AND day < ?2 AND model != '' AND instr(mode, '@') = 0 \
             GROUP BY day, model",
            &[num(from_day), num(to_day)],
        )
        .await
    }
}

/// The result of [`Store::due_batches_statement`].
pub fn due_batches_of(r: &D1Result) -> worker::Result<Vec<String>> {
    #[derive(Deserialize)]
    struct Row {
        batch: String,
    }
    Ok(r.results::<Row>()?.into_iter().map(|r| r.batch).collect())
}
