//! The metrics row the cron writes every minute: percentiles, rates, lanes, models, budget
//! use, and the thresholds that raise warnings and the DLQ alert.

use crate::dto::{Spend, SpendColumns};
use serde::{Deserialize, Serialize};

use crate::timing::Slo;

use crate::status::Lane;

/// Latency percentiles in ms (nearest rank), `None` when nothing ended in the window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Percentiles {
    pub p50: Option<i64>,
    pub p95: Option<i64>,
    pub p99: Option<i64>,
}

impl Percentiles {
    /// Nearest-rank percentiles of the samples (any order).
    pub fn of(mut samples: Vec<i64>) -> Percentiles {
        samples.sort_unstable();
        Percentiles {
            p50: nearest_rank(&samples, 50),
            p95: nearest_rank(&samples, 95),
            p99: nearest_rank(&samples, 99),
        }
    }
}

/// The smallest sample with at least `p`% of the samples at or below it.
pub fn nearest_rank(sorted: &[i64], p: u32) -> Option<i64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (sorted.len() * p as usize).div_ceil(100).max(1);
    Some(sorted[rank - 1])
}

/// Pending and in-flight work of one lane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LaneMetrics {
    pub lane: Lane,
    pub queued: u64,
    /// Running (a call in progress) plus submitted (inside an Anthropic batch).
    pub in_flight: u64,
    /// Age of the oldest job of the lane not yet ended (queued, running or submitted).
    pub oldest_pending_ms: Option<i64>,
}

/// Tokens and cost of the jobs of one model that ended in the window.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ModelMetrics {
    pub model: String,
    pub jobs: u64,
    #[serde(flatten)]
    pub spend: Spend,
}

/// What the budget charged a model class so far, and its limits per minute.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BudgetCharge {
    pub class: String,
    pub requests: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub rpm: u64,
    pub itpm: u64,
    pub otpm: u64,
}

/// The share of a class's per-minute limits used over the window (1.0 = at the limit).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BudgetUse {
    pub class: String,
    pub rpm: f64,
    pub itpm: f64,
    pub otpm: f64,
    /// The counters this row was computed from (the next row's baseline).
    pub charged: BudgetCharge,
}

/// One metrics row: what the cron computed at `at` over the `window_ms` before it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Metrics {
    pub at: i64,
    pub window_ms: i64,
    pub completed: u64,
    pub failed: u64,
    pub dead_lettered: u64,
    /// Other terminal ends in the window (expired, canceled).
    pub other_ended: u64,
    /// Failed (and dead-lettered) jobs per job ended in the window, 0 when none ended.
    pub failed_rate: f64,
    pub dead_letter_rate: f64,
    /// Completed jobs per minute over the window.
    pub throughput_per_min: f64,
    /// completed − started, of both paths (the call itself, or the batch's wait).
    pub run_ms: Percentiles,
    /// completed − created, of both paths (what the user waited).
    pub end_to_end_ms: Percentiles,
    pub lanes: Vec<LaneMetrics>,
    pub models: Vec<ModelMetrics>,
    /// Jobs in `dead_lettered` now (not discarded).
    pub dead_letters_now: u64,
    pub budget: Vec<BudgetUse>,
    /// The sync path (Messages API calls) on its own. Rows written before it are `None`.
    #[serde(default)]
    pub sync: Option<SyncPath>,
    /// The batch path (Message Batches) on its own.
    #[serde(default)]
    pub batch: Option<BatchPath>,
    /// The thresholds this row is judged by (the timing profile's when it was written).
    #[serde(default)]
    pub slo: Option<Slo>,
}

/// The Message Batches API ends a batch's processing 24 hours after its creation: "the time at
/// which the Message Batch will expire and end processing, which is 24 hours after creation"
/// (https://docs.claude.com/en/api/creating-message-batches, `expires_at`); most batches end
/// within an hour (https://docs.claude.com/en/docs/build-with-claude/batch-processing).
pub const BATCH_EXPIRY_MS: i64 = 24 * 3_600_000;

/// The sync path: jobs whose mode is `sync`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SyncPath {
    /// Ended in the window.
    pub completed: u64,
    /// Failed or dead-lettered in the window.
    pub failed: u64,
    /// completed − started: the call (the last attempt's start is not kept; the first's is).
    pub run_ms: Percentiles,
    /// completed − created.
    pub end_to_end_ms: Percentiles,
    /// Queued now: waiting for a call (or for a retry).
    pub waiting: u64,
    /// Running now: a call in progress.
    pub running: u64,
    /// How long the oldest waiting job has waited for its call, from when its lane let it run.
    pub oldest_waiting_ms: Option<i64>,
}

