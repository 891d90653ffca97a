//! Job rows in D1. Every write that a retry can repeat is guarded: it only touches rows that are
//! not terminal (and, for batch results, still in that batch), so running it twice changes
//! nothing the second time.

use pipeline::anthropic::Usage;
use pipeline::dto::{AttemptView, BatchFile, FeedbackView, JobView};
use pipeline::feedback::Analysis;
use pipeline::jobs::{elapsed_ms, Cursor};
use pipeline::status::{Kind, Lane, Mode, Status};
use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::{D1Database, D1PreparedStatement};

/// A job row as stored.
#[derive(Debug, Clone, Deserialize)]
pub struct JobRow {
    pub id: String,
    pub kind: String,
    pub status: String,
    pub lane: String,
    pub mode: String,
    pub model: Option<String>,
    pub source: Option<String>,
    pub input_text: Option<String>,
    pub raw_text: Option<String>,
    pub analysis: Option<String>,
    pub anthropic_batch_id: Option<String>,
    pub attempts: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cache_write_tokens: i64,
    pub cache_read_tokens: i64,
    pub cost_micros: i64,
    pub error: Option<String>,
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub completed_at: Option<i64>,
    pub expires_at: Option<i64>,
    pub prompt_key: Option<String>,
    pub overloads: i64,
    pub user_id: String,
    #[serde(default)]
    pub cost_unknown: i64,
    #[serde(default)]
    pub batch_tries: i64,
    pub batch_index: Option<i64>,
    pub file_name: Option<String>,
    pub file_size: Option<i64>,
    pub template: Option<String>,
    #[serde(default)]
    pub error_class: Option<String>,
    #[serde(default)]
    pub replay_of: Option<String>,
    #[serde(default)]
    pub replayed_to: Option<String>,
    /// Where the answer lives in R2: set on completion, and on a failure that was paid for
    /// (the raw answer is kept).
    #[serde(default)]
    pub result_key: Option<String>,
}

pub const COLUMNS: &str =
    "id, user_id, kind, status, lane, mode, model, source, input_text, raw_text, \
    analysis, anthropic_batch_id, attempts, input_tokens, output_tokens, cache_write_tokens, \
    cache_read_tokens, cost_micros, error, created_at, started_at, completed_at, expires_at, prompt_key, overloads, user_id, \
    cost_unknown, batch_tries, batch_index, file_name, file_size, template, error_class, replay_of, \
    replayed_to, result_key";

impl JobRow {
    /// Whether `GET /jobs/:id/result` has something to serve: a completed job's result, or the
    /// raw answer of a job that failed after a paid call.
    pub fn has_result(&self) -> bool {
        match self.status() {
            Status::Completed => true,
            Status::Failed => self.result_key.is_some(),
            _ => false,
        }
    }

    fn result_url(&self) -> Option<String> {
        self.has_result()
            .then(|| format!("/jobs/{}/result", self.id))
    }

    pub fn status(&self) -> Status {
        // The CHECK constraint makes any other spelling impossible.
        Status::parse(&self.status).unwrap_or(Status::Failed)
    }

    pub fn mode(&self) -> Mode {
        if self.mode == "batch" {
            Mode::Batch
        } else {
            Mode::Sync
        }
    }

    pub fn kind(&self) -> Kind {
        match self.kind.as_str() {
            "prompt" => Kind::Prompt,
            "pdf" => Kind::Pdf,
            _ => Kind::Feedback,
        }
    }

    pub fn lane(&self) -> Lane {
        if self.lane == "bulk" {
            Lane::Bulk
        } else {
            Lane::High
        }
    }

