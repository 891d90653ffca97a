//! Job rows as the producers and the API see them: created (with the producers' idempotency
//! records), read, listed, canceled, expired. What the consumers and the poller write is in
//! [`super::lifecycle`]. Each status change is guarded by its `Transition`, so that running a
//! write twice changes nothing the second time.

use pipeline::jobs::Cursor;
use pipeline::status::CallPath;
use pipeline::status::{Kind, Lane, Mode, Status, Transition};
use serde::Deserialize;
use wasm_bindgen::JsValue;

use super::row::COLUMNS;
use super::{marks, money, num, opt, JobRow, Statement, Store};
use pipeline::money::UsdMicros;

/// A new job's row: what every producer writes (kind-specific columns optional).
pub struct NewJob<'a> {
    pub id: &'a str,
    pub user_id: &'a str,
    pub kind: Kind,
    pub lane: Lane,
    pub mode: Mode,
    pub model: &'a str,
    /// Retried once on this model if `model` refuses (`pipeline::refusal`).
    pub fallback_model: Option<&'a str>,
    /// Feedback: where it came from and its text.
    pub source: Option<&'a str>,
    pub text: Option<&'a str>,
    /// Prompt jobs and PDFs: the claim-check of their request or file in R2.
    pub prompt_key: Option<&'a str>,
    pub expires_at: Option<i64>,
    /// A `POST /api/claude` call: the path that answers it.
    pub path: Option<CallPath>,
    /// Its worst case, reserved against the user's caps (`jobs_admission` refuses the insert
    /// that would cross one).
    pub reserved: UsdMicros,
    /// Where its final view is posted when it ends, and the API key whose secret signs it.
    pub callback: Option<&'a pipeline::webhooks::Callback>,
    /// Its tags, checked (`pipeline::tags::parse`).
    pub tags: &'a [String],
    /// The deadline router's answer, for a job that set a deadline.
    pub routed: Option<Routed>,
    pub now: i64,
}

/// Where the deadline router sent a job (`pipeline::routing::route`), as stored with it.
#[derive(Debug, Clone, Copy)]
pub struct Routed {
    pub deadline_at: i64,
    /// When its batch must be cancelled (a batch route only).
    pub rescue_at: Option<i64>,
    pub reason: pipeline::routing::Reason,
}

/// Filters of `GET /jobs`.
#[derive(Debug, Default)]
pub struct JobFilter {
    pub status: Option<Status>,
    pub priority: Option<Lane>,
    pub kind: Option<Kind>,
    /// One `key=value` tag (`pipeline::tags::parse_filter`).
    pub tag: Option<String>,
}

/// A producer's remembered `(user, Idempotency-Key)`.
pub struct IdempotencyRecord {
    pub body_hash: String,
    pub job_id: String,
    pub created_at: i64,
    /// Its job ended `enqueue_failed`: it never ran, and the key is free again.
    pub never_queued: bool,
}

