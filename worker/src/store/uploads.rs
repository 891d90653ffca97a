//! PDF uploads (the `batches` table, named so by the public paths) and their files (`pdf` jobs).

use pipeline::dto::{UploadSummary, UploadView};
use pipeline::jobs::Cursor;
use pipeline::pdf::Template;
use pipeline::status::{Kind, Lane, Mode, Status, Transition};
use serde::Deserialize;
use wasm_bindgen::JsValue;

use super::row::COLUMNS;
use super::{micros, money, num, JobRow, Statement, Store};
use pipeline::money::UsdMicros;

/// An upload as stored.
#[derive(Debug, Clone, Deserialize)]
pub struct UploadRow {
    pub id: String,
    pub mode: Mode,
    pub template: String,
    pub total: i64,
    pub created_at: i64,
    pub canceled_at: Option<i64>,
}

impl UploadRow {
    fn template(&self) -> Template {
        Template::parse(Some(&self.template)).unwrap_or(Template::Summary)
    }

    /// The upload with its totals and files.
    pub fn view(&self, rows: &[JobRow], now: i64) -> UploadView {
        let files: Vec<_> = rows.iter().map(JobRow::upload_file).collect();
        let mut counts = std::collections::BTreeMap::new();
        for f in &files {
            *counts.entry(f.status.as_str().to_string()).or_insert(0u32) += 1;
        }
        let done = files.iter().filter(|f| f.status.is_terminal()).count() as u32;
        let all_done = done as usize == files.len() && !files.is_empty();
        let completed_at = all_done
            .then(|| files.iter().filter_map(|f| f.completed_at).max())
            .flatten();
        UploadView {
            id: self.id.clone(),
            mode: self.mode,
            template: self.template(),
            total: self.total.max(0) as u32,
            done,
            counts,
            spend: files.iter().map(|f| f.spend).sum(),
            created_at: self.created_at,
            completed_at,
            elapsed_ms: completed_at.unwrap_or(now).max(self.created_at) - self.created_at,
            canceled_at: self.canceled_at,
            files,
        }
    }
}

/// One file of a new upload.
pub struct NewFile {
    pub job_id: String,
    pub index: u32,
    pub name: String,
    pub size: u64,
    pub key: String,
    /// Its pages as far as its bytes show them (`pipeline::pdf::pages_at_most`), for its
    /// reservation.
    pub pages: u32,
    /// The file's worst case, reserved against the user's caps.
    pub reserved: UsdMicros,
}

/// A new upload: whose, how its files run, and the files.
pub struct NewUpload<'a> {
    pub id: &'a str,
    pub user_id: &'a str,
    pub mode: Mode,
    pub template: Template,
    pub model: &'a str,
    pub files: &'a [NewFile],
    /// When every job of the upload expires if it has not run (`expires_in_s`).
    pub expires_at: Option<i64>,
    /// Where each file's final view is posted when it ends.
    pub callback: Option<&'a pipeline::webhooks::Callback>,
    pub now: i64,
}

