//! The operator's side, as pure decisions: failure classes, metrics (percentiles, rates,
//! thresholds, the DLQ alert's crossing rule, budget use), per-user usage reports (days, savings,
//! CSV), per-user daily budgets, and DLQ triage (filters, replay rules and edits).
//!
//! The Worker runs the queries (their SQL is in [`sql`], so a test can check each one's plan) and
//! hands the rows to the functions here.

use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::jobs::Cursor;
use crate::status::{Kind, Lane, Mode, Status};

// ---------------------------------------------------------------------------------------------
// Failure classes

/// What kind of failure ended a job, from its stored error (the DLQ page filters on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    RateLimited,
    Overloaded,
    ServerError,
    Timeout,
    Network,
    InvalidRequest,
    BatchErrored,
    Expired,
    Unreadable,
    Other,
}

impl ErrorClass {
    pub const ALL: [ErrorClass; 10] = [
        ErrorClass::RateLimited,
        ErrorClass::Overloaded,
        ErrorClass::ServerError,
        ErrorClass::Timeout,
        ErrorClass::Network,
        ErrorClass::InvalidRequest,
        ErrorClass::BatchErrored,
        ErrorClass::Expired,
        ErrorClass::Unreadable,
        ErrorClass::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorClass::RateLimited => "rate_limited",
            ErrorClass::Overloaded => "overloaded",
            ErrorClass::ServerError => "server_error",
            ErrorClass::Timeout => "timeout",
            ErrorClass::Network => "network",
            ErrorClass::InvalidRequest => "invalid_request",
            ErrorClass::BatchErrored => "batch_errored",
            ErrorClass::Expired => "expired",
            ErrorClass::Unreadable => "unreadable",
            ErrorClass::Other => "other",
        }
    }

    pub fn parse(s: &str) -> Option<ErrorClass> {
        ErrorClass::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// Classifies a stored error text (as written by the consumer, the poller and the cron).
    pub fn of(error: &str) -> ErrorClass {
        let e = error.to_ascii_lowercase();
        let status = api_status(&e);
        match status {
            Some(429) => return ErrorClass::RateLimited,
            Some(529) => return ErrorClass::Overloaded,
            Some(s) if s >= 500 => return ErrorClass::ServerError,
            Some(s) if (400..500).contains(&s) => return ErrorClass::InvalidRequest,
            _ => {}
        }
        if e.contains("timed out") || e.contains("timeout") {
            ErrorClass::Timeout
        } else if e.contains("network error") {
            ErrorClass::Network
        } else if e.contains("expired") {
            ErrorClass::Expired
        } else if e.contains("batch") && (e.contains("errored") || e.contains("error")) {
            ErrorClass::BatchErrored
        } else if e.contains("could not be read") || e.contains("unreadable") {
            ErrorClass::Unreadable
        } else if e.contains("overloaded") {
            ErrorClass::Overloaded
        } else if e.contains("rate limit") || e.contains("rate_limit") {
            ErrorClass::RateLimited
        } else if e.contains("invalid_request") || e.contains("password") {
            ErrorClass::InvalidRequest
        } else {
            ErrorClass::Other
        }
    }
}

/// The HTTP status in "Anthropic API 529: …" (the consumer's description of an error answer).
fn api_status(e: &str) -> Option<u16> {
    let rest = &e[e.find("anthropic api ")? + "anthropic api ".len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

// ---------------------------------------------------------------------------------------------
// Metrics

/// Latency percentiles in ms (nearest rank), `None` when nothing ended in the window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
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
pub struct ModelMetrics {
    pub model: String,
    pub jobs: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_write_tokens: u64,
    pub cache_read_tokens: u64,
    pub cost_micros: u64,
}

/// What the budget charged a model class so far, and its limits per minute.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    /// completed − started (the call itself, or the batch's wait).
    pub run_ms: Percentiles,
    /// completed − created (what the user waited).
    pub end_to_end_ms: Percentiles,
    pub lanes: Vec<LaneMetrics>,
    pub models: Vec<ModelMetrics>,
    /// Jobs in `dead_lettered` now (not discarded).
    pub dead_letters_now: u64,
    pub budget: Vec<BudgetUse>,
}

/// The Dashboard's thresholds.
pub const OLDEST_PENDING_ALERT_MS: i64 = 10 * 60 * 1000;
pub const P95_ALERT_MS: i64 = 60 * 1000;

/// One job that ended in the window, as the metrics query returns it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct EndedJob {
    pub status: String,
    pub model: Option<String>,
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub completed_at: i64,
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_write_tokens: u64,
    #[serde(default)]
    pub cache_read_tokens: u64,
    #[serde(default)]
    pub cost_micros: u64,
}

/// Pending work by lane and status, as the metrics query groups it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PendingGroup {
    pub lane: String,
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
}

impl Metrics {
    pub fn compute(input: &MetricsInput<'_>) -> Metrics {
        let mut run = Vec::new();
        let mut e2e = Vec::new();
        let (mut completed, mut failed, mut dead, mut other) = (0u64, 0u64, 0u64, 0u64);
        let mut models: Vec<ModelMetrics> = Vec::new();
        for j in input.ended {
            match j.status.as_str() {
                "completed" => {
                    completed += 1;
                    e2e.push(j.completed_at - j.created_at);
                    if let Some(s) = j.started_at {
                        run.push(j.completed_at - s);
                    }
                }
                "failed" => failed += 1,
                "dead_lettered" => dead += 1,
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
            m.input_tokens += j.input_tokens;
            m.output_tokens += j.output_tokens;
            m.cache_write_tokens += j.cache_write_tokens;
            m.cache_read_tokens += j.cache_read_tokens;
            m.cost_micros += j.cost_micros;
        }
        models.sort_by(|a, b| a.model.cmp(&b.model));
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
        }
    }

