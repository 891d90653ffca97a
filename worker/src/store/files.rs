//! The provider's file of a job's PDF (migration 0021): set once when the PDF is uploaded to
//! the Files API, read with the job's row, forgotten when retention deletes the file.

use serde::Deserialize;
use wasm_bindgen::JsValue;

use super::{with_ids, Statement, Store, IDS_PER_STATEMENT};

impl Store {
    /// Records the job's file if it has none yet; answers the file the job now has (another
    /// upload's, when one won the race; `None` when the job is gone).
    pub async fn set_file_id(&self, job: &str, file_id: &str) -> worker::Result<Option<String>> {
        #[derive(Deserialize)]
        struct Row {
            file_id: Option<String>,
        }
        let set = self
            .run(
                "UPDATE jobs SET file_id = ?2 WHERE id = ?1 AND file_id IS NULL",
                &[job.into(), file_id.into()],
            )
            .await?;
        if set == 1 {
            return Ok(Some(file_id.to_owned()));
        }
        let row: Option<Row> = self
            .first("SELECT file_id FROM jobs WHERE id = ?1", &[job.into()])
            .await?;
        Ok(row.and_then(|r| r.file_id))
    }

    /// [`Store::forget_files`] for one job, as a statement of a larger write.
    pub fn forget_file(&self, job: &str) -> worker::Result<Statement> {
        self.statement(
            "UPDATE jobs SET file_id = NULL WHERE id = ?1",
            &[job.into()],
        )
    }

    /// Forgets the files of these jobs (deleted from the provider, or found missing there).
    pub async fn forget_files(&self, jobs: &[String]) -> worker::Result<()> {
        for chunk in jobs.chunks(IDS_PER_STATEMENT) {
            let (marks, args) = with_ids(Vec::<JsValue>::new(), chunk);
            self.run(
                &format!("UPDATE jobs SET file_id = NULL WHERE id IN ({marks})"),
                &args,
            )
            .await?;
        }
        Ok(())
    }
}
