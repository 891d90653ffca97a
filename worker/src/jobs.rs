//! Job rows in D1. Every write that a retry can repeat is guarded: it only touches rows that are
//! not terminal (and, for batch results, still in that batch), so running it twice changes
//! nothing the second time.

use pipeline::anthropic::Usage;
use pipeline::dto::FeedbackView;
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
}

const COLUMNS: &str =
    "id, user_id, kind, status, lane, mode, model, source, input_text, raw_text, \
    analysis, anthropic_batch_id, attempts, input_tokens, output_tokens, cache_write_tokens, \
    cache_read_tokens, cost_micros, error, created_at, started_at, completed_at";

impl JobRow {
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
            error: self.error.clone(),
            created_at: self.created_at,
            started_at: self.started_at,
            completed_at: self.completed_at,
            elapsed_ms: elapsed_ms(status, self.created_at, self.completed_at, now),
        }
    }
}

fn num(v: i64) -> JsValue {
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

pub async fn insert_feedback(db: &D1Database, f: &NewFeedback<'_>) -> worker::Result<()> {
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
    ])?
    .run()
    .await?;
    Ok(())
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

/// One of the user's jobs of this kind (someone else's is `None`, as if it did not exist).
pub async fn get_for_user(
    db: &D1Database,
    id: &str,
    user: &str,
    kind: Kind,
) -> worker::Result<Option<JobRow>> {
    db.prepare(format!(
        "SELECT {COLUMNS} FROM jobs WHERE id = ?1 AND user_id = ?2 AND kind = ?3"
    ))
    .bind(&[id.into(), user.into(), kind.as_str().into()])?
    .first(None)
    .await
}

/// The user's jobs of this kind, newest first, after `cursor`; one more than `limit` is read so
/// the caller knows whether there is a next page.
pub async fn list_for_user(
    db: &D1Database,
    user: &str,
    kind: Kind,
    cursor: Option<&Cursor>,
    limit: u32,
) -> worker::Result<Vec<JobRow>> {
    let (at, id) = match cursor {
        Some(c) => (c.created_at, c.id.as_str()),
        None => (i64::MAX, ""),
    };
    db.prepare(format!(
        "SELECT {COLUMNS} FROM jobs WHERE user_id = ?1 AND kind = ?2 \
         AND (created_at < ?3 OR (created_at = ?3 AND id < ?4)) \
         ORDER BY created_at DESC, id DESC LIMIT ?5"
    ))
    .bind(&[
        user.into(),
        kind.as_str().into(),
        // i64::MAX is not exact as a JS number; any far-future instant works as "no cursor".
        num(at.min(1 << 52)),
        id.into(),
        num(limit as i64 + 1),
    ])?
    .all()
    .await?
    .results()
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

/// Claims a job for a synchronous call: `running`, one more attempt. False when the job is
/// terminal or already inside a Message Batch (then nobody may call for it again).
pub async fn claim_running(db: &D1Database, id: &str, now: i64) -> worker::Result<bool> {
    let r = db
        .prepare(format!(
            "UPDATE jobs SET status = 'running', attempts = attempts + 1, \
             started_at = COALESCE(started_at, ?2), updated_at = ?2 \
             WHERE id = ?1 AND {} AND status != 'submitted'",
            not_terminal()
        ))
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
    cost_micros: u64,
    raw_text: &str,
    analysis: &Analysis,
    now: i64,
    batch: Option<&str>,
) -> worker::Result<D1PreparedStatement> {
    let analysis =
        serde_json::to_string(analysis).map_err(|e| worker::Error::RustError(e.to_string()))?;
    db.prepare(format!(
        "UPDATE jobs SET status = 'completed', input_tokens = ?2, output_tokens = ?3, \
         cache_write_tokens = ?4, cache_read_tokens = ?5, cost_micros = ?6, raw_text = ?7, \
         analysis = ?8, result_key = 'results/' || id, error = NULL, completed_at = ?9, \
         updated_at = ?9 WHERE id = ?1 AND {} {}",
        not_terminal(),
        batch_guard(batch)
    ))
    .bind(&[
        id.into(),
        num(usage.input_tokens as i64),
        num(usage.output_tokens as i64),
        num(usage.cache_creation_input_tokens as i64),
        num(usage.cache_read_input_tokens as i64),
        num(cost_micros as i64),
        raw_text.into(),
        analysis.into(),
        num(now),
        opt(batch),
    ])
}

/// The statement that fails a job permanently, keeping what was paid and the raw answer.
#[allow(clippy::too_many_arguments)]
pub fn fail_stmt(
    db: &D1Database,
    id: &str,
    reason: &str,
    usage: Option<(&Usage, u64)>,
    raw_text: Option<&str>,
    now: i64,
    batch: Option<&str>,
) -> worker::Result<D1PreparedStatement> {
    let (i, o, cw, cr, cost) = match usage {
        Some((u, c)) => (
            u.input_tokens as i64,
            u.output_tokens as i64,
            u.cache_creation_input_tokens as i64,
            u.cache_read_input_tokens as i64,
            c as i64,
        ),
        None => (0, 0, 0, 0, 0),
    };
    db.prepare(format!(
        "UPDATE jobs SET status = 'failed', error = ?2, raw_text = COALESCE(?3, raw_text), \
         input_tokens = input_tokens + ?4, output_tokens = output_tokens + ?5, \
         cache_write_tokens = cache_write_tokens + ?6, cache_read_tokens = cache_read_tokens + ?7, \
         cost_micros = cost_micros + ?8, completed_at = ?9, updated_at = ?9 \
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
    ])
}

fn batch_guard(batch: Option<&str>) -> &'static str {
    match batch {
        Some(_) => "AND status = 'submitted' AND anthropic_batch_id = ?10",
        None => "AND (?10 IS NULL)",
    }
}

/// A transient failure: back to `queued` with the reason, until the retry runs.
pub async fn requeue(db: &D1Database, id: &str, reason: &str, now: i64) -> worker::Result<()> {
    db.prepare(format!(
        "UPDATE jobs SET status = 'queued', error = ?2, updated_at = ?3 WHERE id = ?1 AND {}",
        not_terminal()
    ))
    .bind(&[id.into(), reason.into(), num(now)])?
    .run()
    .await?;
    Ok(())
}

/// Retries exhausted: the row says so (its last error stays).
pub async fn dead_letter(db: &D1Database, id: &str, now: i64) -> worker::Result<()> {
    db.prepare(format!(
        "UPDATE jobs SET status = 'dead_lettered', \
         error = COALESCE(error, 'retries exhausted'), completed_at = ?2, updated_at = ?2 \
         WHERE id = ?1 AND {}",
        not_terminal()
    ))
    .bind(&[id.into(), num(now)])?
    .run()
    .await?;
    Ok(())
}

/// The statement that records a job as inside an Anthropic batch.
pub fn submitted_stmt(
    db: &D1Database,
    id: &str,
    batch_id: &str,
    now: i64,
) -> worker::Result<D1PreparedStatement> {
    db.prepare(
        "UPDATE jobs SET status = 'submitted', anthropic_batch_id = ?2, attempts = attempts + 1, \
         started_at = COALESCE(started_at, ?3), error = NULL, updated_at = ?3 \
         WHERE id = ?1 AND status = 'queued'",
    )
    .bind(&[id.into(), batch_id.into(), num(now)])
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