    /// The thresholds this row crosses, as sentences for the Dashboard.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        for l in &self.lanes {
            if let Some(age) = l.oldest_pending_ms.filter(|a| *a > OLDEST_PENDING_ALERT_MS) {
                out.push(format!(
                    "the oldest pending {} job has waited {} min (threshold 10 min)",
                    l.lane.as_str(),
                    age / 60_000
                ));
            }
        }
        if let Some(p95) = self.end_to_end_ms.p95.filter(|p| *p > P95_ALERT_MS) {
            out.push(format!(
                "p95 end-to-end latency is {:.1} s (threshold 60 s)",
                p95 as f64 / 1000.0
            ));
        }
        out
    }
}

/// `GET /api/metrics`: the latest row and the series (oldest first).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricsReport {
    pub latest: Option<Metrics>,
    pub warnings: Vec<String>,
    pub series: Vec<Metrics>,
    pub dlq_alert_threshold: u64,
}

/// The DLQ alert's rule: it fires when the count goes from at most the threshold to above it,
/// and only again after it has dropped back. Returns (above now, fire).
pub fn dlq_crossing(was_above: bool, count: u64, threshold: u64) -> (bool, bool) {
    let above = count > threshold;
    (above, above && !was_above)
}

// ---------------------------------------------------------------------------------------------
// Calendar (UTC days)

pub const DAY_MS: i64 = 86_400_000;

/// Days since 1970-01-01 of a civil date (proleptic Gregorian).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of a day number.
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

/// `YYYY-MM-DD` of an epoch-ms instant (UTC).
pub fn day_of(ms: i64) -> String {
    let (y, m, d) = civil_from_days(ms.div_euclid(DAY_MS));
    format!("{y:04}-{m:02}-{d:02}")
}

/// Epoch ms of the start of a `YYYY-MM-DD` day (UTC).
pub fn parse_day(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let y: i64 = s[0..4].parse().ok()?;
    let m: u32 = s[5..7].parse().ok()?;
    let d: u32 = s[8..10].parse().ok()?;
    if !(1..=12).contains(&m) || d == 0 {
        return None;
    }
    let days = days_from_civil(y, m, d);
    // Reject 2026-02-30 and the like: the day must round-trip.
    (civil_from_days(days) == (y, m, d)).then_some(days * DAY_MS)
}

// ---------------------------------------------------------------------------------------------
// Usage

/// The longest range one usage request may cover.
pub const MAX_USAGE_DAYS: i64 = 366;

/// A usage request: whose, and which UTC days (inclusive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageQuery {
    pub user_id: String,
    pub from_ms: i64,
    /// Exclusive end (the start of the day after `to`).
    pub to_ms: i64,
}

impl UsageQuery {
    /// From the query string's `from`, `to` (`YYYY-MM-DD`, default: the last 30 days up to
    /// today) and `user` (admins only; others get 403 for another user's name).
    pub fn parse(
        from: Option<&str>,
        to: Option<&str>,
        user: Option<&str>,
        caller: &str,
        admin: bool,
        now: i64,
    ) -> Result<UsageQuery, ApiError> {
        let day = |s: Option<&str>, field: &str, default: i64| match s.filter(|s| !s.is_empty()) {
            None => Ok(default),
            Some(s) => parse_day(s).ok_or_else(|| {
                ApiError::bad_request(
                    "invalid_date",
                    format!("{field} must be a date written YYYY-MM-DD"),
                    Some(field),
                )
            }),
        };
        let today = now.div_euclid(DAY_MS) * DAY_MS;
        let to_ms = day(to, "to", today)? + DAY_MS;
        let from_ms = day(from, "from", to_ms - 30 * DAY_MS)?;
        if from_ms >= to_ms {
            return Err(ApiError::bad_request(
                "invalid_range",
                "from must not be after to",
                Some("from"),
            ));
        }
        if to_ms - from_ms > MAX_USAGE_DAYS * DAY_MS {
            return Err(ApiError::bad_request(
                "invalid_range",
                format!("a usage range covers at most {MAX_USAGE_DAYS} days"),
                Some("from"),
            ));
        }
        let user_id = match user.filter(|u| !u.is_empty()) {
            None => caller.to_owned(),
            Some(u) if u == caller => caller.to_owned(),
            Some(u) if admin => crate::identity::UserId::parse(u)
                .map_err(|e| ApiError::bad_request("invalid_user", e, Some("user")))?
                .as_str()
                .to_owned(),
            Some(_) => {
                return Err(ApiError::forbidden(
                    "only admins may see another user's usage",
                ))
            }
        };
        Ok(UsageQuery {
            user_id,
            from_ms,
            to_ms,
        })
    }
}

/// One group of the usage query: a day's jobs of one model and mode.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct UsageGroup {
    pub day: i64,
    pub model: Option<String>,
    pub mode: String,
    pub jobs: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_write_tokens: u64,
    pub cache_read_tokens: u64,
    pub cost_micros: u64,
    #[serde(default)]
    pub cost_unknown: u64,
}

/// Tokens and cost of a set of jobs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageTotals {
    pub jobs: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_write_tokens: u64,
    pub cache_read_tokens: u64,
    pub cost_micros: u64,
    /// Jobs answered by a model the price table does not know (their cost is not included).
    pub cost_unknown_jobs: u64,
}

impl UsageTotals {
    fn add(&mut self, g: &UsageGroup) {
        self.jobs += g.jobs;
        self.input_tokens += g.input_tokens;
        self.output_tokens += g.output_tokens;
        self.cache_write_tokens += g.cache_write_tokens;
        self.cache_read_tokens += g.cache_read_tokens;
        self.cost_micros += g.cost_micros;
        self.cost_unknown_jobs += g.cost_unknown;
    }
}

/// A row of the usage table: one day and model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageRow {
    pub day: String,
    pub model: String,
    #[serde(flatten)]
    pub totals: UsageTotals,
}

/// One day's totals (the chart's bars; days without jobs included as zero).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageDay {
    pub day: String,
    pub cost_micros: u64,
    pub jobs: u64,
}

/// What batches and caching saved, in micro-dollars.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Savings {
    /// The Message Batches API bills half: batch jobs would have cost this much more in sync.
    pub batch_micros: u64,
    /// Cache reads billed at the read price instead of the input price, less the 5-minute write
    /// premium (0.25× input) paid for the writes; never below 0.
    pub cache_micros: u64,
}

