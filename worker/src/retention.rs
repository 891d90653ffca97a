//! Retention on the cron (`pipeline::retention` decides what is due): each run removes at most
//! a slice of each kind — finished jobs with their R2 objects, audit entries and attempt logs;
//! objects of jobs kept longer than their objects; old attempt logs; expired idempotency
//! records; old metrics rows; uploads none of whose jobs is left; the jobs' PDFs in the
//! provider's Files API — and records what it removed
//! in the `retention` heartbeat (`GET /api/retention`).

use pipeline::retention::{Horizons, Removed};
use worker::D1Result;

use crate::config::now_ms;
use crate::services::AppState;
use crate::store::retention::{due_of, swept, DueJob, Sweep, WalkCursor};
use crate::store::{group, Statement};

/// The heartbeat that keeps where the walk over objects stands.
const BLOBS_CURSOR: &str = "retention_blobs";
/// The heartbeat whose detail is the last run's report.
pub const BEAT: &str = "retention";

/// One retention run on its own (`POST /api/retention/run`): its reads and small deletes in
/// one round trip, then what is due, then the report.
pub async fn run(state: &AppState) -> worker::Result<Removed> {
    let now = now_ms();
    let found = state.store.rounds(statements(state, now)?).await?;
    let removed = settle(state, now, &found).await?;
    state.store.run_one(report(state, now, &removed)?).await?;
    Ok(removed)
}

/// The statements a run starts with, to go in one round trip (alone or with the cron's
/// others): the walk over jobs past their horizon and the small deletes. Their results, in the
/// same order, are what [`settle`] reads.
pub fn statements(state: &AppState, now: i64) -> worker::Result<Vec<Vec<Statement>>> {
    let policy = state.config.retention;
    let h = policy.horizons(now);
    Ok(vec![
        state
            .store
            .due_jobs(h.jobs_before, &WalkCursor::default(), policy.slice)?,
        state.store.sweep(&Sweep {
            attempts_before: (policy.attempts_days < policy.jobs_days).then_some(h.attempts_before),
            idempotency_before: h.idempotency_before,
            metrics_before: h.metrics_before,
            uploads_before: h.jobs_before,
            // The Batches API ends every batch within 24 hours: two days is long past it.
            missing_before: now - 2 * pipeline::clock::DAY_MS,
            limit: policy.slice,
        })?,
    ])
}

/// The rest of a run, from the results of [`statements`] (`found`, one entry per group):
/// removes the due jobs with their objects, walks the objects kept for less time than their
/// jobs, and answers everything removed. Writes nothing when nothing is due.
pub async fn settle(
    state: &AppState,
    now: i64,
    found: &[Vec<D1Result>],
) -> worker::Result<Removed> {
    let policy = state.config.retention;
    let h = policy.horizons(now);
    let slice = policy.slice;
    let mut removed = Removed::default();
    let swept = swept(group(found, 1, "retention")?);
    removed.more |= swept.attempts >= slice as u64 || swept.idempotency >= slice as u64;
    removed.attempts += swept.attempts;
    removed.idempotency += swept.idempotency;
    removed.metrics += swept.metrics;
    removed.uploads += swept.uploads;

    let due = oldest(due_of(group(found, 0, "retention")?)?, slice, &mut removed);
    remove_jobs(state, due, h.jobs_before, &mut removed).await?;
    if policy.blobs_days < policy.jobs_days {
        walk_objects(state, now, &h, slice, &mut removed).await?;
    }
    if removed.total() > 0 {
        worker::console_log!("retention: {}", removed.summary());
    }
    Ok(removed)
}

/// Removes the due jobs (as many as this run's deletes allow) with their objects, audit entries
/// and attempts.
async fn remove_jobs(
    state: &AppState,
    due: Vec<DueJob>,
    jobs_before: i64,
    removed: &mut Removed,
) -> worker::Result<()> {
    let due = within_file_deletes(due, removed);
    if due.is_empty() {
        return Ok(());
    }
    removed.blobs += delete_objects(state, &due, removed).await?;
    let ids: Vec<String> = due.iter().map(|j| j.id.clone()).collect();
    let (jobs, audit, attempts) = state.store.delete_jobs(&ids, jobs_before).await?;
    removed.jobs += jobs;
    removed.audit += audit;
    removed.attempts += attempts;
    // The small deletes ran before these: uploads this run emptied go on the next.
    removed.more |= jobs > 0;
    Ok(())
}

/// Walks the jobs whose objects are kept for less time than the jobs themselves, from where
/// the last run stopped, and deletes a slice of their objects.
async fn walk_objects(
    state: &AppState,
    now: i64,
    h: &Horizons,
    slice: u32,
    removed: &mut Removed,
) -> worker::Result<()> {
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
    let walked = state
        .store
        .batch(state.store.due_jobs(h.blobs_before, &from, slice)?)
        .await?;
    let due = oldest(due_of(&walked)?, slice, removed);
    let due = within_file_deletes(due, removed);
    if let Some(last) = due.last() {
        removed.blobs += delete_objects(state, &due, removed).await?;
        let cursor = WalkCursor {
            updated_at: last.updated_at as i64,
            id: last.id.clone(),
        };
        state
            .store
            .beat(BLOBS_CURSOR, now, &cursor.encode())
            .await?;
    }
    Ok(())
}

/// The run's report, as the `retention` heartbeat keeps it (`GET /api/retention`).
pub fn report(state: &AppState, now: i64, removed: &Removed) -> worker::Result<Statement> {
    state.store.beat_statement(BEAT, now, &removed.summary())
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
/// `deleteMultiple`) and their PDFs in the provider's Files API. Answers how many objects the
/// rows pointed at (the answer's key is deleted even when the row never pointed at it: it may
/// have been written before a crash) and counts the provider's files in `removed`.
async fn delete_objects(
    state: &AppState,
    due: &[DueJob],
    removed: &mut Removed,
) -> worker::Result<u64> {
    let keys: Vec<String> = due.iter().flat_map(DueJob::object_keys).collect();
    state.blobs.delete_many(&keys).await?;
    let mut files: Vec<String> = due.iter().filter_map(|j| j.file_id.clone()).collect();
    files.sort_unstable();
    files.dedup();
    if !files.is_empty() {
        removed.files += crate::files::delete(state, &files).await;
        let jobs: Vec<String> = due
            .iter()
            .filter(|j| j.file_id.is_some())
            .map(|j| j.id.clone())
            .collect();
        state.store.forget_files(&jobs).await?;
    }
    Ok(due.iter().map(DueJob::pointed_at).sum())
}

/// The provider's files one run deletes at most: the Files API allows "approximately 500
/// requests per minute" for all file calls together (platform.claude.com/docs/en/
/// build-with-claude/files, "Rate limits"), and uploads need their share. Jobs past it wait
/// for the next run.
const FILE_DELETES_PER_RUN: usize = 100;

/// Keeps, of `due` (oldest first), every job until [`FILE_DELETES_PER_RUN`] of them have a
/// file at the provider; notes when more is due.
fn within_file_deletes(mut due: Vec<DueJob>, removed: &mut Removed) -> Vec<DueJob> {
    let mut with_files = 0;
    let cut = due.iter().position(|j| {
        with_files += j.file_id.is_some() as usize;
        with_files > FILE_DELETES_PER_RUN
    });
    if let Some(cut) = cut {
        due.truncate(cut);
        removed.more = true;
    }
    due
}
