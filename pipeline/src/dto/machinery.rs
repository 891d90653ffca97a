//! What one run of the batch machinery did (`POST /api/batches/poll` and `/flush`, and the cron):
//! flush due accumulations into Message Batches, resolve flushes of unknown outcome, settle the
//! batches that ended.

use serde::{Deserialize, Serialize};

/// `POST /api/batches/poll` and `POST /api/batches/flush`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BatchMachinery {
    pub flush: FlushReport,
    pub recovery: RecoveryReport,
    pub poll: PollReport,
}

/// What a run of the flush did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FlushReport {
    pub batches_created: u32,
    pub jobs_submitted: u32,
    pub jobs_failed: u32,
    /// Flushes left `claimed` because the create call's outcome is unknown.
    pub outcomes_unknown: u32,
    pub errors: Vec<String>,
    /// The invocation's share of the platform's limits was spent with jobs still due: the
    /// rest waits for the next run (`pipeline::envelope`).
    #[serde(default)]
    pub left_for_next_run: bool,
}

/// What a recovery run (of flushes whose create call's outcome was unknown) did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RecoveryReport {
    pub adopted: u32,
    pub released: u32,
    pub waiting: u32,
}

/// What one poll of the open Message Batches did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PollReport {
    pub batches_checked: u32,
    pub batches_ended: u32,
    pub jobs_completed: u32,
    pub jobs_failed: u32,
    /// Transient errors and expiries, back in the accumulation for a later batch.
    pub jobs_resubmitted: u32,
    pub jobs_dead_lettered: u32,
    pub jobs_canceled: u32,
    /// Jobs canceled inside a batch that ran their request anyway: its cost recorded on them.
    #[serde(default)]
    pub canceled_billed: u32,
    /// Batches given up as unknown to the API (404 for `BATCH_LOST_AFTER_S`); their jobs were
    /// released to a new batch.
    #[serde(default)]
    pub batches_lost: u32,
    /// Result lines read this run, over all batches (a run reads at most
    /// `BATCH_RESULTS_PER_RUN` in all, and the next one resumes after them).
    #[serde(default)]
    pub result_lines: u64,
    /// Batches whose results this run read in part: the next run goes on.
    #[serde(default)]
    pub batches_resumable: u32,
    /// The most bytes of results held at once while reading them (one partial line).
    #[serde(default)]
    pub peak_line_bytes: u64,
    /// The largest network chunk of results read at once.
    #[serde(default)]
    pub peak_chunk_bytes: u64,
    /// The Worker's wasm memory after the run (it only ever grows: its high-water mark).
    #[serde(default)]
    pub wasm_memory_bytes: u64,
    /// The invocation's share of the platform's limits (or the run's line budget) was spent
    /// with batches still to look at or read: they wait for the next run.
    #[serde(default)]
    pub left_for_next_run: bool,
    /// Dead letters this run could not announce to the webhook within its share (logged; the
    /// DLQ alert still counts them).
    #[serde(default)]
    pub dead_letters_unannounced: u32,
    pub errors: Vec<String>,
}