/// The user's daily budget and today's spending.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DailyBudget {
    pub daily_cap_micros: Option<u64>,
    pub soft_micros: Option<u64>,
    pub spent_today_micros: u64,
}

/// `GET /api/usage`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageReport {
    pub user_id: String,
    pub from: String,
    pub to: String,
    pub rows: Vec<UsageRow>,
    pub days: Vec<UsageDay>,
    pub totals: UsageTotals,
    pub savings: Savings,
    pub budget: DailyBudget,
}

impl UsageReport {
    /// Builds the report from the query's groups.
    pub fn build(q: &UsageQuery, groups: &[UsageGroup], budget: DailyBudget) -> UsageReport {
        let mut rows: Vec<UsageRow> = Vec::new();
        let mut totals = UsageTotals::default();
        let mut savings = Savings::default();
        let first_day = q.from_ms.div_euclid(DAY_MS);
        let n_days = ((q.to_ms - q.from_ms) / DAY_MS) as usize;
        let mut days: Vec<UsageDay> = (0..n_days)
            .map(|i| UsageDay {
                day: day_of((first_day + i as i64) * DAY_MS),
                cost_micros: 0,
                jobs: 0,
            })
            .collect();
        let mut cache_saved: i128 = 0;
        for g in groups {
            totals.add(g);
            let day = day_of(g.day * DAY_MS);
            let model = g.model.clone().unwrap_or_else(|| "unknown".into());
            match rows.iter_mut().find(|r| r.day == day && r.model == model) {
                Some(r) => r.totals.add(g),
                None => {
                    let mut t = UsageTotals::default();
                    t.add(g);
                    rows.push(UsageRow {
                        day: day.clone(),
                        model: model.clone(),
                        totals: t,
                    });
                }
            }
            if let Some(d) = usize::try_from(g.day - first_day)
                .ok()
                .and_then(|i| days.get_mut(i))
            {
                d.cost_micros += g.cost_micros;
                d.jobs += g.jobs;
            }
            let batch = g.mode == Mode::Batch.as_str();
            if batch {
                savings.batch_micros += g.cost_micros;
            }
            if let Some((_, p)) = crate::pricing::price_of(&model, g.day * DAY_MS) {
                // µ$ per MTok × tokens (at that day's prices); halved for batch jobs.
                let read = g.cache_read_tokens as i128 * (p.input as i128 - p.cache_read as i128);
                let premium = g.cache_write_tokens as i128 * p.input as i128 / 4;
                let net = (read - premium) / if batch { 2 } else { 1 };
                cache_saved += net;
            }
        }
        savings.cache_micros = (cache_saved.max(0) / 1_000_000) as u64;
        rows.sort_by(|a, b| a.day.cmp(&b.day).then(a.model.cmp(&b.model)));
        UsageReport {
            user_id: q.user_id.clone(),
            from: day_of(q.from_ms),
            to: day_of(q.to_ms - DAY_MS),
            rows,
            days,
            totals,
            savings,
            budget,
        }
    }

    /// The CSV export: one line per day and model, a header first, dollars with six decimals.
    pub fn to_csv(&self) -> String {
        let mut out = String::from(
            "day,model,jobs,input_tokens,output_tokens,cache_write_tokens,cache_read_tokens,cost_usd\n",
        );
        for r in &self.rows {
            let t = &r.totals;
            out.push_str(&format!(
                "{},{},{},{},{},{},{},{}\n",
                r.day,
                csv_field(&r.model),
                t.jobs,
                t.input_tokens,
                t.output_tokens,
                t.cache_write_tokens,
                t.cache_read_tokens,
                dollars(t.cost_micros)
            ));
        }
        out
    }
}

/// `1234567` µ$ → `1.234567`.
pub fn dollars(micros: u64) -> String {
    format!("{}.{:06}", micros / 1_000_000, micros % 1_000_000)
}

/// A CSV field, quoted when needed; a leading `=+-@` is defused (spreadsheet formulas).
pub fn csv_field(s: &str) -> String {
    let s = if s.starts_with(['=', '+', '-', '@']) {
        format!("'{s}")
    } else {
        s.to_owned()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

// ---------------------------------------------------------------------------------------------
// Per-user daily budgets

/// `PUT /api/usage/budget` (admins): a user's daily cap and soft threshold in micro-dollars
/// (`null` removes one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BudgetSetting {
    pub user_id: String,
    pub daily_cap_micros: Option<u64>,
    pub soft_micros: Option<u64>,
}

impl BudgetSetting {
    pub fn parse(body: &[u8]) -> Result<BudgetSetting, ApiError> {
        let obj = crate::error::json_object(body)?;
        let user = obj.get("user_id").and_then(|v| v.as_str()).ok_or_else(|| {
            ApiError::bad_request("invalid_user", "user_id must be a string", Some("user_id"))
        })?;
        let user = crate::identity::UserId::parse(user)
            .map_err(|e| ApiError::bad_request("invalid_user", e, Some("user_id")))?;
        let amount = |field: &str| -> Result<Option<u64>, ApiError> {
            match obj.get(field) {
                None | Some(serde_json::Value::Null) => Ok(None),
                Some(v) => v
                    .as_u64()
                    .filter(|n| *n <= 1_000_000_000_000)
                    .map(Some)
                    .ok_or_else(|| {
                        ApiError::bad_request(
                            "invalid_amount",
                            format!("{field} must be a whole number of micro-dollars (0 to 10^12) or null"),
                            Some(field),
                        )
                    }),
            }
        };
        crate::error::reject_unknown_fields(&obj, &["user_id", "daily_cap_micros", "soft_micros"])?;
        Ok(BudgetSetting {
            user_id: user.as_str().to_owned(),
            daily_cap_micros: amount("daily_cap_micros")?,
            soft_micros: amount("soft_micros")?,
        })
    }
}

/// The producer's check before a job is accepted: at or over the daily cap → 429.
pub fn check_daily_cap(spent_today: u64, cap: Option<u64>) -> Result<(), ApiError> {
    match cap {
        Some(cap) if spent_today >= cap => Err(ApiError::new(
            429,
            "daily_budget_exceeded",
            format!(
                "your daily budget of ${} is spent (${} today); new jobs are accepted again after midnight UTC",
                dollars(cap),
                dollars(spent_today)
            ),
            None,
        )),
        _ => Ok(()),
    }
}

/// Whether today's spending reached the soft threshold (the alert is raised once per day).
pub fn soft_reached(spent_today: u64, soft: Option<u64>) -> bool {
    soft.is_some_and(|s| spent_today >= s)
}

// ---------------------------------------------------------------------------------------------
// DLQ triage

/// The Dead letters list's filter (from the query string, or the bulk replay's body).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DlqFilter {
    /// `dead_lettered` (default), `failed`, or `all` (both).
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub error_class: Option<String>,
    #[serde(default)]
    pub user: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    /// Ended at or after (epoch ms).
    #[serde(default)]
    pub from: Option<i64>,
    /// Ended before (epoch ms).
    #[serde(default)]
    pub to: Option<i64>,
}

