//! The bulk lane's accumulation in D1 and the flushes that send it as Message Batches. A flush
//! claims its jobs *before* its create call, so nothing is ever sent twice (see
//! `message_batches::flush`).

use pipeline::status::{Status, Transition};
use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::D1Result;

use super::row::COLUMNS;
use super::{marks, num, JobRow, Statement, Store};

/// Flushes left `claimed` since before ?1, oldest first.
const STRANDED: &str = "SELECT id, jobs, claimed_at FROM flushes WHERE state = 'claimed' \
     AND claimed_at < ?1 ORDER BY claimed_at LIMIT 20";

/// How many jobs wait for a flush, and since when (served by `idx_jobs_waiting`).
fn waiting_sql() -> String {
    format!(
        // Named: without statistics the planner would walk every queued job by status.
        "SELECT COUNT(*) AS n, MIN(accumulated_at) AS oldest FROM jobs \
         INDEXED BY idx_jobs_waiting WHERE {}",
        waiting()
    )
}

/// The result of [`Store::waiting_statement`]: (jobs waiting, the oldest's accumulation time).
pub fn waiting_of(r: &[D1Result]) -> worker::Result<(u32, Option<i64>)> {
    #[derive(Deserialize)]
    struct Row {
        n: i64,
        oldest: Option<i64>,
    }
    let rows: Vec<Row> = super::nth(r, 0, "the waiting count")?.results()?;
    Ok(rows
        .first()
        .map(|r| (r.n.max(0) as u32, r.oldest))
        .unwrap_or((0, None)))
}

/// A flush left `claimed`: its create call's outcome is unknown.
#[derive(Debug, Deserialize)]
pub struct Stranded {
    pub id: String,
    pub jobs: i64,
    pub claimed_at: i64,
}

/// `status = 'queued' AND accumulated_at IS NOT NULL AND flush_id IS NULL`: a job waiting for a
/// flush (spelled as the partial index `idx_jobs_waiting` is).
fn waiting() -> String {
    format!(
        "{} AND accumulated_at IS NOT NULL AND flush_id IS NULL",
        Status::sql_in(&[Status::Queued])
    )
}

impl Store {
    /// A batch-mode job joins the accumulation (once: a redelivered message changes nothing).
    pub async fn accumulate(&self, id: &str, now: i64) -> worker::Result<()> {
        let sql = format!(
            "UPDATE jobs SET accumulated_at = ?2, updated_at = ?2 \
             WHERE id = ?1 AND {} AND accumulated_at IS NULL",
            Status::sql_in(&[Status::Queued])
        );
        self.run(&sql, &[id.into(), num(now)]).await?;
        Ok(())
    }

    /// How many jobs wait for a flush, and since when the oldest.
    pub async fn waiting(&self) -> worker::Result<(u32, Option<i64>)> {
        waiting_of(&[self.result(&waiting_sql(), &[]).await?])
    }

    /// [`Store::waiting`]'s statement, to run with others (read by [`waiting_of`]).
    pub fn waiting_statement(&self) -> worker::Result<Statement> {
        self.statement(&waiting_sql(), &[])
    }

    /// The claim: a flush row and up to `size` waiting jobs, in one transaction; answers the
    /// claimed rows, oldest first (none when another flush took them first — then the flush
    /// row is gone again). A job past its rescue time is left to the deadline router, which
    /// moves it to a synchronous call: a flush that claimed it in every run (its create refused
    /// while the Anthropic API is down) would keep it from the rescue for ever.
    pub async fn claim_flush(
        &self,
        flush: &str,
        size: u32,
        now: i64,
    ) -> worker::Result<Vec<JobRow>> {
        self.batch(vec![
            self.statement(
                "INSERT INTO flushes (id, state, jobs, claimed_at, updated_at) \
                 VALUES (?1, 'claimed', 0, ?2, ?2)",
                &[flush.into(), num(now)],
            )?,
            self.statement(
                &format!(
                    "UPDATE jobs SET flush_id = ?1, updated_at = ?2 WHERE id IN (SELECT id FROM jobs \
                     INDEXED BY idx_jobs_waiting WHERE {} AND (rescue_at IS NULL OR rescue_at > ?2) \
                     ORDER BY accumulated_at LIMIT ?3)",
                    waiting()
                ),
                &[flush.into(), num(now), num(size as i64)],
            )?,
        ])
        .await?;
        let rows: Vec<JobRow> = self
            .all(
                &format!(
                    "SELECT {COLUMNS} FROM jobs WHERE flush_id = ?1 AND {} ORDER BY accumulated_at",
                    Status::sql_in(&[Status::Queued])
                ),
                &[flush.into()],
            )
            .await?;
        if rows.is_empty() {
            self.run("DELETE FROM flushes WHERE id = ?1", &[flush.into()])
                .await?;
        }
        Ok(rows)
    }