    /// The jobs API's view of any job.
    pub fn job_view(&self, now: i64) -> JobView {
        let status = self.status();
        JobView {
            id: self.id.clone(),
            kind: self.kind(),
            status,
            priority: self.lane(),
            mode: self.mode(),
            model: self.model.clone().unwrap_or_default(),
            attempts: self.attempts.max(0) as u32,
            input_tokens: self.input_tokens.max(0) as u64,
            output_tokens: self.output_tokens.max(0) as u64,
            cache_write_tokens: self.cache_write_tokens.max(0) as u64,
            cache_read_tokens: self.cache_read_tokens.max(0) as u64,
            cost_micros: self.cost_micros.max(0) as u64,
            cost_unknown: self.cost_unknown != 0,
            error: self.error.clone(),
            anthropic_batch_id: self.anthropic_batch_id.clone(),
            created_at: self.created_at,
            started_at: self.started_at,
            completed_at: self.completed_at,
            expires_at: self.expires_at,
            elapsed_ms: elapsed_ms(status, self.created_at, self.completed_at, now),
            result_url: self.result_url(),
            attempt_log: Vec::new(),
        }
    }

    /// The PDF template of a `pdf` job.
    pub fn template(&self) -> pipeline::pdf::Template {
        pipeline::pdf::Template::parse(self.template.as_deref())
            .unwrap_or(pipeline::pdf::Template::Summary)
    }

    /// A `pdf` job as a file of its upload.
    pub fn batch_file(&self) -> BatchFile {
        let status = self.status();
        BatchFile {
            index: self.batch_index.unwrap_or(0).max(0) as u32,
            job_id: self.id.clone(),
            file_name: self.file_name.clone().unwrap_or_default(),
            file_size: self.file_size.unwrap_or(0).max(0) as u64,
            status,
            error: self.error.clone(),
            input_tokens: self.input_tokens.max(0) as u64,
            output_tokens: self.output_tokens.max(0) as u64,
            cache_write_tokens: self.cache_write_tokens.max(0) as u64,
            cache_read_tokens: self.cache_read_tokens.max(0) as u64,
            cost_micros: self.cost_micros.max(0) as u64,
            cost_unknown: self.cost_unknown != 0,
            extraction: self
                .analysis
                .as_deref()
                .and_then(|a| serde_json::from_str(a).ok()),
            result_url: self.result_url(),
            completed_at: self.completed_at,
        }
    }

    pub fn feedback_view(&self, now: i64) -> FeedbackView {
        let status = self.status();
        FeedbackView {
            id: self.id.clone(),
            kind: Kind::Feedback,
            status,
            mode: self.mode(),
            lane: if self.lane == "bulk" {
                Lane::Bulk
            } else {
                Lane::High
            },
            source: self.source.clone().unwrap_or_default(),
            text: self.input_text.clone().unwrap_or_default(),
            model: self.model.clone().unwrap_or_default(),
            analysis: self
                .analysis
                .as_deref()
                .and_then(|a| serde_json::from_str::<Analysis>(a).ok()),
            raw_text: self.raw_text.clone(),
            attempts: self.attempts.max(0) as u32,
            anthropic_batch_id: self.anthropic_batch_id.clone(),
            input_tokens: self.input_tokens.max(0) as u64,
            output_tokens: self.output_tokens.max(0) as u64,
            cache_write_tokens: self.cache_write_tokens.max(0) as u64,
            cache_read_tokens: self.cache_read_tokens.max(0) as u64,
            cost_micros: self.cost_micros.max(0) as u64,
            cost_unknown: self.cost_unknown != 0,
            error: self.error.clone(),
            created_at: self.created_at,
            started_at: self.started_at,
            completed_at: self.completed_at,
            elapsed_ms: elapsed_ms(status, self.created_at, self.completed_at, now),
        }
    }
}

/// A number bound into a D1 statement.
pub fn num(v: i64) -> JsValue {
    JsValue::from_f64(v as f64)
}

fn opt(v: Option<&str>) -> JsValue {
    v.map(JsValue::from_str).unwrap_or(JsValue::NULL)
}

/// `status NOT IN (<terminal>)`: the guard of every repeatable write.
fn not_terminal() -> String {
    format!("status NOT IN ({})", Status::terminal_sql_list())
}

/// What a new feedback row holds.
pub struct NewFeedback<'a> {
    pub id: &'a str,
    pub user_id: &'a str,
    pub mode: Mode,
    pub lane: Lane,
    pub model: &'a str,
    pub source: &'a str,
    pub text: &'a str,
    pub now: i64,
}

