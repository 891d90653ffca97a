//! One status vocabulary for every job, and the transitions allowed between statuses.
//!
//! The same list is enforced by the CHECK constraint of `migrations/0001_init.sql`; a test reads
//! the migration and compares, so the two cannot drift apart.

use serde::{Deserialize, Serialize};

/// Where a job is in its life. Serialized in snake_case, exactly as stored in D1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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

    /// Whether a job may move from `self` to `next`: exactly the moves some [`Transition`] makes
    /// (a test proves the two agree). A terminal job never changes again — a replay is a new
    /// job; the reconciler may put a stuck `queued` or `running` job back to `queued`.
    pub fn can_become(self, next: Status) -> bool {
        use Status::*;
        matches!(
            (self, next),
            (Queued, _)
                | (
                    Running,
                    Queued | Completed | Failed | DeadLettered | Expired
                )
                | (
                    Submitted,
                    Queued | Completed | Failed | DeadLettered | Canceled
                )
        )
    }

    /// The status as a SQL literal, for the store's reads (`status = 'submitted'`).
    pub fn sql(self) -> String {
        format!("'{}'", self.as_str())
    }

    /// `status = '…'` for one status, `status IN (…)` for several: the store's reads and
    /// guards (spelled as the partial indexes of the migrations are, so the planner uses them).
    pub fn sql_in(statuses: &[Status]) -> String {
        match statuses {
            [one] => format!("status = {}", one.sql()),
            _ => {
                let list: Vec<String> = statuses.iter().map(|s| s.sql()).collect();
                format!("status IN ({})", list.join(","))
            }
        }
    }

    /// The terminal statuses as a SQL list (`'enqueue_failed','completed',…`).
    pub fn terminal_sql_list() -> String {
        let list: Vec<String> = Status::ALL
            .into_iter()
            .filter(|s| s.is_terminal())
            .map(Status::sql)
            .collect();
        list.join(",")
    }

    /// The statuses of work not finished yet.
    pub const LIVE: [Status; 3] = [Status::Queued, Status::Running, Status::Submitted];
}

/// Every status change the product makes, each with the statuses it may start from. The store
/// writes its guarded `UPDATE`s with [`Transition::guard`] and [`Transition::set`], so no status
/// literal is written by hand and a repeated write changes nothing the second time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transition {
    /// The queue refused the job's message: it will never run.
    EnqueueFail,
    /// A consumer takes a job for a synchronous call (one more attempt).
    Claim,
    /// A flush's Message Batch was created: its jobs are inside it.
    Submit,
    /// A failed call worth another try: back to waiting for the retry.
    Requeue,
    /// The reconciler re-sends a job stuck in `queued` or `running` (its message was lost).
    Reconcile,
    /// A transient error (or expiry) in a batch's results: back to the accumulation.
    Resubmit,
    /// An answer completed the job.
    Complete,
    /// A permanent failure, or a paid answer with nothing to use.
    Fail,
    /// Retries exhausted (the consumer that made the last call ends the job).
    DeadLetter,
    /// The dead-letter queue: a message that ran out of the queue's own retries ends its job —
    /// only while the job waits in `queued`. A `running` job has a call in flight and a
    /// `submitted` one is inside a Message Batch that bills it: neither is the DLQ's to end.
    DeadLetterQueued,
    /// A job whose `expires_at` passed before it ran (seen by a consumer).
    Expire,
    /// The cron expires queued jobs past their `expires_at`.
    ExpireStale,
    /// The user canceled a job (or its upload) that has not run.
    Cancel,
    /// A job whose Message Batch was canceled before its request ran.
    CancelInBatch,
    /// The deadline router moves a batch job to a synchronous call (`crate::routing`): still
    /// accumulating at its rescue time, or answered `canceled`/`expired` by its batch.
    Reroute,
    /// A refusal with a fallback (`crate::refusal`): a running call's job, or a job of a Message
    /// Batch, goes back to `queued` on its fallback model, once.
    FallBack,
}

impl Transition {
    pub const ALL: [Transition; 16] = [
        Transition::EnqueueFail,
        Transition::Claim,
        Transition::Submit,
        Transition::Requeue,
        Transition::Reconcile,
        Transition::Resubmit,
        Transition::Complete,
        Transition::Fail,
        Transition::DeadLetter,
        Transition::DeadLetterQueued,
        Transition::Expire,
        Transition::ExpireStale,
        Transition::Cancel,
        Transition::CancelInBatch,
        Transition::Reroute,
        Transition::FallBack,
    ];