    /// A job that did not fit this create call: back to waiting, first in line for the next.
    pub fn unclaim(&self, id: &str, flush: &str) -> worker::Result<Statement> {
        self.statement(
            "UPDATE jobs SET flush_id = NULL WHERE id = ?1 AND flush_id = ?2",
            &[id.into(), flush.into()],
        )
    }

    /// How many requests the flush's create call carries.
    pub fn size_flush(&self, flush: &str, jobs: usize, now: i64) -> worker::Result<Statement> {
        self.statement(
            "UPDATE flushes SET jobs = ?2, updated_at = ?3 WHERE id = ?1",
            &[flush.into(), num(jobs as i64), num(now)],
        )
    }

    /// The flush's jobs are in `batch`: `submitted` with its id, in one transaction.
    pub async fn mark_created(&self, flush: &str, batch: &str, now: i64) -> worker::Result<()> {
        let t = Transition::Submit;
        self.batch(vec![
            self.statement(
                &format!(
                    "UPDATE jobs SET {}, anthropic_batch_id = ?2, attempts = attempts + 1, \
                     started_at = COALESCE(started_at, ?3), error = NULL, updated_at = ?3 \
                     WHERE flush_id = ?1 AND {}",
                    t.set(),
                    t.guard()
                ),
                &[flush.into(), batch.into(), num(now)],
            )?,
            self.statement(
                "UPDATE flushes SET state = 'created', anthropic_batch_id = ?2, updated_at = ?3 \
                 WHERE id = ?1",
                &[flush.into(), batch.into(), num(now)],
            )?,
        ])
        .await?;
        Ok(())
    }

    /// The create certainly did not happen: the flush's jobs wait again.
    pub async fn release_flush(&self, flush: &str, note: &str, now: i64) -> worker::Result<()> {
        self.batch(vec![
            self.statement(
                &format!(
                    "UPDATE jobs SET flush_id = NULL, updated_at = ?2 WHERE flush_id = ?1 AND {}",
                    Status::sql_in(&[Status::Queued])
                ),
                &[flush.into(), num(now)],
            )?,
            self.statement(
                "UPDATE flushes SET state = 'released', note = ?2, updated_at = ?3 WHERE id = ?1",
                &[flush.into(), note.into(), num(now)],
            )?,
        ])
        .await?;
        Ok(())
    }

    /// The create call's outcome is unknown: the flush stays claimed, with a note.
    pub async fn note_flush(&self, flush: &str, note: &str, now: i64) -> worker::Result<()> {
        self.run(
            "UPDATE flushes SET note = ?2, updated_at = ?3 WHERE id = ?1",
            &[flush.into(), note.into(), num(now)],
        )
        .await?;
        Ok(())
    }

    /// Flushes left `claimed` since before `before`, oldest first.
    pub async fn stranded_flushes(&self, before: i64) -> worker::Result<Vec<Stranded>> {
        self.all(STRANDED, &[num(before)]).await
    }

    /// [`Store::stranded_flushes`]' statement, to run with others.
    pub fn stranded_statement(&self, before: i64) -> worker::Result<Statement> {
        self.statement(STRANDED, &[num(before)])
    }

    /// Which of these Anthropic batch ids a flush or a job already knows.
    pub async fn known_batches(
        &self,
        ids: &[String],
    ) -> worker::Result<std::collections::HashSet<String>> {
        #[derive(Deserialize)]
        struct Id {
            anthropic_batch_id: String,
        }
        let mut known = std::collections::HashSet::new();
        for chunk in ids.chunks(50) {
            let m = marks(chunk.len());
            let binds: Vec<JsValue> = chunk.iter().map(|u| u.as_str().into()).collect();
            for sql in [
                format!("SELECT anthropic_batch_id FROM flushes WHERE anthropic_batch_id IN ({m})"),
                format!(
                    "SELECT DISTINCT anthropic_batch_id FROM jobs WHERE anthropic_batch_id IN ({m})"
                ),
            ] {
                let rows: Vec<Id> = self.all(&sql, &binds).await?;
                known.extend(rows.into_iter().map(|r| r.anthropic_batch_id));
            }
        }
        Ok(known)
    }
}