/// A new feedback job's row, as a statement (inserted in one `db.batch()` with its idempotency
/// record when there is one).
pub fn insert_feedback_stmt(
    db: &D1Database,
    f: &NewFeedback<'_>,
) -> worker::Result<D1PreparedStatement> {
    db.prepare(
        "INSERT INTO jobs (id, user_id, kind, status, lane, mode, model, source, input_text, \
         created_at, updated_at) VALUES (?1, ?2, 'feedback', 'queued', ?3, ?4, ?5, ?6, ?7, ?8, ?8)",
    )
    .bind(&[
        f.id.into(),
        f.user_id.into(),
        f.lane.as_str().into(),
        f.mode.as_str().into(),
        f.model.into(),
        f.source.into(),
        f.text.into(),
        num(f.now),
    ])
}

/// The queue refused the job: it will never run, and says why.
pub async fn mark_enqueue_failed(
    db: &D1Database,
    id: &str,
    reason: &str,
    now: i64,
) -> worker::Result<()> {
    db.prepare(
        "UPDATE jobs SET status = 'enqueue_failed', error = ?2, completed_at = ?3, updated_at = ?3 \
         WHERE id = ?1 AND status = 'queued'",
    )
    .bind(&[id.into(), reason.into(), num(now)])?
    .run()
    .await?;
    Ok(())
}

/// A new prompt job's row, as a statement (inserted in one `db.batch()` with its idempotency
/// record, so neither exists without the other).
#[allow(clippy::too_many_arguments)]
pub fn insert_prompt_stmt(
    db: &D1Database,
    id: &str,
    user_id: &str,
    lane: Lane,
    mode: Mode,
    model: &str,
    expires_at: Option<i64>,
    now: i64,
) -> worker::Result<D1PreparedStatement> {
    db.prepare(
        "INSERT INTO jobs (id, user_id, kind, status, lane, mode, model, prompt_key, expires_at, \
         created_at, updated_at) VALUES (?1, ?2, 'prompt', 'queued', ?3, ?4, ?5, 'prompts/' || ?1, \
         ?6, ?7, ?7)",
    )
    .bind(&[
        id.into(),
        user_id.into(),
        lane.as_str().into(),
        mode.as_str().into(),
        model.into(),
        expires_at.map(num).unwrap_or(JsValue::NULL),
        num(now),
    ])
}

/// The live idempotency record of `(user, key)`: `(body_hash, job_id, created_at)`.
pub async fn idempotency_record(
    db: &D1Database,
    user: &str,
    key: &str,
) -> worker::Result<Option<(String, String, i64)>> {
    #[derive(Deserialize)]
    struct Row {
        body_hash: String,
        job_id: String,
        created_at: i64,
    }
    let row: Option<Row> = db
        .prepare("SELECT body_hash, job_id, created_at FROM idempotency_keys WHERE user_id = ?1 AND key = ?2")
        .bind(&[user.into(), key.into()])?
        .first(None)
        .await?;
    Ok(row.map(|r| (r.body_hash, r.job_id, r.created_at)))
}

/// Remembers `(user, key)` for this job (replacing an expired record).
pub fn idempotency_stmt(
    db: &D1Database,
    user: &str,
    key: &str,
    body_hash: &str,
    job_id: &str,
    now: i64,
) -> worker::Result<D1PreparedStatement> {
    db.prepare(
        "INSERT INTO idempotency_keys (user_id, key, body_hash, job_id, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT(user_id, key) DO UPDATE SET \
         body_hash = excluded.body_hash, job_id = excluded.job_id, created_at = excluded.created_at",
    )
    .bind(&[user.into(), key.into(), body_hash.into(), job_id.into(), num(now)])
}

/// Cancels a job that has not started: true when it was `queued` (and now is `canceled`).
pub async fn cancel(db: &D1Database, id: &str, now: i64) -> worker::Result<bool> {
    let r = db
        .prepare(
            "UPDATE jobs SET status = 'canceled', error = 'canceled by the user', \
             completed_at = ?2, updated_at = ?2 WHERE id = ?1 AND status IN ('queued', 'submitted')",
        )
        .bind(&[id.into(), num(now)])?
        .run()
        .await?;
    Ok(r.meta()?.and_then(|m| m.changes).unwrap_or(0) > 0)
}