impl DlqFilter {
    /// Checks the filter's values (400 naming the field otherwise).
    pub fn validate(&self) -> Result<(), ApiError> {
        if let Some(s) = &self.status {
            if !matches!(s.as_str(), "dead_lettered" | "failed" | "all") {
                return Err(ApiError::bad_request(
                    "invalid_status",
                    "status must be dead_lettered, failed or all",
                    Some("status"),
                ));
            }
        }
        if let Some(c) = &self.error_class {
            if ErrorClass::parse(c).is_none() {
                return Err(ApiError::bad_request(
                    "invalid_error_class",
                    format!(
                        "error_class must be one of {}",
                        ErrorClass::ALL.map(|c| c.as_str()).join(", ")
                    ),
                    Some("error_class"),
                ));
            }
        }
        if let Some(u) = &self.user {
            crate::identity::UserId::parse(u)
                .map_err(|e| ApiError::bad_request("invalid_user", e, Some("user")))?;
        }
        if self
            .model
            .as_deref()
            .is_some_and(|m| m.is_empty() || m.len() > 100)
        {
            return Err(ApiError::bad_request(
                "invalid_model",
                "model must be 1 to 100 characters",
                Some("model"),
            ));
        }
        Ok(())
    }

    /// The statuses the filter covers.
    pub fn statuses(&self) -> &'static [&'static str] {
        match self.status.as_deref() {
            Some("failed") => &["failed"],
            Some("all") => &["dead_lettered", "failed"],
            _ => &["dead_lettered"],
        }
    }

    /// The WHERE clause and its parameters (`?N` numbered from `first`), for the list and the
    /// bulk replay; served by `idx_jobs_status_completed` (or a user's `idx_jobs_user_status`).
    pub fn where_sql(&self, first: usize) -> (String, Vec<SqlValue>) {
        let list = self
            .statuses()
            .iter()
            .map(|s| format!("'{s}'"))
            .collect::<Vec<_>>()
            .join(",");
        let mut sql = format!("status IN ({list}) AND discarded_at IS NULL");
        let mut params = Vec::new();
        let mut add = |clause: &str, v: SqlValue, sql: &mut String| {
            params.push(v);
            sql.push_str(&clause.replace('?', &format!("?{}", first + params.len() - 1)));
        };
        if let Some(c) = &self.error_class {
            add(" AND error_class = ?", SqlValue::Text(c.clone()), &mut sql);
        }
        if let Some(u) = &self.user {
            add(" AND user_id = ?", SqlValue::Text(u.clone()), &mut sql);
        }
        if let Some(m) = &self.model {
            add(" AND model = ?", SqlValue::Text(m.clone()), &mut sql);
        }
        if let Some(f) = self.from {
            add(" AND completed_at >= ?", SqlValue::Int(f), &mut sql);
        }
        if let Some(t) = self.to {
            add(" AND completed_at < ?", SqlValue::Int(t), &mut sql);
        }
        (sql, params)
    }
}

impl DlqFilter {
    /// The triage list's query: `columns` of the matching jobs ended before the cursor, newest
    /// first, one more than `limit` (so the caller knows whether a next page exists).
    pub fn list_sql(
        &self,
        columns: &str,
        cursor: Option<&Cursor>,
        limit: u32,
    ) -> (String, Vec<SqlValue>) {
        let (clause, mut params) = self.where_sql(1);
        let n = params.len();
        let (at, id) = match cursor {
            Some(c) => (c.created_at, c.id.clone()),
            None => (1 << 52, String::new()),
        };
        params.extend([
            SqlValue::Int(at),
            SqlValue::Text(id),
            SqlValue::Int(limit as i64 + 1),
        ]);
        (
            format!(
                "SELECT {columns} FROM jobs WHERE {clause} \
                 AND (completed_at < ?{a} OR (completed_at = ?{a} AND id < ?{b})) \
                 ORDER BY completed_at DESC, id DESC LIMIT ?{c}",
                a = n + 1,
                b = n + 2,
                c = n + 3
            ),
            params,
        )
    }

    /// The bulk replay's query: up to `limit` + 1 matching jobs not yet replayed, oldest first.
    pub fn replay_sql(&self, columns: &str, limit: u32) -> (String, Vec<SqlValue>) {
        let (clause, mut params) = self.where_sql(1);
        params.push(SqlValue::Int(limit as i64 + 1));
        (
            format!(
                "SELECT {columns} FROM jobs WHERE {clause} AND replayed_to IS NULL \
                 ORDER BY completed_at, id LIMIT ?{}",
                params.len()
            ),
            params,
        )
    }
}

/// A bound SQL parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SqlValue {
    Text(String),
    Int(i64),
}

