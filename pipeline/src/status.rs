//! One status vocabulary for every job, and the transitions allowed between statuses.
//!
//! The same list is enforced by the CHECK constraint of `migrations/0001_init.sql`; a test reads
//! the migration and compares, so the two cannot drift apart.

use serde::{Deserialize, Serialize};

/// Where a job is in its life. Serialized in snake_case, exactly as stored in D1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Queued,
    EnqueueFailed,
    Running,
    Submitted,
    Completed,
    Failed,
    DeadLettered,
    Expired,
    Canceled,
}

impl Status {
    /// Every status, in the order of the contract.
    pub const ALL: [Status; 9] = [
        Status::Queued,
        Status::EnqueueFailed,
        Status::Running,
        Status::Submitted,
        Status::Completed,
        Status::Failed,
        Status::DeadLettered,
        Status::Expired,
        Status::Canceled,
    ];

    /// The spelling stored in D1 and sent over the API.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Queued => "queued",
            Status::EnqueueFailed => "enqueue_failed",
            Status::Running => "running",
            Status::Submitted => "submitted",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::DeadLettered => "dead_lettered",
            Status::Expired => "expired",
            Status::Canceled => "canceled",
        }
    }

    /// Parses the stored spelling; `None` for anything else.
    pub fn parse(s: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// A terminal job never changes again; guarded updates use this list in their `WHERE`.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            Status::EnqueueFailed
                | Status::Completed
                | Status::Failed
                | Status::DeadLettered
                | Status::Expired
                | Status::Canceled
        )
    }

    /// Whether a job may move from `self` to `next`. Retries re-enter `running`; a batch job goes
    /// `running → submitted → completed|failed|…`; the reconciler may put a stuck job back to
    /// `queued`. Terminal statuses only move when a dead letter is replayed (`→ queued`).
    pub fn can_become(self, next: Status) -> bool {
        use Status::*;
        match (self, next) {
            (DeadLettered | Failed | EnqueueFailed, Queued) => true,
            (from, _) if from.is_terminal() => false,
            (Queued, Running | Submitted | EnqueueFailed) => true,
            (Running, Queued | Running | Submitted) => true,
            (Submitted, Queued | Running) => true,
            (Queued | Running | Submitted, to) if to.is_terminal() => to != EnqueueFailed,
            _ => false,
        }
    }

    /// The terminal statuses as a SQL list, for guarded updates: `status NOT IN (…)`.
    pub fn terminal_sql_list() -> String {
        Status::ALL
            .into_iter()
            .filter(|s| s.is_terminal())
            .map(|s| format!("'{}'", s.as_str()))
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a job is: decides its prompt template and how its result is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Feedback,
    Prompt,
    Pdf,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Feedback, Kind::Prompt, Kind::Pdf];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Feedback => "feedback",
            Kind::Prompt => "prompt",
            Kind::Pdf => "pdf",
        }
    }
}

/// The queue a job rides: `high` has no delivery delay, `bulk` is delayed and throttled so that a
/// burst of bulk work never slows interactive work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lane {
    High,
    Bulk,
}

impl Lane {
    pub fn as_str(self) -> &'static str {
        match self {
            Lane::High => "high",
            Lane::Bulk => "bulk",
        }
    }
}

/// How the consumer calls Claude: the Messages API right away, or a Message Batch at half price.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Sync,
    Batch,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Sync => "sync",
            Mode::Batch => "batch",
        }
    }

    /// The contract's routing: feedback sync → high, batch → bulk; PDFs always bulk; prompt jobs
    /// choose their lane by priority (handled by the caller).
    pub fn default_lane(self) -> Lane {
        match self {
            Mode::Sync => Lane::High,
            Mode::Batch => Lane::Bulk,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_round_trips_through_its_spelling_and_serde() {
        for s in Status::ALL {
            assert_eq!(Status::parse(s.as_str()), Some(s));
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, format!("\"{}\"", s.as_str()));
        }
        assert_eq!(Status::parse("done"), None);
    }

    #[test]
    fn the_migration_check_constraint_lists_exactly_the_statuses() {
        let sql = include_str!("../../migrations/0001_init.sql");
        let start = sql
            .find("CHECK (status IN (")
            .expect("status CHECK in 0001");
        let rest = &sql[start + "CHECK (status IN (".len()..];
        let list = &rest[..rest.find(')').unwrap()];
        let mut in_sql: Vec<&str> = list
            .split(',')
            .map(|s| s.trim().trim_matches('\''))
            .collect();
        let mut ours: Vec<&str> = Status::ALL.iter().map(|s| s.as_str()).collect();
        in_sql.sort();
        ours.sort();
        assert_eq!(in_sql, ours);
    }

    #[test]
    fn terminal_statuses_are_the_five_of_the_contract_and_enqueue_failed() {
        let terminal: Vec<_> = Status::ALL
            .into_iter()
            .filter(|s| s.is_terminal())
            .collect();
        assert_eq!(terminal.len(), 6);
        assert!(!Status::Queued.is_terminal());
        assert!(!Status::Running.is_terminal());
        assert!(!Status::Submitted.is_terminal());
    }

    #[test]
    fn a_completed_job_never_changes_again() {
        for next in Status::ALL {
            assert!(!Status::Completed.can_become(next), "completed → {next}");
        }
    }

    #[test]
    fn a_dead_letter_can_be_replayed_but_not_resurrected_as_running() {
        assert!(Status::DeadLettered.can_become(Status::Queued));
        assert!(!Status::DeadLettered.can_become(Status::Running));
    }

    #[test]
    fn only_a_queued_job_can_fail_to_enqueue() {
        for from in Status::ALL {
            assert_eq!(
                from.can_become(Status::EnqueueFailed),
                from == Status::Queued,
                "{from}"
            );
        }
    }

    #[test]
    fn sync_rides_the_high_lane_and_batch_the_bulk_lane() {
        assert_eq!(Mode::Sync.default_lane(), Lane::High);
        assert_eq!(Mode::Batch.default_lane(), Lane::Bulk);
    }
}