/// A job whose `expires_at` passed before it ran.
pub async fn expire(db: &D1Database, id: &str, now: i64) -> worker::Result<()> {
    db.prepare(format!(
        "UPDATE jobs SET status = 'expired', error = 'expired before it ran', completed_at = ?2, \
         updated_at = ?2 WHERE id = ?1 AND {} AND status != 'submitted'",
        not_terminal()
    ))
    .bind(&[id.into(), num(now)])?
    .run()
    .await?;
    Ok(())
}

/// Rows stuck in `queued` or `running` (not updated since `before`): their message was lost, or
/// their Worker died mid-call (a live call never outlasts the window: `Timing` checks that).
/// They go back to `queued`, touched so the next run does not pick them again at once, and
/// `(id, lane)` is returned for re-sending.
pub async fn take_stuck(
    db: &D1Database,
    before: i64,
    now: i64,
    limit: u32,
) -> worker::Result<Vec<(String, Lane)>> {
    #[derive(Deserialize)]
    struct Row {
        id: String,
        lane: String,
    }
    let rows: Vec<Row> = db
        .prepare(
            "UPDATE jobs SET status = 'queued', updated_at = ?2 WHERE id IN (SELECT id FROM jobs \
             WHERE status IN ('queued', 'running') AND updated_at < ?1 AND accumulated_at IS NULL \
             LIMIT ?3) RETURNING id, lane",
        )
        .bind(&[num(before), num(now), num(limit as i64)])?
        .all()
        .await?
        .results()?;
    Ok(rows
        .into_iter()
        .map(|r| {
            (
                r.id,
                if r.lane == "bulk" {
                    Lane::Bulk
                } else {
                    Lane::High
                },
            )
        })
        .collect())
}

/// Expires every queued job whose `expires_at` has passed; returns how many.
pub async fn expire_stale(db: &D1Database, now: i64) -> worker::Result<usize> {
    let r = db
        .prepare(
            "UPDATE jobs SET status = 'expired', error = 'expired before it ran', \
             completed_at = ?1, updated_at = ?1 \
             WHERE status = 'queued' AND expires_at IS NOT NULL AND expires_at < ?1",
        )
        .bind(&[num(now)])?
        .run()
        .await?;
    Ok(r.meta()?.and_then(|m| m.changes).unwrap_or(0))
}

/// Filters of `GET /jobs`.
#[derive(Debug, Default)]
pub struct JobFilter {
    pub status: Option<Status>,
    pub priority: Option<Lane>,
    pub kind: Option<Kind>,
}

/// The user's jobs (every kind unless filtered), newest first, after `cursor`; one more than
/// `limit` is read so the caller knows whether there is a next page.
pub async fn list_jobs(
    db: &D1Database,
    user: &str,
    filter: &JobFilter,
    cursor: Option<&Cursor>,
    limit: u32,
) -> worker::Result<Vec<JobRow>> {
    let (at, id) = match cursor {
        Some(c) => (c.created_at, c.id.as_str()),
        None => (1 << 52, ""),
    };
    db.prepare(pipeline::ops::sql::jobs_list(COLUMNS))
        .bind(&[
            user.into(),
            opt(filter.status.map(Status::as_str)),
            opt(filter.priority.map(Lane::as_str)),
            opt(filter.kind.map(Kind::as_str)),
            num(at),
            id.into(),
            num(limit as i64 + 1),
        ])?
        .all()
        .await?
        .results()
}

/// One of the user's jobs (of this kind, if given); someone else's is `None`, as if it did not
/// exist.
pub async fn get_for_user(
    db: &D1Database,
    id: &str,
    user: &str,
    kind: Option<Kind>,
) -> worker::Result<Option<JobRow>> {
    db.prepare(format!(
        "SELECT {COLUMNS} FROM jobs WHERE id = ?1 AND user_id = ?2 AND (?3 IS NULL OR kind = ?3)"
    ))
    .bind(&[id.into(), user.into(), opt(kind.map(Kind::as_str))])?
    .first(None)
    .await
}

