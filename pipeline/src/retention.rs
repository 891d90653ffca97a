//! What is kept and for how long: the retention policy the cron applies in bounded slices.
//!
//! Only what has ended is ever deleted: a job is removed when it is terminal and ended (or was
//! last touched) before its horizon; its R2 objects (prompt, result, uploaded PDF) and attempt
//! log go with it or earlier. The usage rollup (`usage_days`) is never deleted: what was billed
//! stays billed after the jobs are gone.

use crate::clock::DAY_MS;

pub const HOUR_MS: i64 = 3_600_000;

/// `GET /api/retention`: the policy in force and the last cron run.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RetentionView {
    #[serde(flatten)]
    pub policy: Retention,
    pub last_run_at: Option<i64>,
    /// What it removed, as its heartbeat recorded it.
    pub last_run: Option<String>,
}

/// How long each kind of data is kept, and how much one cron run deletes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Retention {
    /// Finished jobs (`RETAIN_JOBS_DAYS`, default 90), with their audit entries.
    pub jobs_days: i64,
    /// R2 objects of finished jobs — prompts, results, uploaded PDFs (`RETAIN_BLOBS_DAYS`,
    /// default 90, never longer than the jobs).
    pub blobs_days: i64,
    /// Attempt logs (`RETAIN_ATTEMPTS_DAYS`, default 30, never longer than the jobs).
    pub attempts_days: i64,
    /// Idempotency records: 24 hours, the window a client may retry a request in and get the
    /// same job (`prompt::IDEMPOTENCY_TTL_MS`); after it a record no longer holds its key.
    pub idempotency_hours: i64,
    /// Metrics rows (`RETAIN_METRICS_DAYS`, default 7).
    pub metrics_days: i64,
    /// At most this many rows of each kind per cron run (`RETENTION_SLICE`, default 500), so a
    /// run stays well inside D1's limits whatever the backlog.
    pub slice: u32,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            jobs_days: 90,
            blobs_days: 90,
            attempts_days: 30,
            idempotency_hours: crate::prompt::IDEMPOTENCY_TTL_MS / HOUR_MS,
            metrics_days: 7,
            slice: 500,
        }
    }
}

/// The cut-offs of one run at `now` (ms): data older than each is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Horizons {
    pub jobs_before: i64,
    pub blobs_before: i64,
    pub attempts_before: i64,
    pub idempotency_before: i64,
    pub metrics_before: i64,
}

impl Retention {
    /// Clamps what depends on the jobs to the jobs' own horizon (a job row never outlives
    /// nothing it points at the wrong way: its blobs and attempts go first or with it), and
    /// every figure to at least 1.
    pub fn normalized(self) -> Retention {
        let jobs_days = self.jobs_days.max(1);
        Retention {
            jobs_days,
            blobs_days: self.blobs_days.clamp(1, jobs_days),
            attempts_days: self.attempts_days.clamp(1, jobs_days),
            idempotency_hours: self
                .idempotency_hours
                .max(crate::prompt::IDEMPOTENCY_TTL_MS / HOUR_MS),
            metrics_days: self.metrics_days.max(1),
            slice: self.slice.clamp(1, 5_000),
        }
    }

    pub fn horizons(&self, now: i64) -> Horizons {
        let r = self.normalized();
        Horizons {
            jobs_before: now - r.jobs_days * DAY_MS,
            blobs_before: now - r.blobs_days * DAY_MS,
            attempts_before: now - r.attempts_days * DAY_MS,
            idempotency_before: now - r.idempotency_hours * HOUR_MS,
            metrics_before: now - r.metrics_days * DAY_MS,
        }
    }

    /// The first UTC day (days since the epoch) none of whose jobs retention may have deleted:
    /// a job created that day ended after it, so after the jobs' horizon.
    pub fn oldest_whole_day(&self, now: i64) -> i64 {
        self.horizons(now).jobs_before.div_euclid(DAY_MS) + 1
    }
}

/// What one retention run removed, by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Removed {
    pub jobs: u64,
    pub blobs: u64,
    pub attempts: u64,
    pub idempotency: u64,
    pub metrics: u64,
    pub audit: u64,
    /// Uploads (the `batches` rows) none of whose files is left.
    pub uploads: u64,
    /// PDFs deleted from the provider's Files API with their jobs' objects.
    #[serde(default)]
    pub files: u64,
    /// Whether some kind filled its slice (more is due: the next run goes on).
    pub more: bool,
}

impl Removed {
    pub fn total(&self) -> u64 {
        self.jobs
            + self.blobs
            + self.attempts
            + self.idempotency
            + self.metrics
            + self.audit
            + self.uploads
            + self.files
    }

    /// One line for the heartbeat.
    pub fn summary(&self) -> String {
        format!(
            "removed {} jobs, {} objects, {} attempt logs, {} idempotency records, {} metrics \
             rows, {} audit entries, {} uploads, {} provider files{}",
            self.jobs,
            self.blobs,
            self.attempts,
            self.idempotency,
            self.metrics,
            self.audit,
            self.uploads,
            self.files,
            if self.more { "; more due" } else { "" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependent_data_never_outlives_its_jobs_and_nothing_is_kept_for_zero_days() {
        let r = Retention {
            jobs_days: 10,
            blobs_days: 30,
            attempts_days: 0,
            idempotency_hours: 0,
            metrics_days: -3,
            slice: 0,
        }
        .normalized();
        assert_eq!((r.jobs_days, r.blobs_days, r.attempts_days), (10, 10, 1));
        assert_eq!((r.idempotency_hours, r.metrics_days, r.slice), (24, 1, 1));
    }

    #[test]
    fn horizons_count_back_from_now_and_the_oldest_whole_day_follows_the_jobs() {
        let now = 100 * DAY_MS + 7 * HOUR_MS;
        let h = Retention::default().horizons(now);
        assert_eq!(h.jobs_before, 10 * DAY_MS + 7 * HOUR_MS);
        assert_eq!(h.attempts_before, 70 * DAY_MS + 7 * HOUR_MS);
        assert_eq!(h.idempotency_before, 99 * DAY_MS + 7 * HOUR_MS);
        assert_eq!(h.metrics_before, 93 * DAY_MS + 7 * HOUR_MS);
        assert_eq!(Retention::default().oldest_whole_day(now), 11);
    }

    #[test]
    fn the_summary_says_what_went_and_whether_more_is_due() {
        let r = Removed {
            jobs: 3,
            blobs: 5,
            more: true,
            ..Removed::default()
        };
        assert_eq!(r.total(), 8);
        assert!(r.summary().starts_with("removed 3 jobs, 5 objects"));
        assert!(r.summary().ends_with("more due"));
    }
}