    /// The statuses this change may start from.
    pub fn from(self) -> &'static [Status] {
        use Status::*;
        match self {
            Transition::EnqueueFail | Transition::Claim | Transition::Submit => &[Queued],
            Transition::ExpireStale | Transition::DeadLetterQueued => &[Queued],
            // Guarded as "not terminal": a late answer of a call the reconciler gave up on
            // still settles the job, so it is never called again.
            Transition::Requeue
            | Transition::Complete
            | Transition::Fail
            | Transition::DeadLetter => &Status::LIVE,
            Transition::Reconcile | Transition::Expire => &[Queued, Running],
            Transition::Resubmit | Transition::CancelInBatch => &[Submitted],
            Transition::Cancel | Transition::Reroute => &[Queued, Submitted],
            Transition::FallBack => &[Running, Submitted],
        }
    }

    /// The status this change leads to.
    pub fn to(self) -> Status {
        match self {
            Transition::EnqueueFail => Status::EnqueueFailed,
            Transition::Claim => Status::Running,
            Transition::Submit => Status::Submitted,
            Transition::Requeue
            | Transition::Reconcile
            | Transition::Resubmit
            | Transition::Reroute
            | Transition::FallBack => Status::Queued,
            Transition::Complete => Status::Completed,
            Transition::Fail => Status::Failed,
            Transition::DeadLetter | Transition::DeadLetterQueued => Status::DeadLettered,
            Transition::Expire | Transition::ExpireStale => Status::Expired,
            Transition::Cancel | Transition::CancelInBatch => Status::Canceled,
        }
    }

    /// The `WHERE` guard: `status IN (<from>)`.
    pub fn guard(self) -> String {
        Status::sql_in(self.from())
    }

    /// The `SET` of the change: `status = '<to>'` — and, into a terminal status, the job's
    /// budget reservation released (`reserved_micros = 0`), so that what it commits against the
    /// user's caps is from then on only what it cost. A user's cancel of a job already inside a
    /// Message Batch marks it `awaiting_bill`: the batch may still run its request and bill it,
    /// and the poller records that cost when the batch ends (SQLite reads the old `status` on
    /// the right of a `SET`).
    pub fn set(self) -> String {
        let mut set = format!("status = {}", self.to().sql());
        if self.to().is_terminal() {
            set.push_str(", reserved_micros = 0");
        }
        if self == Transition::Cancel {
            set.push_str(&format!(
                ", awaiting_bill = (status = {})",
                Status::Submitted.sql()
            ));
        }
        set
    }
}

/// `FromStr` and `Display` through the stored spelling, for each vocabulary: a value the
/// vocabulary does not have is an error naming it, never a silent default.
macro_rules! spelled {
    ($t:ident, $what:literal) => {
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $t {
            type Err = UnknownValue;

            fn from_str(s: &str) -> Result<$t, UnknownValue> {
                $t::ALL
                    .into_iter()
                    .find(|v| v.as_str() == s)
                    .ok_or_else(|| UnknownValue {
                        what: $what,
                        value: s.to_owned(),
                    })
            }
        }
    };
}

spelled!(Status, "status");
spelled!(Kind, "kind");
spelled!(Lane, "lane");
spelled!(Mode, "mode");

/// A stored or sent value outside its vocabulary.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} {value:?}")]
pub struct UnknownValue {
    pub what: &'static str,
    pub value: String,
}

/// What a job is: decides its prompt template and how its result is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Lane {
    High,
    Bulk,
}

impl Lane {
    pub const ALL: [Lane; 2] = [Lane::High, Lane::Bulk];

    pub fn as_str(self) -> &'static str {
        match self {
            Lane::High => "high",
            Lane::Bulk => "bulk",
        }
    }
}

/// How the consumer calls Claude: the Messages API right away, or a Message Batch at half price.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Sync,
    Batch,
}

impl Mode {
    pub const ALL: [Mode; 2] = [Mode::Sync, Mode::Batch];

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

/// Which path answered a `POST /api/claude` call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum CallPath {
    /// Called at once from the request (no queue).
    Direct,
    /// A high-lane prompt job the request waited for.
    Queue,
}

impl CallPath {
    pub const ALL: [CallPath; 2] = [CallPath::Direct, CallPath::Queue];

    pub fn as_str(self) -> &'static str {
        match self {
            CallPath::Direct => "direct",
            CallPath::Queue => "queue",
        }
    }
}

#[cfg(test)]
mod tests;