/// The rows of these ids (missing ids are simply absent).
pub async fn load_many(db: &D1Database, ids: &[String]) -> worker::Result<Vec<JobRow>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let marks: Vec<String> = (1..=ids.len()).map(|i| format!("?{i}")).collect();
    let args: Vec<JsValue> = ids.iter().map(|i| JsValue::from_str(i)).collect();
    db.prepare(format!(
        "SELECT {COLUMNS} FROM jobs WHERE id IN ({})",
        marks.join(",")
    ))
    .bind(&args)?
    .all()
    .await?
    .results()
}

/// Claims a job for a synchronous call: `running`, one more attempt. Only a `queued` job can
/// be claimed, so a second delivery of a job that is already running never calls Claude again
/// (a job whose Worker died mid-call is put back to `queued` by the reconciler first).
pub async fn claim_running(db: &D1Database, id: &str, now: i64) -> worker::Result<bool> {
    let r = db
        .prepare(
            "UPDATE jobs SET status = 'running', attempts = attempts + 1, \
             started_at = COALESCE(started_at, ?2), updated_at = ?2 \
             WHERE id = ?1 AND status = 'queued'",
        )
        .bind(&[id.into(), num(now)])?
        .run()
        .await?;
    Ok(r.meta()?.and_then(|m| m.changes).unwrap_or(0) > 0)
}

/// The statement that completes a job with its answer (guarded; `batch` also requires the row
/// to still be in that Anthropic batch).
#[allow(clippy::too_many_arguments)]
pub fn complete_stmt(
    db: &D1Database,
    id: &str,
    usage: &Usage,
    cost_micros: Option<u64>,
    raw_text: &str,
    analysis: Option<String>,
    now: i64,
    batch: Option<&str>,
    answered_by: Option<&str>,
) -> worker::Result<D1PreparedStatement> {
    db.prepare(format!(
        "UPDATE jobs SET status = 'completed', input_tokens = ?2, output_tokens = ?3, \
         cache_write_tokens = ?4, cache_read_tokens = ?5, cost_micros = ?6, raw_text = ?7, \
         analysis = ?8, result_key = 'results/' || id, error = NULL, completed_at = ?9, \
         updated_at = ?9, model = COALESCE(?11, model), cost_unknown = ?12 \
         WHERE id = ?1 AND {} {}",
        not_terminal(),
        batch_guard(batch)
    ))
    .bind(&[
        id.into(),
        num(usage.input_tokens as i64),
        num(usage.output_tokens as i64),
        num(usage.cache_creation_input_tokens as i64),
        num(usage.cache_read_input_tokens as i64),
        num(cost_micros.unwrap_or(0) as i64),
        opt(Some(raw_text).filter(|t| !t.is_empty())),
        opt(analysis.as_deref()),
        num(now),
        opt(batch),
        opt(answered_by),
        JsValue::from_bool(cost_micros.is_none()),
    ])
}

/// The statement that fails a job permanently, keeping what was paid and the raw answer.
#[allow(clippy::too_many_arguments)]
pub fn fail_stmt(
    db: &D1Database,
    id: &str,
    reason: &str,
    usage: Option<(&Usage, Option<u64>)>,
    raw_text: Option<&str>,
    now: i64,
    batch: Option<&str>,
) -> worker::Result<D1PreparedStatement> {
    let (i, o, cw, cr, cost, unknown) = match usage {
        Some((u, c)) => (
            u.input_tokens as i64,
            u.output_tokens as i64,
            u.cache_creation_input_tokens as i64,
            u.cache_read_input_tokens as i64,
            c.unwrap_or(0) as i64,
            c.is_none(),
        ),
        None => (0, 0, 0, 0, 0, false),
    };
    db.prepare(format!(
        "UPDATE jobs SET status = 'failed', error = ?2, raw_text = COALESCE(?3, raw_text), \
         input_tokens = input_tokens + ?4, output_tokens = output_tokens + ?5, \
         cache_write_tokens = cache_write_tokens + ?6, cache_read_tokens = cache_read_tokens + ?7, \
         cost_micros = cost_micros + ?8, completed_at = ?9, updated_at = ?9, \
         cost_unknown = MAX(cost_unknown, ?11), \
         result_key = CASE WHEN ?12 THEN 'results/' || id ELSE result_key END \
         WHERE id = ?1 AND {} {}",
        not_terminal(),
        batch_guard(batch)
    ))
    .bind(&[
        id.into(),
        reason.into(),
        opt(raw_text),
        num(i),
        num(o),
        num(cw),
        num(cr),
        num(cost),
        num(now),
        opt(batch),
        JsValue::from_bool(unknown),
        // A paid answer is always stored in R2 before its row is failed: point at it.
        JsValue::from_bool(usage.is_some()),
    ])
}