/// One dead-lettered (or failed) job on the triage page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DlqItem {
    pub id: String,
    pub user_id: String,
    pub kind: Kind,
    pub status: Status,
    pub priority: Lane,
    pub mode: Mode,
    pub model: Option<String>,
    pub attempts: u32,
    pub error: Option<String>,
    pub error_class: Option<String>,
    /// The first 200 characters of the input (feedback text, prompt, or the PDF's name).
    pub preview: String,
    pub created_at: i64,
    pub completed_at: Option<i64>,
    pub replay_of: Option<String>,
    pub replayed_to: Option<String>,
    /// Where the replay is now (so the page can follow it to the end).
    #[serde(default)]
    pub replay_status: Option<Status>,
    pub attempt_log: Vec<crate::dto::AttemptView>,
    pub audit: Vec<AuditEntry>,
}

/// Something an admin did to a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEntry {
    pub at: i64,
    pub actor: String,
    pub action: String,
    pub detail: Option<String>,
}

/// `GET /api/dlq`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DlqList {
    pub items: Vec<DlqItem>,
    pub next_cursor: Option<String>,
    /// Dead-lettered jobs now (not discarded), whatever the filter.
    pub dead_lettered: u64,
}

/// The edits of edit-then-replay.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayEdit {
    pub model: Option<String>,
    pub max_tokens: Option<u32>,
}

impl ReplayEdit {
    /// From the replay's body (empty = no edits) at `now_ms`: a model must be in the catalog
    /// and not retired; `max_tokens` is checked against the model when the request is built.
    pub fn parse(body: &[u8], now_ms: i64) -> Result<ReplayEdit, ApiError> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(ReplayEdit::default());
        }
        let obj = crate::error::json_object(body)?;
        let mut edit = ReplayEdit::default();
        for (k, v) in &obj {
            match k.as_str() {
                "model" if v.is_null() => {}
                "model" => {
                    edit.model = Some(crate::models::parse_model(Some(v), now_ms)?.id.to_owned());
                }
                "max_tokens" if v.is_null() => {}
                "max_tokens" => {
                    let n = v
                        .as_u64()
                        .filter(|n| (1..=MAX_OUTPUT as u64).contains(n))
                        .ok_or_else(|| {
                            ApiError::bad_request(
                                "invalid_max_tokens",
                                format!("max_tokens must be a whole number from 1 to {MAX_OUTPUT}"),
                                Some("max_tokens"),
                            )
                        })?;
                    edit.max_tokens = Some(n as u32);
                }
                other => {
                    return Err(ApiError::bad_request(
                        "unknown_field",
                        format!("unknown field {other} (a replay may change model and max_tokens)"),
                        Some(other),
                    ))
                }
            }
        }
        Ok(edit)
    }

    pub fn is_empty(&self) -> bool {
        self.model.is_none() && self.max_tokens.is_none()
    }

    /// Only prompt jobs carry their own max_tokens (feedback and PDF jobs use the product's).
    pub fn check_kind(&self, kind: Kind) -> Result<(), ApiError> {
        if self.max_tokens.is_some() && kind != Kind::Prompt {
            return Err(ApiError::bad_request(
                "invalid_max_tokens",
                "max_tokens can only be changed on prompt jobs",
                Some("max_tokens"),
            ));
        }
        Ok(())
    }
}

/// The largest `max_tokens` of any model (each model's own limit is checked on its request).
const MAX_OUTPUT: u32 = 128_000;

/// Whether a job may be replayed: dead-lettered, failed, expired or canceled, and not already
/// replayed. Completed → 409; still going → 409.
pub fn check_replayable(status: Status, replayed_to: Option<&str>) -> Result<(), ApiError> {
    if let Some(to) = replayed_to {
        return Err(ApiError::new(
            409,
            "already_replayed",
            format!("this job was already replayed as {to}"),
            None,
        ));
    }
    match status {
        Status::DeadLettered | Status::Failed | Status::Expired | Status::Canceled => Ok(()),
        Status::Completed => Err(ApiError::new(
            409,
            "completed",
            "this job completed; there is nothing to replay",
            None,
        )),
        other => Err(ApiError::new(
            409,
            "not_ended",
            format!(
                "this job is {} — only ended jobs can be replayed",
                other.as_str()
            ),
            None,
        )),
    }
}

/// The bulk replay's pace: replay i of a call is delivered `i / per_s` seconds later, so a replay
/// storm reaches the lanes at a bounded rate.
pub fn replay_delay_s(i: usize, per_s: u32) -> u32 {
    (i as u32) / per_s.max(1)
}

/// The most jobs one bulk replay call takes.
pub const MAX_BULK_REPLAY: u32 = 100;

/// `POST /api/dlq/:id/replay` and the bulk replay's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayAck {
    pub replayed: Vec<Replayed>,
    /// Matching jobs left for another call (the bulk replay takes at most 100 per call).
    #[serde(default)]
    pub more: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Replayed {
    pub original: String,
    pub job_id: String,
    pub poll_url: String,
}

/// The DLQ list's cursor (ended time, id), newest first.
pub fn dlq_cursor(completed_at: i64, id: &str) -> Cursor {
    Cursor {
        created_at: completed_at,
        id: id.to_owned(),
    }
}

/// The first `n` characters of an input, on one line.
pub fn preview(text: &str, n: usize) -> String {
    let one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(n + 1)
        .collect();
    if one_line.chars().count() > n {
        format!("{}…", one_line.chars().take(n).collect::<String>())
    } else {
        one_line
    }
}

// ---------------------------------------------------------------------------------------------
// The queries (one place, so `EXPLAIN QUERY PLAN` can be checked against the real text)

