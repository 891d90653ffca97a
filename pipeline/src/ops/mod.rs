//! The operator's side, as pure decisions, one concern per module. The Worker's store runs the
//! queries and hands the rows here.
//!
//! # Layout
//! - [`failures`]: what kind of failure ended a job.
//! - [`metrics`]: the cron's metrics row, its warnings and the DLQ alert's crossing rule.
//! - [`usage`]: per-user usage reports and their CSV.
//! - [`budgets`]: per-user daily caps and soft thresholds.
//! - [`dlq`]: DLQ triage — filters, replay rules and edits.
//! - [`rollups`]: the usage rollup against a scan of its jobs.

pub mod budgets;
pub mod dlq;
pub mod failures;
pub mod metrics;
pub mod rollups;
pub mod usage;
