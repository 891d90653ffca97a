//! Job rows: created by the producers, claimed and settled by the consumers and the poller,
//! canceled and expired — each status change guarded by its `Transition`, so that running a
//! write twice changes nothing the second time. Also each job's attempt log and the
//! idempotency records of the producers.

use pipeline::answer::{End, Settled};
use pipeline::dto::AttemptView;
use pipeline::jobs::Cursor;
use pipeline::ops::failures::Failure;
use pipeline::status::{Kind, Lane, Mode, Status, Transition};
use serde::Deserialize;
use wasm_bindgen::JsValue;

use super::row::COLUMNS;
use super::{marks, num, opt, JobRow, Statement, Store};

/// A new job's row: what every producer writes (kind-specific columns optional).
pub struct NewJob<'a> {
    pub id: &'a str,
    pub user_id: &'a str,
    pub kind: Kind,
    pub lane: Lane,
    pub mode: Mode,
    pub model: &'a str,
    /// Feedback: where it came from and its text.
    pub source: Option<&'a str>,
    pub text: Option<&'a str>,
    /// Prompt jobs and PDFs: the claim-check of their request or file in R2.
    pub prompt_key: Option<&'a str>,
    pub expires_at: Option<i64>,
    pub now: i64,
}

/// Which rows a settlement may touch: a synchronous call's job, or a job of this Message Batch
/// (still `submitted` in it).
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    Sync,
    InBatch(&'a str),
}

impl Scope<'_> {
    /// The guard of `t` in this scope; the batch id is bound as `?p` (NULL for a sync call).
    fn guard(self, t: Transition, p: usize) -> String {
        match self {
            Scope::Sync => format!("{} AND ?{p} IS NULL", t.guard()),
            Scope::InBatch(_) => format!(
                "{} AND anthropic_batch_id = ?{p}",
                Status::sql_in(&[Status::Submitted])
            ),
        }
    }

    fn batch(self) -> JsValue {
        match self {
            Scope::Sync => JsValue::NULL,
            Scope::InBatch(b) => b.into(),
        }
    }
}

/// Filters of `GET /jobs`.
#[derive(Debug, Default)]
pub struct JobFilter {
    pub status: Option<Status>,
    pub priority: Option<Lane>,
    pub kind: Option<Kind>,
}

/// One call made for a job.
pub struct Attempt<'a> {
    pub job_id: &'a str,
    pub n: u32,
    pub model: Option<&'a str>,
    pub started_at: i64,
    pub ended_at: i64,
    pub outcome: &'a str,
    pub error: Option<&'a str>,
}

/// A producer's remembered `(user, Idempotency-Key)`.
pub struct IdempotencyRecord {
    pub body_hash: String,
    pub job_id: String,
    pub created_at: i64,
}

impl Store {
    /// A new job's row (`queued`), as a statement for one `batch()` with its idempotency record.
    pub fn insert_job(&self, j: &NewJob<'_>) -> worker::Result<Statement> {
        let sql = format!(
            "INSERT INTO jobs (id, user_id, kind, status, lane, mode, model, source, input_text, \
             prompt_key, expires_at, created_at, updated_at) \
             VALUES (?1, ?2, ?3, {}, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11)",
            Status::Queued.sql()
        );
        Ok(Statement(self.stmt(
            &sql,
            &[
                j.id.into(),
                j.user_id.into(),
                j.kind.as_str().into(),
                j.lane.as_str().into(),
                j.mode.as_str().into(),
                j.model.into(),
                opt(j.source),
                opt(j.text),
                opt(j.prompt_key),
                j.expires_at.map(num).unwrap_or(JsValue::NULL),
                num(j.now),
            ],
        )?))
    }

    /// The queue refused the job: it will never run, and says why.
    pub async fn mark_enqueue_failed(
        &self,
        id: &str,
        reason: &str,
        now: i64,
    ) -> worker::Result<()> {
        let t = Transition::EnqueueFail;
        let sql = format!(
            "UPDATE jobs SET {}, error = ?2, completed_at = ?3, updated_at = ?3 \
             WHERE id = ?1 AND {}",
            t.set(),
            t.guard()
        );
        self.run(&sql, &[id.into(), reason.into(), num(now)])
            .await?;
        Ok(())
    }

    /// The live idempotency record of `(user, key)`.
    pub async fn idempotency_record(
        &self,
        user: &str,
        key: &str,
    ) -> worker::Result<Option<IdempotencyRecord>> {
        #[derive(Deserialize)]
        struct Row {
            body_hash: String,
            job_id: String,
            created_at: i64,
        }
        let row: Option<Row> = self
            .first(
                "SELECT body_hash, job_id, created_at FROM idempotency_keys \
                 WHERE user_id = ?1 AND key = ?2",
                &[user.into(), key.into()],
            )
            .await?;
        Ok(row.map(|r| IdempotencyRecord {
            body_hash: r.body_hash,
            job_id: r.job_id,
            created_at: r.created_at,
        }))
    }

