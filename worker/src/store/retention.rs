//! Retention's statements (`pipeline::retention`): finished jobs and what hangs off them,
//! oldest first, a bounded slice per cron run. Only terminal jobs are ever selected, and never
//! one whose Message Batch may still bill it (`awaiting_bill`); the usage rollup and `spend`
//! have no delete triggers, so what was billed stays billed.

use pipeline::status::Status;
use serde::Deserialize;

use super::{num, Statement, Store};

/// A finished job retention is about to remove (or whose objects it removes).
#[derive(Debug, Clone, Deserialize)]
pub struct DueJob {
    pub id: String,
    pub kind: String,
    pub source: Option<String>,
    pub prompt_key: Option<String>,
    pub result_key: Option<String>,
    pub updated_at: f64,
    /// Its PDF in the provider's Files API (deleted there with its objects).
    #[serde(default)]
    pub file_id: Option<String>,
}

impl DueJob {
    /// The job's R2 objects: its request, its answer (written before the row points at it, so
    /// deleted whatever the row says) and an uploaded PDF.
    pub fn object_keys(&self) -> Vec<String> {
        let mut keys = vec![crate::blobs::result_key(&self.id)];
        keys.extend(self.prompt_key.clone());
        if self.kind == "pdf" {
            keys.extend(self.source.clone().filter(|s| s.starts_with("uploads/")));
        }
        keys
    }

    /// How many objects the row points at (what the report counts).
    pub fn pointed_at(&self) -> u64 {
        let pdf = self.kind == "pdf"
            && self
                .source
                .as_deref()
                .is_some_and(|s| s.starts_with("uploads/"));
        self.prompt_key.is_some() as u64 + self.result_key.is_some() as u64 + pdf as u64
    }
}

/// Where a walk over finished jobs stands: the last `(updated_at, id)` it took.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WalkCursor {
    pub updated_at: i64,
    pub id: String,
}

impl WalkCursor {
    /// `updated_at:id`, as a heartbeat's detail keeps it.
    pub fn encode(&self) -> String {
        format!("{}:{}", self.updated_at, self.id)
    }

    pub fn decode(s: &str) -> WalkCursor {
        let (at, id) = s.split_once(':').unwrap_or(("0", ""));
        WalkCursor {
            updated_at: at.parse().unwrap_or(0),
            id: id.to_owned(),
        }
    }
}

/// One terminal status's jobs last changed before `?2`, after the cursor `(?3, ?4)`, oldest
/// first, at most `?5` (served by `idx_jobs_status_updated`).
fn due_sql(status: Status) -> String {
    format!(
        "SELECT id, kind, source, prompt_key, result_key, updated_at, file_id FROM jobs \
         WHERE status = {} AND updated_at < ?1 AND awaiting_bill = 0 \
         AND updated_at >= ?2 AND (updated_at > ?2 OR id > ?3) \
         ORDER BY updated_at, id LIMIT ?4",
        status.sql()
    )
}

/// The terminal statuses, each walked on its own (one index range each).
fn terminal() -> impl Iterator<Item = Status> {
    Status::ALL.into_iter().filter(|s| s.is_terminal())
}

impl Store {
    /// Finished jobs last changed before `before`, after `from`, at most `limit` per status: a
    /// limited walk of one index range per terminal status (one statement each, as D1 refuses
    /// a compound SELECT of six terms, "too many terms in compound SELECT"). Read by
    /// [`due_of`].
    pub fn due_jobs(
        &self,
        before: i64,
        from: &WalkCursor,
        limit: u32,
    ) -> worker::Result<Vec<Statement>> {
        let args = [
            num(before),
            num(from.updated_at),
            from.id.as_str().into(),
            num(limit as i64),
        ];
        terminal()
            .map(|status| self.statement(&due_sql(status), &args))
            .collect()
    }

