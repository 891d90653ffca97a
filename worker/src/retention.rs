//! Retention on the cron (`pipeline::retention` decides what is due): each run removes at most
//! a slice of each kind — finished jobs with their R2 objects, audit entries and attempt logs;
//! objects of jobs kept longer than their objects; old attempt logs; expired idempotency
//! records; old metrics rows; uploads none of whose jobs is left — and records what it removed
//! in the `retention` heartbeat (`GET /api/retention`).

use pipeline::retention::Removed;

use crate::config::now_ms;
use crate::services::AppState;
use crate::store::retention::{DueJob, WalkCursor};

/// The heartbeat that keeps where the walk over objects stands.
const BLOBS_CURSOR: &str = "retention_blobs";
/// The heartbeat whose detail is the last run's report.
pub const BEAT: &str = "retention";

pub async fn run(state: &AppState) -> worker::Result<Removed> {
    let now = now_ms();
    let policy = state.config.retention;
    let h = policy.horizons(now);
    let slice = policy.slice;
    let mut removed = Removed::default();

    let due = oldest(
        state
            .store
            .due_jobs(h.jobs_before, &WalkCursor::default(), slice)
            .await?,
        slice,
        &mut removed,
    );
    if !due.is_empty() {
        removed.blobs += delete_objects(state, &due).await?;
        let ids: Vec<String> = due.iter().map(|j| j.id.clone()).collect();
        let (jobs, audit, attempts) = state.store.delete_jobs(&ids, h.jobs_before).await?;
        removed.jobs += jobs;
        removed.audit += audit;
        removed.attempts += attempts;
    }

    if policy.blobs_days < policy.jobs_days {
        let from = state
            .store
            .last_beat(BLOBS_CURSOR)
            .await?
            .and_then(|b| b.detail)
            .map(|d| WalkCursor::decode(&d))
            .unwrap_or_default();
        // Jobs past their own horizon are the first walk's (their objects go with them).
        let from = if from.updated_at < h.jobs_before {
            WalkCursor {
                updated_at: h.jobs_before,
                id: String::new(),
            }
        } else {
            from
        };
        let due = oldest(
            state.store.due_jobs(h.blobs_before, &from, slice).await?,
            slice,
            &mut removed,
        );
        if let Some(last) = due.last() {
            removed.blobs += delete_objects(state, &due).await?;
            let cursor = WalkCursor {
                updated_at: last.updated_at as i64,
                id: last.id.clone(),
            };
            state
                .store
                .beat(BLOBS_CURSOR, now, &cursor.encode())
                .await?;
        }
    }

    if policy.attempts_days < policy.jobs_days {
        let n = state
            .store
            .delete_old_attempts(h.attempts_before, slice)
            .await?;
        removed.more |= n >= slice as u64;
        removed.attempts += n;
    }
    let n = state
        .store
        .delete_old_idempotency(h.idempotency_before, slice)
        .await?;
    removed.more |= n >= slice as u64;
    removed.idempotency += n;
    removed.metrics += state.store.delete_old_metrics(h.metrics_before).await?;
    removed.uploads += state
        .store
        .delete_empty_uploads(h.jobs_before, slice)
        .await?;

    if removed.total() > 0 {
        worker::console_log!("retention: {}", removed.summary());
    }
    state.store.beat(BEAT, now, &removed.summary()).await?;
    Ok(removed)
}

/// The oldest `slice` of what the per-status walks found, by `(updated_at, id)`; notes when
/// more is due.
fn oldest(mut due: Vec<DueJob>, slice: u32, removed: &mut Removed) -> Vec<DueJob> {
    due.sort_by(|a, b| {
        a.updated_at
            .total_cmp(&b.updated_at)
            .then_with(|| a.id.cmp(&b.id))
    });
    if due.len() >= slice as usize {
        removed.more = true;
    }
    due.truncate(slice as usize);
    due
}

/// Deletes the jobs' R2 objects (at most 1,000 keys per call, R2's limit for one
/// `deleteMultiple`). Answers how many of them the rows pointed at (the answer's key is
/// deleted even when the row never pointed at it: it may have been written before a crash).
async fn delete_objects(state: &AppState, due: &[DueJob]) -> worker::Result<u64> {
    let keys: Vec<String> = due.iter().flat_map(DueJob::object_keys).collect();
    for chunk in keys.chunks(1000) {
        state.blobs.delete_many(chunk.to_vec()).await?;
    }
    Ok(due.iter().map(DueJob::pointed_at).sum())
}
