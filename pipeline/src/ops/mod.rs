//! The operator's side, as pure decisions, one concern per module. The Worker's store runs the
//! queries and hands the rows here.
//!
//! # Layout
//! - [`joblog`]: the one JSON shape of every log line about a job.
//! - [`metrics`]: the cron's metrics row, its warnings and the DLQ alert's crossing rule.
//! - [`usage`]: per-user usage reports and their CSV.
//! - [`reconcile`]: our cost per day and model against Anthropic's cost report.
//! - [`spenders`]: who spends what, across users (admins).
//! - [`tag_usage`]: cost by `key=value` tag (the tag rollup).
//! - [`budgets`]: per-user daily caps and soft thresholds.
//! - [`dlq`]: DLQ triage — filters, replay rules and edits.
//! - [`prometheus`]: the Prometheus text format, and the counters the cron keeps for it.
//! - [`rollups`]: the usage rollup against a scan of its jobs.

pub mod budgets;
pub mod bulk;
pub mod cache_use;
pub mod dlq;
pub mod joblog;
pub mod metrics;
pub mod prometheus;
pub mod reconcile;
pub mod rollups;
pub mod route_health;
pub mod spenders;
pub mod status;
pub mod tag_usage;
pub mod usage;