fn batch_guard(batch: Option<&str>) -> &'static str {
    match batch {
        Some(_) => "AND status = 'submitted' AND anthropic_batch_id = ?10",
        None => "AND (?10 IS NULL)",
    }
}

/// A failure worth a retry: back to `queued` with the reason until the retry runs; an overload
/// answer lengthens the job's overload streak, anything else ends it.
pub async fn requeue(
    db: &D1Database,
    id: &str,
    reason: &str,
    overload: bool,
    now: i64,
) -> worker::Result<()> {
    db.prepare(format!(
        "UPDATE jobs SET status = 'queued', error = ?2, updated_at = ?3, \
         overloads = CASE WHEN ?4 THEN overloads + 1 ELSE 0 END WHERE id = ?1 AND {}",
        not_terminal()
    ))
    .bind(&[
        id.into(),
        reason.into(),
        num(now),
        JsValue::from_bool(overload),
    ])?
    .run()
    .await?;
    Ok(())
}

/// Retries exhausted: the row says so (its last error stays).
pub async fn dead_letter(db: &D1Database, id: &str, now: i64) -> worker::Result<()> {
    db.prepare(format!(
        "UPDATE jobs SET status = 'dead_lettered', \
         error = CASE WHEN error LIKE 'attempt % failed, retrying in % s: %' \
           THEN 'retries exhausted after ' || attempts || ' attempts; the last: ' \
                || substr(error, instr(error, ' s: ') + 4) \
           ELSE COALESCE(error, 'retries exhausted') END, \
         completed_at = ?2, updated_at = ?2 \
         WHERE id = ?1 AND {}",
        not_terminal()
    ))
    .bind(&[id.into(), num(now)])?
    .run()
    .await?;
    Ok(())
}

/// A transient error (or expiry) in a batch's results: the job goes back to the accumulation for a
/// later batch, its try counted.
pub fn resubmit_stmt(
    db: &D1Database,
    id: &str,
    batch_id: &str,
    reason: &str,
    now: i64,
) -> worker::Result<D1PreparedStatement> {
    db.prepare(
        "UPDATE jobs SET status = 'queued', anthropic_batch_id = NULL, flush_id = NULL, \
         accumulated_at = ?4, batch_tries = batch_tries + 1, error = ?3, updated_at = ?4 \
         WHERE id = ?1 AND status = 'submitted' AND anthropic_batch_id = ?2",
    )
    .bind(&[id.into(), batch_id.into(), reason.into(), num(now)])
}

/// A terminal end other than completed/failed for a job of a batch (`dead_lettered` after too
/// many resubmissions, `canceled` with its batch).
pub fn batch_end_stmt(
    db: &D1Database,
    id: &str,
    batch_id: &str,
    status: &str,
    reason: &str,
    now: i64,
) -> worker::Result<D1PreparedStatement> {
    db.prepare(
        "UPDATE jobs SET status = ?3, error = ?4, completed_at = ?5, updated_at = ?5 \
         WHERE id = ?1 AND status = 'submitted' AND anthropic_batch_id = ?2",
    )
    .bind(&[
        id.into(),
        batch_id.into(),
        status.into(),
        reason.into(),
        num(now),
    ])
}

