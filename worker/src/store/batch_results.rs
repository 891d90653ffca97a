//! What the batch poller reads and writes: the open Message Batches, the jobs inside one, and
//! how each ends from its line of the results — resubmitted, canceled with the batch, or (for a
//! job the user canceled inside it) its bill recorded.

use pipeline::anthropic::Usage;
use pipeline::money::UsdMicros;
use pipeline::status::{Status, Transition};
use serde::Deserialize;
use wasm_bindgen::JsValue;

use super::lifecycle::spent;
use super::row::COLUMNS;
use super::{num, JobRow, Statement, Store};

impl Store {
    /// A transient error (or expiry) in a batch's results: the job goes back to the
    /// accumulation for a later batch, its try counted.
    pub fn resubmit(
        &self,
        id: &str,
        batch_id: &str,
        reason: &str,
        now: i64,
    ) -> worker::Result<Statement> {
        let t = Transition::Resubmit;
        let sql = format!(
            "UPDATE jobs SET {}, anthropic_batch_id = NULL, flush_id = NULL, \
             accumulated_at = ?4, batch_tries = batch_tries + 1, error = ?3, updated_at = ?4 \
             WHERE id = ?1 AND {} AND anthropic_batch_id = ?2",
            t.set(),
            t.guard()
        );
        self.statement(&sql, &[id.into(), batch_id.into(), reason.into(), num(now)])
    }

    /// A job whose Message Batch was canceled before its request ran.
    pub fn cancel_in_batch(
        &self,
        id: &str,
        batch_id: &str,
        reason: &str,
        now: i64,
    ) -> worker::Result<Statement> {
        let t = Transition::CancelInBatch;
        let sql = format!(
            "UPDATE jobs SET {}, error = ?3, completed_at = ?4, updated_at = ?4 \
             WHERE id = ?1 AND {} AND anthropic_batch_id = ?2",
            t.set(),
            t.guard()
        );
        self.statement(&sql, &[id.into(), batch_id.into(), reason.into(), num(now)])
    }

    /// How many jobs of an Anthropic batch still wait for its results.
    pub async fn live_in_batch(&self, batch_id: &str) -> worker::Result<u32> {
        #[derive(Deserialize)]
        struct Row {
            n: i64,
        }
        let sql = format!(
            "SELECT COUNT(*) AS n FROM jobs WHERE anthropic_batch_id = ?1 AND {}",
            Status::sql_in(&[Status::Submitted])
        );
        let row: Option<Row> = self.first(&sql, &[batch_id.into()]).await?;
        Ok(row.map(|r| r.n.max(0) as u32).unwrap_or(0))
    }

    /// The Anthropic batches that still have submitted jobs.
    pub async fn open_batches(&self) -> worker::Result<Vec<String>> {
        open_batches_of(&[self.result(&open_batches_sql(), &[]).await?])
    }

    /// [`Store::open_batches`]' statement, to run with others (read by [`open_batches_of`]).
    pub fn open_batches_statement(&self) -> worker::Result<Statement> {
        self.statement(&open_batches_sql(), &[])
    }