/// The batch path: jobs whose mode is `batch`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BatchPath {
    pub completed: u64,
    pub failed: u64,
    /// started − created: accumulating until the flush sent it in a Message Batch.
    pub to_submission_ms: Percentiles,
    /// completed − started: inside the Message Batch.
    pub in_batch_ms: Percentiles,
    /// completed − created.
    pub end_to_end_ms: Percentiles,
    /// Queued now: accumulating for the next flush.
    pub accumulating: u64,
    /// Submitted now: inside a Message Batch.
    pub submitted: u64,
    /// Age of the oldest accumulating job.
    pub oldest_accumulating_ms: Option<i64>,
    /// Age (since its creation, so at least its time inside) of the oldest job inside a batch.
    pub oldest_submitted_ms: Option<i64>,
}

/// A threshold a row crosses: which path, which figure, its value and its threshold (ms). The
/// report's other warnings (a model near retirement) have the path `models` and no figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Warning {
    /// `sync`, `batch` or `models`.
    pub path: String,
    /// The figure: `p95_end_to_end_ms`, `oldest_waiting_ms`, `oldest_accumulating_ms`,
    /// `oldest_submitted_ms`, or `model_standing`.
    pub metric: String,
    pub value_ms: Option<i64>,
    pub threshold_ms: Option<i64>,
    /// The sentence the Dashboard shows.
    pub message: String,
}

impl Warning {
    /// A model's standing (deprecated, retiring soon), which belongs to no path.
    pub fn model(message: String) -> Warning {
        Warning {
            path: "models".into(),
            metric: "model_standing".into(),
            value_ms: None,
            threshold_ms: None,
            message,
        }
    }
}

/// The Dashboard's thresholds when a row carries none (rows written before per-path SLOs).
pub const OLDEST_PENDING_ALERT_MS: i64 = 10 * 60 * 1000;
pub const P95_ALERT_MS: i64 = 60 * 1000;

/// One job that ended in the window, as the metrics query returns it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct EndedJob {
    pub status: String,
    #[serde(default = "sync_mode")]
    pub mode: String,
    pub model: Option<String>,
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub completed_at: i64,
    #[serde(flatten)]
    pub columns: SpendColumns,
}

impl EndedJob {
    /// Its tokens and cost.
    pub fn spend(&self) -> Spend {
        self.columns.spend(false)
    }
}

fn sync_mode() -> String {
    "sync".into()
}

/// Pending work by lane, mode and status, as the metrics query groups it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PendingGroup {
    pub lane: String,
    #[serde(default = "sync_mode")]
    pub mode: String,
    pub status: String,
    pub n: u64,
    pub oldest: i64,
}

/// Everything the metrics row is computed from.
pub struct MetricsInput<'a> {
    pub at: i64,
    pub window_ms: i64,
    pub ended: &'a [EndedJob],
    pub pending: &'a [PendingGroup],
    pub dead_letters_now: u64,
    pub budget: &'a [BudgetCharge],
    /// The previous row's budget counters (use is the difference), if any.
    pub previous: Option<&'a Metrics>,
    pub slo: Slo,
}

