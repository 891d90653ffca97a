//! Uploads (`batches` rows) and their files (`pdf` jobs) in D1.

use std::collections::BTreeMap;

use pipeline::dto::{BatchSummary, BatchView};
use pipeline::jobs::Cursor;
use pipeline::pdf::Template;
use pipeline::status::Mode;
use serde::Deserialize;
use worker::{D1Database, D1PreparedStatement};

use crate::jobs::{num, JobRow, COLUMNS};

/// An upload as stored.
#[derive(Debug, Clone, Deserialize)]
pub struct BatchRow {
    pub id: String,
    pub mode: String,
    pub template: String,
    pub total: i64,
    pub created_at: i64,
    pub canceled_at: Option<i64>,
}

impl BatchRow {
    fn mode(&self) -> Mode {
        if self.mode == "sync" {
            Mode::Sync
        } else {
            Mode::Batch
        }
    }

    fn template(&self) -> Template {
        Template::parse(Some(&self.template)).unwrap_or(Template::Summary)
    }
}

/// One file of a new upload.
pub struct NewFile {
    pub job_id: String,
    pub index: u32,
    pub name: String,
    pub size: u64,
    pub key: String,
}

/// The upload row and one job row per file, as statements for one `db.batch()`.
#[allow(clippy::too_many_arguments)]
pub fn insert_stmts(
    db: &D1Database,
    id: &str,
    user: &str,
    mode: Mode,
    template: Template,
    model: &str,
    files: &[NewFile],
    now: i64,
) -> worker::Result<Vec<D1PreparedStatement>> {
    let total_bytes: u64 = files.iter().map(|f| f.size).sum();
    let mut out = Vec::with_capacity(files.len() + 1);
    out.push(
        db.prepare(
            "INSERT INTO batches (id, user_id, mode, template, total, total_bytes, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .bind(&[
            id.into(),
            user.into(),
            mode.as_str().into(),
            template.as_str().into(),
            num(files.len() as i64),
            num(total_bytes as i64),
            num(now),
        ])?,
    );
    for f in files {
        out.push(
            db.prepare(
                "INSERT INTO jobs (id, user_id, kind, status, lane, mode, model, prompt_key, \
                 batch_id, batch_index, file_name, file_size, template, created_at, updated_at) \
                 VALUES (?1, ?2, 'pdf', 'queued', 'bulk', ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11)",
            )
            .bind(&[
                f.job_id.as_str().into(),
                user.into(),
                mode.as_str().into(),
                model.into(),
                f.key.as_str().into(),
                id.into(),
                num(f.index as i64),
                f.name.as_str().into(),
                num(f.size as i64),
                template.as_str().into(),
                num(now),
            ])?,
        );
    }
    Ok(out)
}

/// The caller's upload; someone else's (or none) is `None`.
pub async fn get(db: &D1Database, id: &str, user: &str) -> worker::Result<Option<BatchRow>> {
    db.prepare(
        "SELECT id, mode, template, total, created_at, canceled_at FROM batches \
         WHERE id = ?1 AND user_id = ?2",
    )
    .bind(&[id.into(), user.into()])?
    .first(None)
    .await
}

/// The files of an upload, in upload order.
pub async fn files(db: &D1Database, id: &str) -> worker::Result<Vec<JobRow>> {
    db.prepare(format!(
        "SELECT {COLUMNS} FROM jobs WHERE batch_id = ?1 ORDER BY batch_index"
    ))
    .bind(&[id.into()])?
    .all()
    .await?
    .results()
}

/// The upload with its totals and files.
pub fn view(b: &BatchRow, rows: &[JobRow], now: i64) -> BatchView {
    let files: Vec<_> = rows.iter().map(JobRow::batch_file).collect();
    let mut counts = BTreeMap::new();
    for f in &files {
        *counts.entry(f.status.as_str().to_string()).or_insert(0u32) += 1;
    }
    let done = files.iter().filter(|f| f.status.is_terminal()).count() as u32;
    let all_done = done as usize == files.len() && !files.is_empty();
    let completed_at = all_done
        .then(|| files.iter().filter_map(|f| f.completed_at).max())
        .flatten();
    let sum = |f: fn(&pipeline::dto::BatchFile) -> u64| files.iter().map(f).sum::<u64>();
    BatchView {
        id: b.id.clone(),
        mode: b.mode(),
        template: b.template(),
        total: b.total.max(0) as u32,
        done,
        counts,
        input_tokens: sum(|f| f.input_tokens),
        output_tokens: sum(|f| f.output_tokens),
        cache_write_tokens: sum(|f| f.cache_write_tokens),
        cache_read_tokens: sum(|f| f.cache_read_tokens),
        cost_micros: sum(|f| f.cost_micros),
        created_at: b.created_at,
        completed_at,
        elapsed_ms: completed_at.unwrap_or(now).max(b.created_at) - b.created_at,
        canceled_at: b.canceled_at,
        files,
    }
}

/// The caller's uploads, newest first, with their progress (one aggregate per upload, served
/// by the batch index).
pub async fn list(
    db: &D1Database,
    user: &str,
    cursor: Option<&Cursor>,
    limit: u32,
) -> worker::Result<Vec<(BatchSummary, Cursor)>> {
    #[derive(Deserialize)]
    struct Row {
        id: String,
        mode: String,
        template: String,
        total: i64,
        created_at: i64,
        canceled_at: Option<i64>,
        done: i64,
        completed: i64,
        cost: i64,
    }
    let (at, id) = match cursor {
        Some(c) => (c.created_at, c.id.as_str()),
        None => (1 << 52, ""),
    };
    let rows: Vec<Row> = db
        .prepare(pipeline::ops::sql::uploads_list())
        .bind(&[user.into(), num(at), id.into(), num(limit as i64 + 1)])?
        .all()
        .await?
        .results()?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let b = BatchRow {
                id: r.id.clone(),
                mode: r.mode,
                template: r.template,
                total: r.total,
                created_at: r.created_at,
                canceled_at: r.canceled_at,
            };
            (
                BatchSummary {
                    id: r.id.clone(),
                    mode: b.mode(),
                    template: b.template(),
                    total: r.total.max(0) as u32,
                    done: r.done.max(0) as u32,
                    completed: r.completed.max(0) as u32,
                    cost_micros: r.cost.max(0) as u64,
                    created_at: r.created_at,
                    canceled_at: r.canceled_at,
                },
                Cursor {
                    created_at: r.created_at,
                    id: r.id,
                },
            )
        })
        .collect())
}

/// Cancels what has not run: queued and batched files. Answers the Anthropic batches of the
/// files it canceled, for the caller to cancel those left without live jobs.
pub async fn cancel(db: &D1Database, id: &str, now: i64) -> worker::Result<Vec<String>> {
    #[derive(Deserialize)]
    struct Row {
        anthropic_batch_id: Option<String>,
    }
    let rows: Vec<Row> = db
        .prepare(
            "UPDATE jobs SET status = 'canceled', error = 'canceled with its upload', \
             completed_at = ?2, updated_at = ?2 \
             WHERE batch_id = ?1 AND status IN ('queued', 'submitted') RETURNING anthropic_batch_id",
        )
        .bind(&[id.into(), num(now)])?
        .all()
        .await?
        .results()?;
    db.prepare("UPDATE batches SET canceled_at = COALESCE(canceled_at, ?2) WHERE id = ?1")
        .bind(&[id.into(), num(now)])?
        .run()
        .await?;
    let mut batches: Vec<String> = rows
        .into_iter()
        .filter_map(|r| r.anthropic_batch_id)
        .collect();
    batches.sort();
    batches.dedup();
    Ok(batches)
}
