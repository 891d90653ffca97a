//! PDFs through the Files API (issue 20, part 4; `pipeline::anthropic::files`): each job's PDF
//! is uploaded once — when the upload is accepted, or by the first request that needs it — and
//! every request of the job then reads it by `file_id`; retention deletes it from the provider
//! with the job's objects. Where the Files API is off (`ANTHROPIC_FILES_API = "off"`) or the
//! base URL lacks it, requests carry the PDF as base64, as before.

use std::sync::atomic::{AtomicBool, Ordering};

use futures_util::stream::{self, StreamExt};
use pipeline::anthropic::files::{
    expires_in_s, provider_filename, upload_failed, upload_waves, UploadFailed,
    UPLOAD_BYTES_IN_FLIGHT,
};
use pipeline::outcome::{describe, CallOutcome};

use crate::services::AppState;

/// The base URL answered that it has no Files API: this isolate stops asking (a new isolate,
/// after a deploy or a config change, asks again).
static UNAVAILABLE: AtomicBool = AtomicBool::new(false);

/// Uploads at once when an upload is accepted: the plan's four connections of the six a Worker
/// may keep waiting for headers (developers.cloudflare.com/workers/platform/limits/,
/// "Simultaneous open connections"; `pipeline::envelope::Limits::planned_connections`).
const CONCURRENT_UPLOADS: usize = 4;

/// Whether requests should try the Files API.
pub fn enabled(state: &AppState) -> bool {
    state.config.files_api && !UNAVAILABLE.load(Ordering::Relaxed)
}

/// A PDF job's file at the provider, uploading it first when it has none: `None` means the
/// request carries the PDF as base64 this time (Files API off or missing, or the upload failed:
/// the next request tries again).
pub async fn file_for(
    state: &AppState,
    job: &str,
    key: &str,
    known: Option<&str>,
    name: Option<&str>,
) -> Option<String> {
    if let Some(id) = known {
        return Some(id.to_owned());
    }
    if !enabled(state) {
        return None;
    }
    match upload(state, job, key, name).await {
        Ok(id) => id,
        Err(e) => {
            worker::console_error!("job {job}: its PDF goes as base64 this time: {e}");
            None
        }
    }
}

/// Uploads the PDF at `key` for `job` and records it; answers the file the job then has.
async fn upload(
    state: &AppState,
    job: &str,
    key: &str,
    name: Option<&str>,
) -> Result<Option<String>, String> {
    let pdf = state
        .blobs
        .get_blob(key)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("{key} is missing from R2"))?;
    let expires = expires_in_s(state.config.retention.jobs_days.max(0) as u32);
    let filename = provider_filename(name.unwrap_or("document.pdf"));
    let uploaded = state
        .anthropic
        .upload_file(&filename, "application/pdf", &pdf, expires)
        .await;
    drop(pdf);
    let file = match uploaded {
        Ok(f) => f,
        Err(e) => {
            let status = match &e {
                CallOutcome::Http { status, .. } => Some(*status),
                _ => None,
            };
            if upload_failed(status) == UploadFailed::Unavailable {
                UNAVAILABLE.store(true, Ordering::Relaxed);
            }
            return Err(format!("the Files API upload failed: {}", describe(&e)));
        }
    };
    let kept = state
        .store
        .set_file_id(job, &file.id)
        .await
        .map_err(|e| e.to_string())?;
    if kept.as_deref() != Some(file.id.as_str()) {
        // Another upload of the same job won, or the job is gone: ours is not needed.
        delete(state, &[file.id]).await;
    }
    Ok(kept)
}

/// Uploads the PDFs of a just-accepted upload (`(job, R2 key, file name, size)`) in waves of
/// at most four files and `UPLOAD_BYTES_IN_FLIGHT` bytes (`pipeline::anthropic::files::
/// upload_waves`), before its jobs are queued; a PDF whose upload fails is uploaded by its first
/// request.
pub async fn upload_all(state: &AppState, files: &[(String, String, String, u64)]) {
    if !enabled(state) {
        return;
    }
    let sizes: Vec<u64> = files.iter().map(|f| f.3).collect();
    for wave in upload_waves(&sizes, CONCURRENT_UPLOADS, UPLOAD_BYTES_IN_FLIGHT) {
        stream::iter(&files[wave])
            .for_each_concurrent(CONCURRENT_UPLOADS, |(job, key, name, _)| async move {
                if let Err(e) = upload(state, job, key, Some(name)).await {
                    worker::console_error!("job {job}: its PDF is uploaded later: {e}");
                }
            })
            .await;
    }
}

/// Deletes files from the provider, a few at a time; answers how many are gone (a file the
/// provider no longer knows counts as gone). A failure is logged: the file's
/// `expires_in_seconds` removes it anyway.
pub async fn delete(state: &AppState, ids: &[String]) -> u64 {
    let gone = std::cell::Cell::new(0u64);
    stream::iter(ids)
        .for_each_concurrent(CONCURRENT_UPLOADS, |id| {
            let gone = &gone;
            async move {
                match state.anthropic.delete_file(id).await {
                    Ok(()) => gone.set(gone.get() + 1),
                    Err(e) => {
                        worker::console_error!("file {id}: not deleted ({})", describe(&e))
                    }
                }
            }
        })
        .await;
    gone.get()
}