/// How many jobs of an Anthropic batch still wait for its results.
pub async fn live_in_batch(db: &D1Database, batch_id: &str) -> worker::Result<u32> {
    #[derive(Deserialize)]
    struct Row {
        n: i64,
    }
    let row: Option<Row> = db
        .prepare(
            "SELECT COUNT(*) AS n FROM jobs WHERE anthropic_batch_id = ?1 AND status = 'submitted'",
        )
        .bind(&[batch_id.into()])?
        .first(None)
        .await?;
    Ok(row.map(|r| r.n.max(0) as u32).unwrap_or(0))
}

/// The Anthropic batches that still have submitted jobs.
pub async fn open_batches(db: &D1Database) -> worker::Result<Vec<String>> {
    #[derive(Deserialize)]
    struct Row {
        anthropic_batch_id: String,
    }
    let rows: Vec<Row> = db
        .prepare(
            "SELECT DISTINCT anthropic_batch_id FROM jobs \
             WHERE status = 'submitted' AND anthropic_batch_id IS NOT NULL",
        )
        .all()
        .await?
        .results()?;
    Ok(rows.into_iter().map(|r| r.anthropic_batch_id).collect())
}

/// The submitted jobs of one Anthropic batch.
pub async fn in_batch(db: &D1Database, batch_id: &str) -> worker::Result<Vec<JobRow>> {
    db.prepare(format!(
        "SELECT {COLUMNS} FROM jobs WHERE anthropic_batch_id = ?1 AND status = 'submitted'"
    ))
    .bind(&[batch_id.into()])?
    .all()
    .await?
    .results()
}

/// Records one call made for a job (replacing a record of the same attempt number, which only a
/// redelivery after a crash can produce).
pub struct Attempt<'a> {
    pub job_id: &'a str,
    pub n: u32,
    pub model: Option<&'a str>,
    pub started_at: i64,
    pub ended_at: i64,
    pub outcome: &'a str,
    pub error: Option<&'a str>,
}

pub async fn record_attempt(db: &D1Database, a: &Attempt<'_>) -> worker::Result<()> {
    db.prepare(
        "INSERT OR REPLACE INTO job_attempts (job_id, n, model, started_at, ended_at, outcome, error) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )
    .bind(&[
        a.job_id.into(),
        num(a.n as i64),
        opt(a.model),
        num(a.started_at),
        num(a.ended_at),
        a.outcome.into(),
        opt(a.error),
    ])?
    .run()
    .await?;
    Ok(())
}

/// A job's calls, oldest first.
pub async fn attempts(db: &D1Database, job_id: &str) -> worker::Result<Vec<AttemptView>> {
    #[derive(Deserialize)]
    struct Row {
        n: i64,
        model: Option<String>,
        started_at: i64,
        ended_at: i64,
        outcome: String,
        error: Option<String>,
    }
    let rows: Vec<Row> = db
        .prepare(
            "SELECT n, model, started_at, ended_at, outcome, error FROM job_attempts \
             WHERE job_id = ?1 ORDER BY n",
        )
        .bind(&[job_id.into()])?
        .all()
        .await?
        .results()?;
    Ok(rows
        .into_iter()
        .map(|r| AttemptView {
            n: r.n.max(0) as u32,
            model: r.model,
            started_at: r.started_at,
            ended_at: r.ended_at,
            outcome: r.outcome,
            error: r.error,
        })
        .collect())
}

/// Cuts a list read with one row more than `limit` back to `limit` rows, and answers the cursor
/// of the next page (`cursor_of` its last row) when there is one.
pub fn next_page<T>(
    rows: &mut Vec<T>,
    limit: u32,
    cursor_of: impl Fn(&T) -> Cursor,
) -> Option<String> {
    if rows.len() <= limit as usize {
        return None;
    }
    rows.truncate(limit as usize);
    rows.last().map(|r| cursor_of(r).encode())
}

/// The list cursor of a job row.
pub fn job_cursor(r: &JobRow) -> Cursor {
    Cursor {
        created_at: r.created_at,
        id: r.id.clone(),
    }
}