pub mod sql {
    /// A user's usage by day, model and mode in a range (?1 user, ?2 from, ?3 to).
    pub const USAGE: &str = "SELECT created_at / 86400000 AS day, model, mode, COUNT(*) AS jobs, \
         SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens, \
         SUM(cache_write_tokens) AS cache_write_tokens, SUM(cache_read_tokens) AS cache_read_tokens, \
         SUM(CASE WHEN cost_unknown = 0 THEN cost_micros ELSE 0 END) AS cost_micros, \
         SUM(cost_unknown) AS cost_unknown \
         FROM jobs WHERE user_id = ?1 AND created_at >= ?2 AND created_at < ?3 \
         GROUP BY day, model, mode";
    /// A user's spending since ?2 (the daily cap).
    pub const SPENT: &str = "SELECT COALESCE(SUM(cost_micros), 0) AS spent FROM jobs \
         WHERE user_id = ?1 AND created_at >= ?2";
    /// Jobs that ended in the metrics window (?1 from, ?2 to), at most ?3.
    pub const ENDED: &str = "SELECT status, model, created_at, started_at, completed_at, \
         input_tokens, output_tokens, cache_write_tokens, cache_read_tokens, cost_micros \
         FROM jobs WHERE completed_at >= ?1 AND completed_at < ?2 LIMIT ?3";
    /// Pending and in-flight work per lane.
    pub const PENDING: &str = "SELECT lane, status, COUNT(*) AS n, MIN(created_at) AS oldest \
         FROM jobs WHERE status IN ('queued','running','submitted') GROUP BY status, lane";
    /// Dead letters now.
    /// (A dead letter that was replayed or discarded is handled: it no longer counts.)
    pub const DEAD_NOW: &str = "SELECT COUNT(*) AS n FROM jobs INDEXED BY idx_jobs_dead_open \
         WHERE status = 'dead_lettered' AND discarded_at IS NULL AND replayed_to IS NULL";
    /// Failed / dead-lettered jobs still to classify.
    /// (Named: without statistics the planner would walk every failed job by status instead.)
    pub const UNCLASSIFIED: &str = "SELECT id, error FROM jobs INDEXED BY idx_jobs_unclassified \
         WHERE error_class IS NULL AND status IN ('failed','dead_lettered') LIMIT 500";
    /// A user's jobs, newest first, after a cursor: ?1 user; ?2 status, ?3 lane, ?4 kind (each
    /// NULL for any); ?5, ?6 the cursor's created_at and id; ?7 the limit.
    pub fn jobs_list(columns: &str) -> String {
        format!(
            "SELECT {columns} FROM jobs WHERE user_id = ?1 \
             AND (?2 IS NULL OR status = ?2) AND (?3 IS NULL OR lane = ?3) AND (?4 IS NULL OR kind = ?4) \
             AND (created_at < ?5 OR (created_at = ?5 AND id < ?6)) \
             ORDER BY created_at DESC, id DESC LIMIT ?7"
        )
    }

    /// A user's uploads with their progress, newest first: ?1 user; ?2, ?3 the cursor; ?4 limit.
    pub fn uploads_list() -> String {
        format!(
            "SELECT b.id, b.mode, b.template, b.total, b.created_at, b.canceled_at, \
             (SELECT COUNT(*) FROM jobs j WHERE j.batch_id = b.id AND j.status IN ({})) AS done, \
             (SELECT COUNT(*) FROM jobs j WHERE j.batch_id = b.id AND j.status = 'completed') AS completed, \
             (SELECT COALESCE(SUM(cost_micros), 0) FROM jobs j WHERE j.batch_id = b.id) AS cost \
             FROM batches b WHERE b.user_id = ?1 \
             AND (b.created_at < ?2 OR (b.created_at = ?2 AND b.id < ?3)) \
             ORDER BY b.created_at DESC, b.id DESC LIMIT ?4",
            crate::status::Status::terminal_sql_list()
        )
    }

    /// The metrics series since ?1, at most ?2 rows, newest first.
    pub const METRICS_SERIES: &str =
        "SELECT at, body FROM metrics WHERE at >= ?1 ORDER BY at DESC LIMIT ?2";
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-12-01.
    const NOW_TEST: i64 = 1_796_083_200_000;
    use proptest::prelude::*;

    #[test]
    fn error_classes_from_stored_errors() {
        let cases = [
            (
                "attempt 3 failed, retrying in 4 s: Anthropic API 529: Overloaded",
                ErrorClass::Overloaded,
            ),
            ("Anthropic API 429: rate limited", ErrorClass::RateLimited),
            ("Anthropic API 500: boom", ErrorClass::ServerError),
            (
                "Anthropic API 400: prompt is too long",
                ErrorClass::InvalidRequest,
            ),
            (
                "the call to the Anthropic API timed out",
                ErrorClass::Timeout,
            ),
            (
                "network error calling the Anthropic API: reset",
                ErrorClass::Network,
            ),
            ("the batch request expired", ErrorClass::Expired),
            ("the answer could not be read", ErrorClass::Unreadable),
            ("retries exhausted", ErrorClass::Other),
        ];
        for (text, class) in cases {
            assert_eq!(ErrorClass::of(text), class, "{text}");
            assert_eq!(ErrorClass::parse(class.as_str()), Some(class));
        }
    }

    #[test]
    fn nearest_rank_percentiles() {
        let p = Percentiles::of((1..=100).rev().collect());
        assert_eq!((p.p50, p.p95, p.p99), (Some(50), Some(95), Some(99)));
        let one = Percentiles::of(vec![7]);
        assert_eq!((one.p50, one.p95, one.p99), (Some(7), Some(7), Some(7)));
        assert_eq!(Percentiles::of(vec![]), Percentiles::default());
        let p = Percentiles::of(vec![10, 20, 30, 40]);
        assert_eq!((p.p50, p.p95), (Some(20), Some(40)));
    }

