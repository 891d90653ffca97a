//! The operator's side, as pure decisions, one concern per module. The Worker runs the queries
//! (their text is in [`sql`], so a test can check each one's plan) and hands the rows here.
//!
//! # Layout
//! - [`failures`]: what kind of failure ended a job.
//! - [`metrics`]: the cron's metrics row, its warnings and the DLQ alert's crossing rule.
//! - [`usage`]: per-user usage reports and their CSV.
//! - [`budgets`]: per-user daily caps and soft thresholds.
//! - [`dlq`]: DLQ triage — filters, replay rules and edits.
//! - [`sql`]: the queries.

pub mod budgets;
pub mod dlq;
pub mod failures;
pub mod metrics;
pub mod sql;
pub mod usage;