    /// Up to `limit` submitted jobs of one Anthropic batch.
    pub async fn in_batch(&self, batch_id: &str, limit: u32) -> worker::Result<Vec<JobRow>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM jobs WHERE anthropic_batch_id = ?1 AND {} LIMIT ?2",
            Status::sql_in(&[Status::Submitted])
        );
        self.all(&sql, &[batch_id.into(), num(limit as i64)]).await
    }

    /// Up to `limit` jobs of one Anthropic batch that were canceled after it was created and
    /// whose bill is still to be read from its results.
    pub async fn awaiting_bill(&self, batch_id: &str, limit: u32) -> worker::Result<Vec<JobRow>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM jobs WHERE anthropic_batch_id = ?1 AND awaiting_bill = 1 \
             LIMIT ?2"
        );
        self.all(&sql, &[batch_id.into(), num(limit as i64)]).await
    }

    /// The jobs of one batch that these result lines name and that still wait for them:
    /// submitted ones, and ones canceled inside the batch awaiting their bill.
    pub async fn named_in_batch(
        &self,
        batch_id: &str,
        ids: &[String],
    ) -> worker::Result<Vec<JobRow>> {
        let mut out = Vec::new();
        for chunk in ids.chunks(super::IDS_PER_STATEMENT) {
            let (marks, args) = super::with_ids(vec![JsValue::from_str(batch_id)], chunk);
            let sql = format!(
                "SELECT {COLUMNS} FROM jobs WHERE anthropic_batch_id = ?1 AND id IN ({marks}) \
                 AND ({} OR awaiting_bill = 1)",
                Status::sql_in(&[Status::Submitted])
            );
            out.extend(self.all::<JobRow>(&sql, &args).await?);
        }
        Ok(out)
    }

    /// How far a batch's results were read and settled: (bytes, lines).
    pub async fn results_cursor(&self, batch_id: &str) -> worker::Result<(u64, u64)> {
        #[derive(Deserialize)]
        struct Row {
            results_offset: f64,
            results_lines: f64,
        }
        let row: Option<Row> = self
            .first(
                "SELECT results_offset, results_lines FROM flushes WHERE anthropic_batch_id = ?1",
                &[batch_id.into()],
            )
            .await?;
        Ok(row.map_or((0, 0), |r| {
            (r.results_offset as u64, r.results_lines as u64)
        }))
    }

    /// Moves a batch's results cursor forward (never back), for the transaction that settles
    /// the lines before it.
    pub fn advance_results(
        &self,
        batch_id: &str,
        offset: u64,
        lines: u64,
    ) -> worker::Result<Statement> {
        self.statement(
            "UPDATE flushes SET results_offset = ?2, results_lines = ?3 \
             WHERE anthropic_batch_id = ?1 AND results_offset < ?2",
            &[batch_id.into(), num(offset as i64), num(lines as i64)],
        )
    }

    /// What the batch billed for a job canceled inside it: its tokens and cost recorded (it
    /// stays `canceled`), the mark cleared; `usage` `None` when its request did not run.
    pub fn record_bill(
        &self,
        id: &str,
        batch_id: &str,
        usage: Option<&Usage>,
        cost: Option<UsdMicros>,
    ) -> worker::Result<Statement> {
        let u = usage.copied().unwrap_or_default();
        self.statement(
            "UPDATE jobs SET awaiting_bill = 0, input_tokens = input_tokens + ?3, \
             output_tokens = output_tokens + ?4, cache_write_tokens = cache_write_tokens + ?5, \
             cache_read_tokens = cache_read_tokens + ?6, cost_micros = cost_micros + ?7, \
             cost_unknown = MAX(cost_unknown, ?8) \
             WHERE id = ?1 AND anthropic_batch_id = ?2 AND awaiting_bill = 1",
            &[
                &[id.into(), batch_id.into()][..],
                &spent(&u, cost),
                &[JsValue::from_bool(usage.is_some() && cost.is_none())],
            ]
            .concat(),
        )
    }
}

/// Oldest first (by the flush that made it; a batch no flush made first of all), so a batch
/// created in this very run never takes the poll's share from the ones that ended before it.
fn open_batches_sql() -> String {
    format!(
        "SELECT b.anthropic_batch_id FROM (SELECT DISTINCT anthropic_batch_id FROM jobs \
         WHERE ({} OR awaiting_bill = 1) AND anthropic_batch_id IS NOT NULL) AS b \
         LEFT JOIN flushes AS f ON f.anthropic_batch_id = b.anthropic_batch_id \
         ORDER BY f.claimed_at",
        Status::sql_in(&[Status::Submitted])
    )
}

/// The result of [`Store::open_batches_statement`].
pub fn open_batches_of(r: &[worker::D1Result]) -> worker::Result<Vec<String>> {
    #[derive(Deserialize)]
    struct Row {
        anthropic_batch_id: String,
    }
    let rows: Vec<Row> = super::nth(r, 0, "the open batches")?.results()?;
    Ok(rows.into_iter().map(|r| r.anthropic_batch_id).collect())
}