    /// Remembers `(user, key)` for this job (replacing an expired record).
    pub fn remember_idempotency(
        &self,
        user: &str,
        key: &str,
        body_hash: &str,
        job_id: &str,
        now: i64,
    ) -> worker::Result<Statement> {
        Ok(Statement(self.stmt(
            "INSERT INTO idempotency_keys (user_id, key, body_hash, job_id, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT(user_id, key) DO UPDATE SET \
             body_hash = excluded.body_hash, job_id = excluded.job_id, \
             created_at = excluded.created_at",
            &[
                user.into(),
                key.into(),
                body_hash.into(),
                job_id.into(),
                num(now),
            ],
        )?))
    }

    /// Cancels a job that has not started: true when it was `queued` or `submitted` (and now is
    /// `canceled`).
    pub async fn cancel_job(&self, id: &str, now: i64) -> worker::Result<bool> {
        let t = Transition::Cancel;
        let sql = format!(
            "UPDATE jobs SET {}, error = 'canceled by the user', completed_at = ?2, \
             updated_at = ?2 WHERE id = ?1 AND {}",
            t.set(),
            t.guard()
        );
        Ok(self.run(&sql, &[id.into(), num(now)]).await? > 0)
    }

    /// A job whose `expires_at` passed before it ran.
    pub async fn expire(&self, id: &str, now: i64) -> worker::Result<()> {
        let t = Transition::Expire;
        let sql = format!(
            "UPDATE jobs SET {}, error = 'expired before it ran', completed_at = ?2, \
             updated_at = ?2 WHERE id = ?1 AND {}",
            t.set(),
            t.guard()
        );
        self.run(&sql, &[id.into(), num(now)]).await?;
        Ok(())
    }

    /// Rows stuck in `queued` or `running` (not updated since `before`): their message was lost,
    /// or their Worker died mid-call (a live call never outlasts the window: `Timing` checks
    /// that). They go back to `queued`, touched so the next run does not pick them again at
    /// once, and `(id, lane)` is returned for re-sending.
    pub async fn take_stuck(
        &self,
        before: i64,
        now: i64,
        limit: u32,
    ) -> worker::Result<Vec<(String, Lane)>> {
        #[derive(Deserialize)]
        struct Row {
            id: String,
            lane: Lane,
        }
        let t = Transition::Reconcile;
        let sql = format!(
            "UPDATE jobs SET {}, updated_at = ?2 WHERE id IN (SELECT id FROM jobs \
             WHERE {} AND updated_at < ?1 AND accumulated_at IS NULL LIMIT ?3) \
             RETURNING id, lane",
            t.set(),
            t.guard()
        );
        let rows: Vec<Row> = self
            .all(&sql, &[num(before), num(now), num(limit as i64)])
            .await?;
        Ok(rows.into_iter().map(|r| (r.id, r.lane)).collect())
    }

    /// Expires every queued job whose `expires_at` has passed; answers how many.
    pub async fn expire_stale(&self, now: i64) -> worker::Result<usize> {
        let t = Transition::ExpireStale;
        let sql = format!(
            "UPDATE jobs SET {}, error = 'expired before it ran', completed_at = ?1, \
             updated_at = ?1 WHERE {} AND expires_at IS NOT NULL AND expires_at < ?1",
            t.set(),
            t.guard()
        );
        self.run(&sql, &[num(now)]).await
    }

    /// The user's jobs (every kind unless filtered), newest first, after `cursor`; one more than
    /// `limit` is read so the caller knows whether there is a next page.
    pub async fn list_jobs(
        &self,
        user: &str,
        filter: &JobFilter,
        cursor: Option<&Cursor>,
        limit: u32,
    ) -> worker::Result<Vec<JobRow>> {
        let (at, id) = match cursor {
            Some(c) => (c.created_at, c.id.as_str()),
            None => (1 << 52, ""),
        };
        self.all(
            &super::sql::jobs_list(COLUMNS),
            &[
                user.into(),
                opt(filter.status.map(Status::as_str)),
                opt(filter.priority.map(Lane::as_str)),
                opt(filter.kind.map(Kind::as_str)),
                num(at),
                id.into(),
                num(limit as i64 + 1),
            ],
        )
        .await
    }

    /// One of the user's jobs (of this kind, if given); someone else's is `None`, as if it did
    /// not exist.
    pub async fn job_for_user(
        &self,
        id: &str,
        user: &str,
        kind: Option<Kind>,
    ) -> worker::Result<Option<JobRow>> {
        self.first(
            &format!(
                "SELECT {COLUMNS} FROM jobs WHERE id = ?1 AND user_id = ?2 \
                 AND (?3 IS NULL OR kind = ?3)"
            ),
            &[id.into(), user.into(), opt(kind.map(Kind::as_str))],
        )
        .await
    }