impl Store {
    /// A new job's row (`queued`), as a statement for one `batch()` with its idempotency record.
    pub fn insert_job(&self, j: &NewJob<'_>) -> worker::Result<Statement> {
        let sql = format!(
            "INSERT INTO jobs (id, user_id, kind, status, lane, mode, model, source, input_text, \
             prompt_key, expires_at, created_at, updated_at, path, reserved_micros, callback_url, \
             callback_key, tags, deadline_at, rescue_at, route_reason, fallback_model) \
             VALUES (?1, ?2, ?3, {}, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11, ?12, ?13, ?14, ?15, ?16, \
             ?17, ?18, ?19, ?20)",
            Status::Queued.sql()
        );
        self.statement(
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
                opt(j.path.map(CallPath::as_str)),
                money(j.reserved),
                opt(j.callback.map(|c| c.url.as_str())),
                opt(j.callback.and_then(|c| c.key_id.as_deref())),
                opt(pipeline::tags::to_column(j.tags).as_deref()),
                j.routed.map_or(JsValue::NULL, |r| num(r.deadline_at)),
                j.routed
                    .and_then(|r| r.rescue_at)
                    .map_or(JsValue::NULL, num),
                opt(j.routed.map(|r| r.reason.as_str())),
                opt(j.fallback_model),
            ],
        )
    }

    /// Ends a job that has not run with `t` (to a terminal status) and the reason; answers
    /// whether it did (whether the guard held).
    async fn end_unrun(
        &self,
        id: &str,
        t: Transition,
        reason: &str,
        now: i64,
    ) -> worker::Result<bool> {
        let sql = format!(
            "UPDATE jobs SET {}, error = ?2, completed_at = ?3, updated_at = ?3 \
             WHERE id = ?1 AND {}",
            t.set(),
            t.guard()
        );
        Ok(self
            .run(&sql, &[id.into(), reason.into(), num(now)])
            .await?
            > 0)
    }

    /// The queue refused the job: it will never run, and says why.
    pub async fn mark_enqueue_failed(
        &self,
        id: &str,
        reason: &str,
        now: i64,
    ) -> worker::Result<()> {
        self.end_unrun(id, Transition::EnqueueFail, reason, now)
            .await?;
        Ok(())
    }

    /// The idempotency record of `(user, key)`, if any, with whether its job was ever queued.
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
            never_queued: Option<i64>,
        }
        let sql = format!(
            "SELECT k.body_hash, k.job_id, k.created_at, (j.status = {}) AS never_queued \
             FROM idempotency_keys k LEFT JOIN jobs j ON j.id = k.job_id \
             WHERE k.user_id = ?1 AND k.key = ?2",
            Status::EnqueueFailed.sql()
        );
        let row: Option<Row> = self.first(&sql, &[user.into(), key.into()]).await?;
        Ok(row.map(|r| IdempotencyRecord {
            body_hash: r.body_hash,
            job_id: r.job_id,
            created_at: r.created_at,
            never_queued: r.never_queued.unwrap_or(0) != 0,
        }))
    }

    /// The statements that claim `(user, key)` for this job, to run first in the job's own
    /// transaction: a record that no longer holds its key (expired, or its job never queued) is
    /// removed, then the new one inserted — a plain `INSERT`, so when another request holding
    /// the key committed first, the primary key refuses it and the whole transaction (the job
    /// with it) is rolled back. One insert decides the winner.
    pub fn claim_idempotency(
        &self,
        user: &str,
        key: &str,
        body_hash: &str,
        job_id: &str,
        now: i64,
    ) -> worker::Result<[Statement; 2]> {
        let stale = format!(
            "DELETE FROM idempotency_keys WHERE user_id = ?1 AND key = ?2 AND (created_at <= ?3 \
             OR job_id IN (SELECT id FROM jobs WHERE {}))",
            Status::sql_in(&[Status::EnqueueFailed])
        );
        let expired = now - pipeline::prompt::IDEMPOTENCY_TTL_MS;
        Ok([
            self.statement(&stale, &[user.into(), key.into(), num(expired)])?,
            self.statement(
                "INSERT INTO idempotency_keys (user_id, key, body_hash, job_id, created_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                &[
                    user.into(),
                    key.into(),
                    body_hash.into(),
                    job_id.into(),
                    num(now),
                ],
            )?,
        ])
    }

    /// Cancels a job that has not started: true when it was `queued` or `submitted` (and now is
    /// `canceled`).
    pub async fn cancel_job(&self, id: &str, now: i64) -> worker::Result<bool> {
        self.end_unrun(id, Transition::Cancel, "canceled by the user", now)
            .await
    }

    /// A job whose `expires_at` passed before it ran.
    pub async fn expire(&self, id: &str, now: i64) -> worker::Result<()> {
        self.end_unrun(id, Transition::Expire, "expired before it ran", now)
            .await?;
        Ok(())
    }

    /// The reconciler's two writes: every queued job whose `expires_at` has passed is expired,
    /// and at most `limit` rows stuck in `queued` or `running` (not updated since `before`:
    /// their message was lost, or their Worker died mid-call — a live call never outlasts the
    /// window, `Timing` checks that) go back to `queued`, touched so the next run does not pick
    /// them again at once. An expired job is terminal, so it is never also taken. Run with
    /// others in one [`Store::rounds`]; read by [`reconciled`].
    pub fn reconcile(&self, before: i64, now: i64, limit: u32) -> worker::Result<Vec<Statement>> {
        let expire = Transition::ExpireStale;
        let expire = format!(
            "UPDATE jobs INDEXED BY idx_jobs_expiring \
             SET {}, error = 'expired before it ran', completed_at = ?1, \
             updated_at = ?1 WHERE {} AND expires_at IS NOT NULL AND expires_at < ?1 RETURNING id",
            expire.set(),
            expire.guard()
        );
        let take = Transition::Reconcile;
        let take = format!(
            "UPDATE jobs SET {}, updated_at = ?2 WHERE id IN (SELECT id FROM jobs \
             WHERE {} AND updated_at < ?1 AND accumulated_at IS NULL AND held_at IS NULL \
             LIMIT ?3) \
             RETURNING id, lane",
            take.set(),
            take.guard()
        );
        Ok(vec![
            self.statement(&expire, &[num(now)])?,
            self.statement(&take, &[num(before), num(now), num(limit as i64)])?,
        ])
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
                opt(filter.tag.as_deref()),
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
    /// [`Store::jobs`]' statement (at most 100 ids), to run with others.
    pub fn jobs_statement(&self, ids: &[String]) -> worker::Result<Statement> {
        let (marks, args) = super::with_ids(Vec::new(), ids);
        self.statement(
            &format!("SELECT {COLUMNS} FROM jobs WHERE id IN ({marks})"),
            &args,
        )
    }

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
}

/// What [`Store::reconcile`] did: how many jobs expired, and the `(id, lane)` of those taken
/// back to `queued` for re-sending. Counted from RETURNING: D1's `changes` also counts what the
/// rollup triggers wrote.
pub fn reconciled(r: &[worker::D1Result]) -> worker::Result<(usize, Vec<(String, Lane)>)> {
    #[derive(Deserialize)]
    struct Row {
        id: String,
        lane: Lane,
    }
    let expired = super::nth(r, 0, "the reconciler")?
        .results::<serde_json::Value>()?
        .len();
    let stuck: Vec<Row> = super::nth(r, 1, "the reconciler")?.results()?;
    Ok((expired, stuck.into_iter().map(|r| (r.id, r.lane)).collect()))
}