    proptest! {
        #[test]
        fn percentiles_are_samples_and_ordered(v in proptest::collection::vec(0i64..1_000_000, 1..300)) {
            let p = Percentiles::of(v.clone());
            let (a, b, c) = (p.p50.unwrap(), p.p95.unwrap(), p.p99.unwrap());
            prop_assert!(a <= b && b <= c);
            for (x, pct) in [(a, 50usize), (b, 95), (c, 99)] {
                prop_assert!(v.contains(&x));
                // At least pct% of the samples are ≤ x, and fewer than pct% are < x.
                let le = v.iter().filter(|s| **s <= x).count();
                let lt = v.iter().filter(|s| **s < x).count();
                prop_assert!(le * 100 >= v.len() * pct);
                prop_assert!(lt * 100 < v.len() * pct);
            }
        }

        #[test]
        fn days_round_trip(d in -800_000i64..800_000) {
            let (y, m, day) = civil_from_days(d);
            prop_assert_eq!(days_from_civil(y, m, day), d);
            if (0..=9999).contains(&y) {
                prop_assert_eq!(parse_day(&day_of(d * DAY_MS)), Some(d * DAY_MS));
            }
        }

        #[test]
        fn dlq_alert_fires_once_per_crossing(counts in proptest::collection::vec(0u64..20, 1..60), threshold in 0u64..10) {
            let mut above = false;
            let mut fired = 0;
            let mut crossings = 0;
            let mut prev = 0u64;
            for c in counts {
                let (now_above, fire) = dlq_crossing(above, c, threshold);
                if fire { fired += 1; }
                if prev <= threshold && c > threshold { crossings += 1; }
                above = now_above;
                prev = c;
            }
            prop_assert_eq!(fired, crossings);
        }
    }

    #[test]
    fn dates() {
        assert_eq!(day_of(0), "1970-01-01");
        assert_eq!(
            parse_day("2026-11-29"),
            Some(days_from_civil(2026, 11, 29) * DAY_MS)
        );
        assert_eq!(day_of(parse_day("2024-02-29").unwrap()), "2024-02-29");
        for bad in [
            "2026-02-30",
            "2026-13-01",
            "2026-1-01",
            "",
            "yesterday",
            "2026-11-00",
        ] {
            assert_eq!(parse_day(bad), None, "{bad}");
        }
    }

    fn g(day: i64, model: &str, mode: &str, cost: u64, cw: u64, cr: u64) -> UsageGroup {
        UsageGroup {
            day,
            model: Some(model.into()),
            mode: mode.into(),
            jobs: 1,
            input_tokens: 100,
            output_tokens: 10,
            cache_write_tokens: cw,
            cache_read_tokens: cr,
            cost_micros: cost,
            cost_unknown: 0,
        }
    }

    #[test]
    fn usage_report_totals_days_and_savings() {
        let now = parse_day("2026-11-29").unwrap() + 3_600_000;
        let q = UsageQuery::parse(Some("2026-11-27"), None, None, "ann", false, now).unwrap();
        let d = parse_day("2026-11-27").unwrap() / DAY_MS;
        let groups = [
            g(d, "claude-sonnet-5-5", "sync", 1_000, 0, 0),
            g(d, "claude-sonnet-5-5", "batch", 500, 0, 0),
            g(d + 2, "claude-haiku-5-5", "sync", 7, 0, 1_000_000),
        ];
        let r = UsageReport::build(&q, &groups, DailyBudget::default());
        assert_eq!(
            (r.from.as_str(), r.to.as_str()),
            ("2026-11-27", "2026-11-29")
        );
        assert_eq!(r.days.len(), 3);
        assert_eq!(
            r.days.iter().map(|d| d.cost_micros).collect::<Vec<_>>(),
            [1_500, 0, 7]
        );
        assert_eq!(r.totals.cost_micros, 1_507);
        assert_eq!(r.totals.jobs, 3);
        assert_eq!(
            r.rows.len(),
            2,
            "sync and batch of one model and day share a row"
        );
        assert_eq!(r.rows[0].totals.cost_micros, 1_500);
        assert_eq!(r.savings.batch_micros, 500);
        // 1 MTok read on Haiku 5.5 ($0.10 input, reads at 0.1×): saved $0.09.
        assert_eq!(r.savings.cache_micros, 90_000);
        let csv = r.to_csv();
        assert!(csv.starts_with("day,model,jobs,"));
        assert!(
            csv.contains("2026-11-27,claude-sonnet-5-5,2,200,20,0,0,0.001500\n"),
            "{csv}"
        );
        assert_eq!(csv.lines().count(), 3);
    }

    #[test]
    fn usage_query_rules() {
        let now = parse_day("2026-11-29").unwrap();
        let q = UsageQuery::parse(None, None, None, "ann", false, now).unwrap();
        assert_eq!((q.to_ms - q.from_ms) / DAY_MS, 30);
        assert_eq!(q.to_ms, now + DAY_MS);
        let e = UsageQuery::parse(None, None, Some("bob"), "ann", false, now).unwrap_err();
        assert_eq!(e.status, 403);
        assert_eq!(
            UsageQuery::parse(None, None, Some("bob"), "ann", true, now)
                .unwrap()
                .user_id,
            "bob"
        );
        assert_eq!(
            UsageQuery::parse(Some("x"), None, None, "a", false, now)
                .unwrap_err()
                .status,
            400
        );
        assert_eq!(
            UsageQuery::parse(
                Some("2026-11-29"),
                Some("2026-11-28"),
                None,
                "a",
                false,
                now
            )
            .unwrap_err()
            .status,
            400
        );
        assert!(UsageQuery::parse(Some("2020-01-01"), None, None, "a", false, now).is_err());
    }

    #[test]
    fn daily_cap_and_soft_threshold() {
        assert!(check_daily_cap(999, Some(1_000)).is_ok());
        let e = check_daily_cap(1_000, Some(1_000)).unwrap_err();
        assert_eq!(
            (e.status, e.body.code.as_str()),
            (429, "daily_budget_exceeded")
        );
        assert!(e.body.error.contains("$0.001000"));
        assert!(check_daily_cap(u64::MAX, None).is_ok());
        assert!(soft_reached(5, Some(5)) && !soft_reached(4, Some(5)) && !soft_reached(9, None));
        let s = BudgetSetting::parse(
            br#"{"user_id":"ann","daily_cap_micros":5000,"soft_micros":null}"#,
        )
        .unwrap();
        assert_eq!((s.daily_cap_micros, s.soft_micros), (Some(5000), None));
        for bad in [
            &br#"{"user_id":"ann","daily_cap_micros":-1}"#[..],
            br#"{"user_id":"ann","daily_cap_micros":"5"}"#,
            br#"{"daily_cap_micros":5}"#,
            br#"{"user_id":"ann","cap":5}"#,
        ] {
            assert_eq!(BudgetSetting::parse(bad).unwrap_err().status, 400);
        }
    }