impl Store {
    /// The upload row and one `pdf` job per file, as statements for one `batch()`.
    pub fn insert_upload(&self, u: &NewUpload<'_>) -> worker::Result<Vec<Statement>> {
        let total_bytes: u64 = u.files.iter().map(|f| f.size).sum();
        let mut out = Vec::with_capacity(u.files.len() + 1);
        out.push(self.statement(
            "INSERT INTO batches (id, user_id, mode, template, total, total_bytes, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            &[
                u.id.into(),
                u.user_id.into(),
                u.mode.as_str().into(),
                u.template.as_str().into(),
                num(u.files.len() as i64),
                num(total_bytes as i64),
                num(u.now),
            ],
        )?);
        let sql = format!(
            "INSERT INTO jobs (id, user_id, kind, status, lane, mode, model, prompt_key, \
             batch_id, batch_index, file_name, file_size, template, created_at, updated_at, \
             reserved_micros, expires_at, callback_url, callback_key) \
             VALUES (?1, ?2, '{}', {}, '{}', ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11, ?12, ?13, \
             ?14, ?15)",
            Kind::Pdf.as_str(),
            Status::Queued.sql(),
            Lane::Bulk.as_str()
        );
        for f in u.files {
            out.push(self.statement(
                &sql,
                &[
                    f.job_id.as_str().into(),
                    u.user_id.into(),
                    u.mode.as_str().into(),
                    u.model.into(),
                    f.key.as_str().into(),
                    u.id.into(),
                    num(f.index as i64),
                    f.name.as_str().into(),
                    num(f.size as i64),
                    u.template.as_str().into(),
                    num(u.now),
                    money(f.reserved),
                    u.expires_at.map(num).unwrap_or(JsValue::NULL),
                    super::opt(u.callback.map(|c| c.url.as_str())),
                    super::opt(u.callback.and_then(|c| c.key_id.as_deref())),
                ],
            )?);
        }
        Ok(out)
    }

    /// The caller's upload; someone else's (or none) is `None`.
    pub async fn upload_for_user(&self, id: &str, user: &str) -> worker::Result<Option<UploadRow>> {
        self.first(
            "SELECT id, mode, template, total, created_at, canceled_at FROM batches \
             WHERE id = ?1 AND user_id = ?2",
            &[id.into(), user.into()],
        )
        .await
    }

    /// The files of an upload, in upload order.
    pub async fn upload_files(&self, id: &str) -> worker::Result<Vec<JobRow>> {
        self.all(
            &format!("SELECT {COLUMNS} FROM jobs WHERE batch_id = ?1 ORDER BY batch_index"),
            &[id.into()],
        )
        .await
    }

    /// The caller's uploads, newest first, with their progress (one aggregate per upload,
    /// served by the batch index).
    pub async fn list_uploads(
        &self,
        user: &str,
        cursor: Option<&Cursor>,
        limit: u32,
    ) -> worker::Result<Vec<UploadSummary>> {
        #[derive(Deserialize)]
        struct Row {
            id: String,
            mode: Mode,
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
        let rows: Vec<Row> = self
            .all(
                &super::sql::uploads_list(),
                &[user.into(), num(at), id.into(), num(limit as i64 + 1)],
            )
            .await?;
        Ok(rows
            .into_iter()
            .map(|r| UploadSummary {
                template: Template::parse(Some(&r.template)).unwrap_or(Template::Summary),
                id: r.id,
                mode: r.mode,
                total: r.total.max(0) as u32,
                done: r.done.max(0) as u32,
                completed: r.completed.max(0) as u32,
                cost_micros: micros(r.cost as f64),
                created_at: r.created_at,
                canceled_at: r.canceled_at,
            })
            .collect())
    }

    /// Cancels what has not run: queued and batched files. Answers the Anthropic batches of the
    /// files it canceled, for the caller to cancel those left without live jobs.
    pub async fn cancel_upload(&self, id: &str, now: i64) -> worker::Result<Vec<String>> {
        #[derive(Deserialize)]
        struct Row {
            anthropic_batch_id: Option<String>,
        }
        let t = Transition::Cancel;
        let sql = format!(
            "UPDATE jobs SET {}, error = 'canceled with its upload', completed_at = ?2, \
             updated_at = ?2 WHERE batch_id = ?1 AND {} RETURNING anthropic_batch_id",
            t.set(),
            t.guard()
        );
        let rows: Vec<Row> = self.all(&sql, &[id.into(), num(now)]).await?;
        self.run(
            "UPDATE batches SET canceled_at = COALESCE(canceled_at, ?2) WHERE id = ?1",
            &[id.into(), num(now)],
        )
        .await?;
        let mut batches: Vec<String> = rows
            .into_iter()
            .filter_map(|r| r.anthropic_batch_id)
            .collect();
        batches.sort();
        batches.dedup();
        Ok(batches)
    }
}