impl Metrics {
    pub fn compute(input: &MetricsInput<'_>) -> Metrics {
        let mut run = Vec::new();
        let mut e2e = Vec::new();
        let mut sync_samples = (Vec::new(), Vec::new());
        let mut batch_samples = (Vec::new(), Vec::new(), Vec::new());
        let mut sync = SyncPath::default();
        let mut batch = BatchPath::default();
        let (mut completed, mut failed, mut dead, mut other) = (0u64, 0u64, 0u64, 0u64);
        let mut models: Vec<ModelMetrics> = Vec::new();
        for j in input.ended {
            let is_batch = j.mode == "batch";
            match j.status.as_str() {
                "completed" => {
                    completed += 1;
                    let total = j.completed_at - j.created_at;
                    e2e.push(total);
                    if let Some(s) = j.started_at {
                        run.push(j.completed_at - s);
                    }
                    if is_batch {
                        batch.completed += 1;
                        batch_samples.2.push(total);
                        if let Some(s) = j.started_at {
                            batch_samples.0.push(s - j.created_at);
                            batch_samples.1.push(j.completed_at - s);
                        }
                    } else {
                        sync.completed += 1;
                        sync_samples.1.push(total);
                        if let Some(s) = j.started_at {
                            sync_samples.0.push(j.completed_at - s);
                        }
                    }
                }
                "failed" | "dead_lettered" => {
                    if j.status == "failed" {
                        failed += 1;
                    } else {
                        dead += 1;
                    }
                    if is_batch {
                        batch.failed += 1;
                    } else {
                        sync.failed += 1;
                    }
                }
                _ => other += 1,
            }
            let model = j.model.clone().unwrap_or_else(|| "unknown".into());
            let m = match models.iter_mut().position(|m| m.model == model) {
                Some(i) => &mut models[i],
                None => {
                    models.push(ModelMetrics {
                        model,
                        ..ModelMetrics::default()
                    });
                    models.last_mut().expect("just pushed")
                }
            };
            m.jobs += 1;
            m.spend = m.spend + j.spend();
        }
        models.sort_by(|a, b| a.model.cmp(&b.model));
        sync.run_ms = Percentiles::of(sync_samples.0);
        sync.end_to_end_ms = Percentiles::of(sync_samples.1);
        batch.to_submission_ms = Percentiles::of(batch_samples.0);
        batch.in_batch_ms = Percentiles::of(batch_samples.1);
        batch.end_to_end_ms = Percentiles::of(batch_samples.2);
        let older = |a: Option<i64>, age: i64| Some(a.map_or(age, |a| a.max(age)));
        for g in input.pending {
            let age = (input.at - g.oldest).max(0);
            match (g.mode.as_str(), g.status.as_str()) {
                ("batch", "queued") => {
                    batch.accumulating += g.n;
                    batch.oldest_accumulating_ms = older(batch.oldest_accumulating_ms, age);
                }
                (_, "submitted") => {
                    batch.submitted += g.n;
                    batch.oldest_submitted_ms = older(batch.oldest_submitted_ms, age);
                }
                (_, "queued") => {
                    sync.waiting += g.n;
                    let delay = if g.lane == Lane::Bulk.as_str() {
                        input.slo.bulk_delay_ms
                    } else {
                        0
                    };
                    sync.oldest_waiting_ms = older(sync.oldest_waiting_ms, (age - delay).max(0));
                }
                _ => sync.running += g.n,
            }
        }
        let ended = completed + failed + dead + other;
        let rate = |n: u64| {
            if ended == 0 {
                0.0
            } else {
                n as f64 / ended as f64
            }
        };
        let minutes = (input.window_ms.max(1)) as f64 / 60_000.0;
        let lanes = [Lane::High, Lane::Bulk]
            .into_iter()
            .map(|lane| {
                let groups = input.pending.iter().filter(|g| g.lane == lane.as_str());
                let mut l = LaneMetrics {
                    lane,
                    queued: 0,
                    in_flight: 0,
                    oldest_pending_ms: None,
                };
                for g in groups {
                    if g.status == "queued" {
                        l.queued += g.n;
                    } else {
                        l.in_flight += g.n;
                    }
                    let age = (input.at - g.oldest).max(0);
                    l.oldest_pending_ms = Some(l.oldest_pending_ms.map_or(age, |a| a.max(age)));
                }
                l
            })
            .collect();
        let budget = input
            .budget
            .iter()
            .map(|now| {
                let before = input
                    .previous
                    .and_then(|p| p.budget.iter().find(|b| b.class == now.class))
                    .map(|b| &b.charged);
                let window_min = match input.previous {
                    Some(p) => ((input.at - p.at).max(1)) as f64 / 60_000.0,
                    None => minutes,
                };
                let share = |now: u64, before: Option<u64>, limit: u64| match before {
                    Some(b) if limit > 0 => {
                        now.saturating_sub(b) as f64 / (limit as f64 * window_min)
                    }
                    _ => 0.0,
                };
                BudgetUse {
                    class: now.class.clone(),
                    rpm: share(now.requests, before.map(|b| b.requests), now.rpm),
                    itpm: share(now.input_tokens, before.map(|b| b.input_tokens), now.itpm),
                    otpm: share(now.output_tokens, before.map(|b| b.output_tokens), now.otpm),
                    charged: now.clone(),
                }
            })
            .collect();
        Metrics {
            at: input.at,
            window_ms: input.window_ms,
            completed,
            failed,
            dead_lettered: dead,
            other_ended: other,
            failed_rate: rate(failed),
            dead_letter_rate: rate(dead),
            throughput_per_min: completed as f64 / minutes,
            run_ms: Percentiles::of(run),
            end_to_end_ms: Percentiles::of(e2e),
            lanes,
            models,
            dead_letters_now: input.dead_letters_now,
            budget,
            sync: Some(sync),
            batch: Some(batch),
            slo: Some(input.slo),
        }
    }