    #[test]
    fn replay_rules() {
        assert!(check_replayable(Status::DeadLettered, None).is_ok());
        assert!(check_replayable(Status::Failed, None).is_ok());
        assert_eq!(
            check_replayable(Status::Completed, None)
                .unwrap_err()
                .status,
            409
        );
        assert_eq!(
            check_replayable(Status::Running, None).unwrap_err().status,
            409
        );
        assert_eq!(
            check_replayable(Status::DeadLettered, Some("j2"))
                .unwrap_err()
                .status,
            409
        );
        let e = ReplayEdit::parse(br#"{"model":"claude-haiku-5-5","max_tokens":50}"#, NOW_TEST)
            .unwrap();
        assert_eq!(
            (e.model.as_deref(), e.max_tokens),
            (Some("claude-haiku-5-5"), Some(50))
        );
        assert!(e.check_kind(Kind::Prompt).is_ok());
        assert_eq!(e.check_kind(Kind::Feedback).unwrap_err().status, 400);
        assert!(ReplayEdit::parse(b"", NOW_TEST).unwrap().is_empty());
        for bad in [
            &br#"{"model":""}"#[..],
            br#"{"max_tokens":0}"#,
            br#"{"temperature":1}"#,
            b"[1]",
            br#"{"model":"a b"}"#,
            br#"{"model":"claude-sonnet-4-5"}"#,
        ] {
            assert_eq!(ReplayEdit::parse(bad, NOW_TEST).unwrap_err().status, 400);
        }
        assert_eq!(
            (0..12).map(|i| replay_delay_s(i, 5)).collect::<Vec<_>>(),
            [0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2]
        );
    }

    #[test]
    fn dlq_filter_sql_and_validation() {
        let f = DlqFilter {
            status: Some("all".into()),
            error_class: Some("overloaded".into()),
            user: Some("ann".into()),
            from: Some(5),
            ..DlqFilter::default()
        };
        f.validate().unwrap();
        let (sql, params) = f.where_sql(1);
        assert_eq!(
            sql,
            "status IN ('dead_lettered','failed') AND discarded_at IS NULL AND error_class = ?1 \
             AND user_id = ?2 AND completed_at >= ?3"
        );
        assert_eq!(params.len(), 3);
        for bad in [
            DlqFilter {
                status: Some("completed".into()),
                ..DlqFilter::default()
            },
            DlqFilter {
                error_class: Some("nope".into()),
                ..DlqFilter::default()
            },
            DlqFilter {
                user: Some("a b".into()),
                ..DlqFilter::default()
            },
        ] {
            assert_eq!(bad.validate().unwrap_err().status, 400);
        }
    }

    #[test]
    fn metrics_from_rows() {
        let ended = |status: &str, created: i64, started: i64, done: i64, cost: u64| EndedJob {
            status: status.into(),
            model: Some("claude-sonnet-5-5".into()),
            created_at: created,
            started_at: Some(started),
            completed_at: done,
            input_tokens: 10,
            output_tokens: 5,
            cache_write_tokens: 0,
            cache_read_tokens: 0,
            cost_micros: cost,
        };
        let rows = [
            ended("completed", 0, 100, 1_000, 3),
            ended("completed", 0, 200, 2_000, 4),
            ended("failed", 0, 0, 10, 0),
            ended("dead_lettered", 0, 0, 10, 0),
        ];
        let pending = [
            PendingGroup {
                lane: "high".into(),
                status: "queued".into(),
                n: 2,
                oldest: 11 * 60_000 - 5_000,
            },
            PendingGroup {
                lane: "bulk".into(),
                status: "submitted".into(),
                n: 3,
                oldest: 0,
            },
        ];
        let at = 11 * 60_000;
        let m = Metrics::compute(&MetricsInput {
            at,
            window_ms: 60_000,
            ended: &rows,
            pending: &pending,
            dead_letters_now: 1,
            budget: &[],
            previous: None,
        });
        assert_eq!((m.completed, m.failed, m.dead_lettered), (2, 1, 1));
        assert_eq!((m.failed_rate, m.dead_letter_rate), (0.25, 0.25));
        assert_eq!(m.end_to_end_ms.p50, Some(1_000));
        assert_eq!(m.run_ms.p99, Some(1_800));
        assert_eq!(m.models[0].cost_micros, 7);
        assert_eq!(m.lanes[0].queued, 2);
        assert_eq!(m.lanes[1].in_flight, 3);
        assert_eq!(m.lanes[1].oldest_pending_ms, Some(at));
        let w = m.warnings();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("bulk"));
    }

    #[test]
    fn budget_use_is_the_difference_over_the_limit() {
        let charge = |r: u64| BudgetCharge {
            class: "sonnet".into(),
            requests: r,
            input_tokens: r * 100,
            output_tokens: 0,
            rpm: 50,
            itpm: 10_000,
            otpm: 1_000,
        };
        let input = |at, budget: &[BudgetCharge], previous| {
            Metrics::compute(&MetricsInput {
                at,
                window_ms: 60_000,
                ended: &[],
                pending: &[],
                dead_letters_now: 0,
                budget,
                previous,
            })
        };
        let first = input(60_000, &[charge(10)], None);
        assert_eq!(first.budget[0].rpm, 0.0, "no baseline yet");
        let second = input(120_000, &[charge(35)], Some(&first));
        assert_eq!(second.budget[0].rpm, 0.5);
        assert_eq!(second.budget[0].itpm, 0.25);
    }

    #[test]
    fn csv_defuses_formulas_and_quotes() {
        assert_eq!(csv_field("=cmd()"), "'=cmd()");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(dollars(1_234_567), "1.234567");
    }

    #[test]
    fn previews_are_one_line_and_bounded() {
        assert_eq!(preview("a\nb", 10), "a b");
        assert_eq!(preview("abcdef", 3), "abc…");
        assert_eq!(preview("ééé", 3), "ééé");
    }
}