    /// Deletes these finished jobs with their audit entries and attempt logs, in one
    /// transaction; each delete repeats the guard (terminal, not awaiting a bill, not changed
    /// since `before`), so a job that moved meanwhile stays. Answers (jobs, audit entries,
    /// attempt logs) removed.
    pub async fn delete_jobs(
        &self,
        ids: &[String],
        before: i64,
    ) -> worker::Result<(u64, u64, u64)> {
        let (mut jobs, mut audit, mut attempts) = (0, 0, 0);
        for chunk in ids.chunks(super::IDS_PER_STATEMENT) {
            let (marks, args) = super::with_ids(vec![num(before)], chunk);
            let guard = format!(
                "SELECT id FROM jobs WHERE id IN ({marks}) AND status IN ({}) \
                 AND awaiting_bill = 0 AND updated_at < ?1",
                Status::terminal_sql_list()
            );
            let results = self
                .batch(vec![
                    self.statement(
                        &format!("DELETE FROM job_audit WHERE job_id IN ({guard})"),
                        &args,
                    )?,
                    self.statement(
                        &format!("DELETE FROM job_attempts WHERE job_id IN ({guard})"),
                        &args,
                    )?,
                    self.statement(
                        &format!("DELETE FROM jobs WHERE id IN ({guard}) RETURNING id"),
                        &args,
                    )?,
                ])
                .await?;
            let n = |i: usize| {
                results
                    .get(i)
                    .map(|r| super::changes(r).unwrap_or(0) as u64)
                    .unwrap_or(0)
            };
            audit += n(0);
            attempts += n(1);
            // Counted from RETURNING: D1's `changes` also counts what the delete trigger wrote
            // (migration 0012's `job_counts` and `user_queued`).
            jobs += match results.get(2) {
                Some(r) => r.results::<serde_json::Value>()?.len() as u64,
                None => 0,
            };
        }
        Ok((jobs, audit, attempts))
    }

    /// The small deletes of one retention run (each statement bounded by
    /// `limit` where its table grows with the jobs): attempt logs of finished jobs that ended
    /// before `attempts_before` (when given), idempotency records made before
    /// `idempotency_before` (they no longer hold their key), metrics rows written before
    /// `metrics_before`, uploads made before `uploads_before` none of whose jobs is left, and the
    /// poller's notes of batches the API did not know made before `missing_before`.
    pub fn sweep(&self, s: &Sweep) -> worker::Result<Vec<Statement>> {
        let limit = num(s.limit as i64);
        let mut statements = vec![
            self.statement(
                "DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys \
                 INDEXED BY idx_idempotency_created WHERE created_at < ?1 LIMIT ?2)",
                &[num(s.idempotency_before), limit.clone()],
            )?,
            self.statement(
                "DELETE FROM metrics WHERE at < ?1",
                &[num(s.metrics_before)],
            )?,
            self.statement(
                "DELETE FROM batches WHERE id IN (SELECT b.id FROM batches b \
                 WHERE b.created_at < ?1 AND NOT EXISTS \
                 (SELECT 1 FROM jobs j WHERE j.batch_id = b.id) LIMIT ?2)",
                &[num(s.uploads_before), limit.clone()],
            )?,
            // The poller's notes of Message Batches the API answered 404 for: one given up is
            // forgotten then; one that came back is forgotten here, long after any batch ended.
            self.statement(
                "DELETE FROM heartbeats WHERE name >= 'batch_missing:' \
                 AND name < 'batch_missing;' AND at < ?1",
                &[num(s.missing_before)],
            )?,
        ];
        if let Some(before) = s.attempts_before {
            statements.push(self.statement(
                &format!(
                    "DELETE FROM job_attempts WHERE rowid IN (SELECT a.rowid FROM job_attempts a \
                     INDEXED BY idx_attempts_ended JOIN jobs j ON j.id = a.job_id \
                     WHERE a.ended_at < ?1 AND j.status IN ({}) LIMIT ?2)",
                    Status::terminal_sql_list()
                ),
                &[num(before), limit],
            )?);
        }
        Ok(statements)
    }
}

/// The jobs the statements of [`Store::due_jobs`] found.
pub fn due_of(r: &[worker::D1Result]) -> worker::Result<Vec<DueJob>> {
    let mut out = Vec::new();
    for r in r {
        out.extend(r.results::<DueJob>()?);
    }
    Ok(out)
}

/// What the statements of [`Store::sweep`] deleted.
pub fn swept(r: &[worker::D1Result]) -> Swept {
    let n = |i: usize| {
        r.get(i)
            .map(|r| super::changes(r).unwrap_or(0) as u64)
            .unwrap_or(0)
    };
    Swept {
        idempotency: n(0),
        metrics: n(1),
        uploads: n(2),
        attempts: n(4),
    }
}

/// What [`Store::sweep`] deletes.
pub struct Sweep {
    pub attempts_before: Option<i64>,
    pub idempotency_before: i64,
    pub metrics_before: i64,
    pub uploads_before: i64,
    /// Notes of batches the API did not know, made before this.
    pub missing_before: i64,
    pub limit: u32,
}

/// What [`Store::sweep`] deleted.
pub struct Swept {
    pub attempts: u64,
    pub idempotency: u64,
    pub metrics: u64,
    pub uploads: u64,
}