    /// One job, whoever's it is.
    pub async fn job(&self, id: &str) -> worker::Result<Option<JobRow>> {
        Ok(self.jobs(&[id.to_owned()]).await?.into_iter().next())
    }

    /// The rows of these ids (missing ids are simply absent).
    pub async fn jobs(&self, ids: &[String]) -> worker::Result<Vec<JobRow>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let args: Vec<JsValue> = ids.iter().map(|i| JsValue::from_str(i)).collect();
        self.all(
            &format!(
                "SELECT {COLUMNS} FROM jobs WHERE id IN ({})",
                marks(ids.len())
            ),
            &args,
        )
        .await
    }

    /// Claims a job for a synchronous call: `running`, one more attempt. Only a `queued` job can
    /// be claimed, so a second delivery of a job that is already running never calls Claude
    /// again (a job whose Worker died mid-call is put back to `queued` by the reconciler first).
    pub async fn claim(&self, id: &str, now: i64) -> worker::Result<bool> {
        let t = Transition::Claim;
        let sql = format!(
            "UPDATE jobs SET {}, attempts = attempts + 1, started_at = COALESCE(started_at, ?2), \
             updated_at = ?2 WHERE id = ?1 AND {}",
            t.set(),
            t.guard()
        );
        Ok(self.run(&sql, &[id.into(), num(now)]).await? > 0)
    }

    /// The statement that settles a paid answer: completed with its result, or failed once —
    /// keeping what was paid, and pointing at the answer kept in R2.
    pub fn settle(
        &self,
        id: &str,
        s: &Settled,
        now: i64,
        scope: Scope<'_>,
    ) -> worker::Result<Statement> {
        match &s.end {
            End::Complete { result } => {
                let t = Transition::Complete;
                let sql = format!(
                    "UPDATE jobs SET {}, input_tokens = ?2, output_tokens = ?3, \
                     cache_write_tokens = ?4, cache_read_tokens = ?5, cost_micros = ?6, \
                     raw_text = ?7, analysis = ?8, result_key = 'results/' || id, error = NULL, \
                     completed_at = ?9, updated_at = ?9, model = COALESCE(?11, model), \
                     cost_unknown = ?12 WHERE id = ?1 AND {}",
                    t.set(),
                    scope.guard(t, 10)
                );
                let u = s.usage.unwrap_or_default();
                Ok(Statement(self.stmt(
                    &sql,
                    &[
                        id.into(),
                        num(u.input_tokens as i64),
                        num(u.output_tokens as i64),
                        num(u.cache_creation_input_tokens as i64),
                        num(u.cache_read_input_tokens as i64),
                        num(s.cost_micros.unwrap_or(0) as i64),
                        opt(s.raw_text.as_deref()),
                        opt(result.as_deref()),
                        num(now),
                        scope.batch(),
                        s.answered_by.as_str().into(),
                        JsValue::from_bool(s.cost_micros.is_none()),
                    ],
                )?))
            }
            End::Fail(f) => self.fail(id, f, Some(s), now, scope),
        }
    }

    /// The statement that fails a job for good, with its class — keeping what was paid (and
    /// pointing at the answer kept in R2) when a paid answer failed it.
    pub fn fail(
        &self,
        id: &str,
        f: &Failure,
        paid: Option<&Settled>,
        now: i64,
        scope: Scope<'_>,
    ) -> worker::Result<Statement> {
        let t = Transition::Fail;
        let usage = paid.and_then(|s| s.usage);
        let cost = paid.and_then(|s| s.cost_micros);
        let u = usage.unwrap_or_default();
        let sql = format!(
            "UPDATE jobs SET {}, error = ?2, error_class = ?13, raw_text = COALESCE(?3, raw_text), \
             input_tokens = input_tokens + ?4, output_tokens = output_tokens + ?5, \
             cache_write_tokens = cache_write_tokens + ?6, \
             cache_read_tokens = cache_read_tokens + ?7, cost_micros = cost_micros + ?8, \
             completed_at = ?9, updated_at = ?9, cost_unknown = MAX(cost_unknown, ?11), \
             result_key = CASE WHEN ?12 THEN 'results/' || id ELSE result_key END \
             WHERE id = ?1 AND {}",
            t.set(),
            scope.guard(t, 10)
        );
        Ok(Statement(self.stmt(
            &sql,
            &[
                id.into(),
                f.reason.as_str().into(),
                opt(paid.and_then(|s| s.raw_text.as_deref())),
                num(u.input_tokens as i64),
                num(u.output_tokens as i64),
                num(u.cache_creation_input_tokens as i64),
                num(u.cache_read_input_tokens as i64),
                num(cost.unwrap_or(0) as i64),
                num(now),
                scope.batch(),
                JsValue::from_bool(usage.is_some() && cost.is_none()),
                // A paid answer is always stored in R2 before its row is failed: point at it.
                JsValue::from_bool(usage.is_some()),
                f.class.as_str().into(),
            ],
        )?))
    }

    /// A failure worth a retry: back to `queued` with the reason until the retry runs; an
    /// overload answer lengthens the job's overload streak, anything else ends it.
    pub async fn requeue(
        &self,
        id: &str,
        reason: &str,
        overload: bool,
        now: i64,
    ) -> worker::Result<()> {
        let t = Transition::Requeue;
        let sql = format!(
            "UPDATE jobs SET {}, error = ?2, updated_at = ?3, \
             overloads = CASE WHEN ?4 THEN overloads + 1 ELSE 0 END WHERE id = ?1 AND {}",
            t.set(),
            t.guard()
        );
        self.run(
            &sql,
            &[
                id.into(),
                reason.into(),
                num(now),
                JsValue::from_bool(overload),
            ],
        )
        .await?;
        Ok(())
    }

    /// Retries exhausted: the job is dead-lettered with the failure that ended it.
    pub fn dead_letter(
        &self,
        id: &str,
        f: &Failure,
        now: i64,
        scope: Scope<'_>,
    ) -> worker::Result<Statement> {
        let t = Transition::DeadLetter;
        let sql = format!(
            "UPDATE jobs SET {}, error = ?2, error_class = ?4, completed_at = ?3, \
             updated_at = ?3 WHERE id = ?1 AND {}",
            t.set(),
            scope.guard(t, 5)
        );
        Ok(Statement(self.stmt(
            &sql,
            &[
                id.into(),
                f.reason.as_str().into(),
                num(now),
                f.class.as_str().into(),
                scope.batch(),
            ],
        )?))
    }

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
        Ok(Statement(self.stmt(
            &sql,
            &[id.into(), batch_id.into(), reason.into(), num(now)],
        )?))
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
        Ok(Statement(self.stmt(
            &sql,
            &[id.into(), batch_id.into(), reason.into(), num(now)],
        )?))
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
        #[derive(Deserialize)]
        struct Row {
            anthropic_batch_id: String,
        }
        let sql = format!(
            "SELECT DISTINCT anthropic_batch_id FROM jobs \
             WHERE {} AND anthropic_batch_id IS NOT NULL",
            Status::sql_in(&[Status::Submitted])
        );
        let rows: Vec<Row> = self.all(&sql, &[]).await?;
        Ok(rows.into_iter().map(|r| r.anthropic_batch_id).collect())
    }

    /// The submitted jobs of one Anthropic batch.
    pub async fn in_batch(&self, batch_id: &str) -> worker::Result<Vec<JobRow>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM jobs WHERE anthropic_batch_id = ?1 AND {}",
            Status::sql_in(&[Status::Submitted])
        );
        self.all(&sql, &[batch_id.into()]).await
    }

    /// Records one call made for a job (replacing a record of the same attempt number, which
    /// only a redelivery after a crash can produce).
    pub async fn record_attempt(&self, a: &Attempt<'_>) -> worker::Result<()> {
        self.run(
            "INSERT OR REPLACE INTO job_attempts \
             (job_id, n, model, started_at, ended_at, outcome, error) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            &[
                a.job_id.into(),
                num(a.n as i64),
                opt(a.model),
                num(a.started_at),
                num(a.ended_at),
                a.outcome.into(),
                opt(a.error),
            ],
        )
        .await?;
        Ok(())
    }

    /// The calls of these jobs, by job and oldest first.
    pub async fn attempts(&self, job_ids: &[String]) -> worker::Result<Vec<(String, AttemptView)>> {
        #[derive(Deserialize)]
        struct Row {
            job_id: String,
            n: f64,
            model: Option<String>,
            started_at: f64,
            ended_at: f64,
            outcome: String,
            error: Option<String>,
        }
        if job_ids.is_empty() {
            return Ok(Vec::new());
        }
        let args: Vec<JsValue> = job_ids.iter().map(|i| JsValue::from_str(i)).collect();
        let rows: Vec<Row> = self
            .all(
                &format!(
                    "SELECT job_id, n, model, started_at, ended_at, outcome, error \
                     FROM job_attempts WHERE job_id IN ({}) ORDER BY job_id, n",
                    marks(job_ids.len())
                ),
                &args,
            )
            .await?;
        Ok(rows
            .into_iter()
            .map(|r| {
                (
                    r.job_id,
                    AttemptView {
                        n: r.n.max(0.0) as u32,
                        model: r.model,
                        started_at: r.started_at as i64,
                        ended_at: r.ended_at as i64,
                        outcome: r.outcome,
                        error: r.error,
                    },
                )
            })
            .collect())
    }
}
