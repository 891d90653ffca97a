//! Reconciliation with Anthropic's bill (issue 20, part 3): our own cost per UTC day and model
//! (the usage rollup) against the organization's cost report (`anthropic::admin`), with the
//! lines whose difference passes a threshold flagged — how a wrong price, a lost job or a call
//! paid twice gets noticed.
//!
//! Only token costs are compared (`cost_type` `tokens`, which carry a model); web search, code
//! execution and session costs are summed apart as `other_micros`, since our rollup has none.
//! A day is compared once it has ended and the report has had time to fill (the docs: data
//! "typically appears within 5 minutes"), see [`settled_day`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::anthropic::admin::{cents_to_micros, CostReport};
use crate::clock::{day_of, parse_rfc3339, DAY_MS};

/// A day is compared this long after it ended: the report's usual delay (5 minutes) with room.
pub const SETTLE_MS: i64 = 3600 * 1000;

/// The last UTC day (days since the epoch) that can be compared at `now`.
pub fn settled_day(now: i64) -> i64 {
    (now - SETTLE_MS).div_euclid(DAY_MS) - 1
}

/// Our cost of one day and model, from the rollup.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct OurCost {
    /// Days since the epoch.
    pub day: i64,
    pub model: String,
    pub cost_micros: u64,
}

/// When a difference is flagged: past `abs_micros` and past `rel_permille` of the larger side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Threshold {
    pub abs_micros: u64,
    pub rel_permille: u64,
}

impl Default for Threshold {
    /// One cent and 1 %: below a cent is rounding; 1 % is far from any honest rounding and well
    /// under a wrong price (prices differ by 2× or more between tiers and models).
    fn default() -> Self {
        Threshold {
            abs_micros: 10_000,
            rel_permille: 10,
        }
    }
}

/// One day and model, both sides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReconLine {
    /// `YYYY-MM-DD` (UTC).
    pub day: String,
    pub model: String,
    pub ours_micros: u64,
    pub billed_micros: u64,
    /// Billed minus ours.
    pub diff_micros: i64,
    pub flagged: bool,
}

/// The comparison of a range of days.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Reconciliation {
    pub lines: Vec<ReconLine>,
    pub ours_micros: u64,
    pub billed_micros: u64,
    /// Costs of the report without a model (web search, code execution, sessions).
    pub other_micros: u64,
    pub flagged: usize,
}

/// One reconciliation as kept and shown (`GET /api/reconciliation`): when, over which days, and
/// the comparison.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReconciliationRun {
    /// Epoch ms.
    pub checked_at: i64,
    /// First day compared, `YYYY-MM-DD`.
    pub from: String,
    /// Last day compared, included.
    pub to: String,
    /// A line is flagged past both of these.
    pub threshold_micros: u64,
    pub threshold_permille: u64,
    #[serde(flatten)]
    pub result: Reconciliation,
}

/// The query of the cost report's page for days [`from_day`, `to_day`): daily buckets grouped
/// by description (so the lines carry their model), at most a page of 31, `page` continuing.
pub fn report_query(from_day: i64, to_day: i64, page: Option<&str>) -> String {
    let t = |d: i64| crate::clock::format_rfc3339(d * DAY_MS);
    let mut q = form(&[
        ("starting_at", &t(from_day)),
        ("ending_at", &t(to_day)),
        ("bucket_width", "1d"),
        ("group_by[]", "description"),
        (
            "limit",
            &crate::anthropic::admin::MAX_COST_BUCKETS.to_string(),
        ),
    ]);
    if let Some(p) = page {
        q.push('&');
        q.push_str(&form(&[("page", p)]));
    }
    q
}

/// `k=v&…`, each part encoded as a query needs.
fn form(pairs: &[(&str, &str)]) -> String {
    let mut out = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        out.append_pair(k, v);
    }
    out.finish()
}

/// Why a report cannot be compared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReportError {
    Currency(String),
    Amount(String),
    Day(String),
}

/// Compares `ours` with the report's buckets of days in [`from_day`, `to_day`) (days since the
/// epoch); days outside are ignored on both sides.
pub fn compare(
    ours: &[OurCost],
    reports: &[CostReport],
    from_day: i64,
    to_day: i64,
    threshold: Threshold,
) -> Result<Reconciliation, ReportError> {
    let mut both: BTreeMap<(i64, String), (u64, u64)> = BTreeMap::new();
    let in_range = |d: i64| d >= from_day && d < to_day;
    for o in ours.iter().filter(|o| in_range(o.day) && o.cost_micros > 0) {
        both.entry((o.day, o.model.clone())).or_default().0 += o.cost_micros;
    }
    let mut other = 0;
    for bucket in reports.iter().flat_map(|r| &r.data) {
        let day = parse_rfc3339(&bucket.starting_at)
            .ok_or_else(|| ReportError::Day(bucket.starting_at.clone()))?
            .div_euclid(DAY_MS);
        if !in_range(day) {
            continue;
        }
        for r in &bucket.results {
            if r.currency != "USD" {
                return Err(ReportError::Currency(r.currency.clone()));
            }
            let micros =
                cents_to_micros(&r.amount).ok_or_else(|| ReportError::Amount(r.amount.clone()))?;
            match (&r.model, r.cost_type.as_deref()) {
                (Some(model), Some("tokens") | None) => {
                    both.entry((day, model.clone())).or_default().1 += micros;
                }
                _ => other += micros,
            }
        }
    }
    let mut lines = Vec::with_capacity(both.len());
    for ((day, model), (ours_micros, billed_micros)) in both {
        let diff = billed_micros.abs_diff(ours_micros);
        let larger = billed_micros.max(ours_micros);
        let flagged = diff > threshold.abs_micros
            && diff.saturating_mul(1000) > larger.saturating_mul(threshold.rel_permille);
        lines.push(ReconLine {
            day: day_of(day * DAY_MS),
            model,
            ours_micros,
            billed_micros,
            diff_micros: billed_micros as i64 - ours_micros as i64,
            flagged,
        });
    }
    Ok(Reconciliation {
        ours_micros: lines.iter().map(|l| l.ours_micros).sum(),
        billed_micros: lines.iter().map(|l| l.billed_micros).sum(),
        other_micros: other,
        flagged: lines.iter().filter(|l| l.flagged).count(),
        lines,
    })
}

#[cfg(test)]
mod tests;