    /// The thresholds this row crosses, per path: the sync path's p95 and oldest waiting job,
    /// the batch path's oldest accumulating job and oldest job inside a Message Batch. Work on
    /// one path never raises the other's warning. A row written before per-path SLOs is judged
    /// by the old whole-pipeline thresholds, as the sync path.
    pub fn warnings(&self) -> Vec<Warning> {
        let slo = self.slo.unwrap_or_default();
        let mut out = Vec::new();
        let mut check =
            |path: &str, metric: &str, value: Option<i64>, threshold: i64, what: &str| {
                if let Some(v) = value.filter(|v| *v > threshold) {
                    out.push(Warning {
                        path: path.into(),
                        metric: metric.into(),
                        value_ms: Some(v),
                        threshold_ms: Some(threshold),
                        message: format!(
                            "{path} path: {what} is {} (threshold {})",
                            span(v),
                            span(threshold)
                        ),
                    });
                }
            };
        match (&self.sync, &self.batch) {
            (Some(sync), Some(batch)) => {
                check(
                    "sync",
                    "p95_end_to_end_ms",
                    sync.end_to_end_ms.p95,
                    slo.sync_p95_ms,
                    "p95 end-to-end latency",
                );
                check(
                    "sync",
                    "oldest_waiting_ms",
                    sync.oldest_waiting_ms,
                    slo.sync_wait_ms,
                    "the oldest job waiting for its call has waited",
                );
                check(
                    "batch",
                    "oldest_accumulating_ms",
                    batch.oldest_accumulating_ms,
                    slo.batch_submit_ms,
                    "the oldest job not yet sent in a Message Batch has waited",
                );
                check(
                    "batch",
                    "oldest_submitted_ms",
                    batch.oldest_submitted_ms,
                    slo.batch_submit_ms + slo.batch_in_batch_ms,
                    "the oldest job inside a Message Batch was created",
                );
            }
            _ => {
                let oldest = self.lanes.iter().filter_map(|l| l.oldest_pending_ms).max();
                check(
                    "sync",
                    "p95_end_to_end_ms",
                    self.end_to_end_ms.p95,
                    P95_ALERT_MS,
                    "p95 end-to-end latency",
                );
                check(
                    "sync",
                    "oldest_waiting_ms",
                    oldest,
                    OLDEST_PENDING_ALERT_MS,
                    "the oldest pending job has waited",
                );
            }
        }
        out
    }
}

/// A duration for a warning: `850 ms`, `90.5 s`, `14 min`, `3.2 h`.
pub fn span(ms: i64) -> String {
    match ms {
        m if m < 1_000 => format!("{m} ms"),
        m if m < 600_000 => format!("{} s", crate::decimal::fixed(m as f64 / 1000.0, 1)),
        m if m < 3 * 3_600_000 => format!("{} min", m / 60_000),
        m => format!("{} h", crate::decimal::fixed(m as f64 / 3_600_000.0, 1)),
    }
}

/// `GET /api/metrics`: the latest row and the series (oldest first).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MetricsReport {
    pub latest: Option<Metrics>,
    pub warnings: Vec<Warning>,
    pub series: Vec<Metrics>,
    pub dlq_alert_threshold: u64,
    /// Spend the pipeline may not have recorded, since the database was made.
    #[serde(default)]
    pub unrecorded: Unrecorded,
    /// Each entry point's highest use of each production limit over the last day
    /// (`pipeline::envelope::headroom`), the tightest first.
    #[serde(default)]
    pub headroom: Vec<crate::envelope::headroom::Peak>,
    /// The catalog watch (`crate::models::watch`): the last check of the API's model list, its
    /// notices, and this week's jobs on deprecated models.
    #[serde(default)]
    pub models: crate::models::watch::WatchView,
}

/// What may have been spent without being recorded: calls abandoned at our timeout (the API
/// finishes and bills them, but their answer — and so their usage — never reaches us), and
/// Message Batches given up as unknown to the API (their results, and what they billed, are
/// never read; their jobs run again in a new batch).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Unrecorded {
    pub timed_out_calls: u64,
    /// At most this much: each timed-out call at the worst case of its reservation.
    pub timed_out_worst_micros: crate::money::UsdMicros,
    pub lost_batches: u64,
    pub lost_batch_jobs: u64,
}

impl Unrecorded {
    /// Counter names in the store (heartbeats), one per field.
    pub const TIMED_OUT_CALLS: &'static str = "unrecorded_timed_out_calls";
    pub const TIMED_OUT_WORST: &'static str = "unrecorded_timed_out_worst_micros";
    pub const LOST_BATCHES: &'static str = "unrecorded_lost_batches";
    pub const LOST_BATCH_JOBS: &'static str = "unrecorded_lost_batch_jobs";

    /// Nothing to report.
    pub fn is_empty(&self) -> bool {
        *self == Unrecorded::default()
    }
}

/// The window a metrics row covers: since the previous row, at least 1 minute and at most 10
/// (the store's `ENDED` query opens its window the same way, in SQL).
pub fn window_ms(at: i64, previous_at: Option<i64>) -> i64 {
    previous_at
        .map(|p| (at - p).clamp(60_000, 600_000))
        .unwrap_or(60_000)
}

/// The DLQ alert's rule: it fires when the count goes from at most the threshold to above it,
/// and only again after it has dropped back. Returns (above now, fire).
pub fn dlq_crossing(was_above: bool, count: u64, threshold: u64) -> (bool, bool) {
    let above = count > threshold;
    (above, above && !was_above)
}

#[cfg(test)]
mod tests;
