//! The Usage & Cost Admin API's cost report, as far as reconciliation reads it (issue 20,
//! part 3): `GET /v1/organizations/cost_report`, with an Admin API key (`x-api-key:
//! sk-ant-admin01-…`) and `anthropic-version: 2026-10-21` (`super::API_VERSION`), no beta
//! header.
//!
//! From <https://platform.claude.com/docs/en/manage-claude/usage-cost-api> and the reference
//! <https://platform.claude.com/docs/en/api/admin/cost_report/retrieve> (read 2026-12-02;
//! the guide now calls these endpoints "legacy" next to the beta Usage and Cost Analytics API,
//! with no end date):
//! - `starting_at` (required, RFC 3339) and `ending_at`; `bucket_width` is `1d` only (daily
//!   buckets, UTC); `group_by[]` is `workspace_id` and/or `description` — only with
//!   `description` do results carry `model`, `service_tier` (`standard` or `batch`),
//!   `cost_type` and `token_type`; `limit` counts buckets (1–31, default 7); `page` takes the
//!   previous answer's `next_page`.
//! - the answer is `{data: [{starting_at, ending_at, results: [...]}], has_more, next_page}`,
//!   one bucket per day, oldest first, days without cost included with empty `results`.
//! - `amount` is "Cost amount in lowest currency units (e.g. cents) as a decimal string. For
//!   example, `"123.45"` in `"USD"` represents `$1.23`"; `currency` is "Currently always
//!   `"USD"`".
//! - data "typically appears within 5 minutes of API request completion".

use serde::{Deserialize, Serialize};

/// The path of the cost report.
pub const COST_REPORT_PATH: &str = "/v1/organizations/cost_report";
/// Buckets per page at most (the `limit` parameter's maximum).
pub const MAX_COST_BUCKETS: u32 = 31;

/// `GET /v1/organizations/cost_report`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostReport {
    pub data: Vec<CostBucket>,
    pub has_more: bool,
    #[serde(default)]
    pub next_page: Option<String>,
}

/// One day of the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostBucket {
    /// RFC 3339, inclusive.
    pub starting_at: String,
    /// RFC 3339, exclusive.
    pub ending_at: String,
    pub results: Vec<CostResult>,
}

/// One cost line of a day (the fields reconciliation reads; the others are ignored).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostResult {
    /// Cents, as a decimal string.
    pub amount: String,
    pub currency: String,
    #[serde(default)]
    pub description: Option<String>,
    /// `tokens`, `web_search`, `code_execution`, `session_usage`, or null.
    #[serde(default)]
    pub cost_type: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    /// `standard` or `batch` (null unless grouped by description).
    #[serde(default)]
    pub service_tier: Option<String>,
    #[serde(default)]
    pub token_type: Option<String>,
    #[serde(default)]
    pub workspace_id: Option<String>,
}

/// A cents amount as micro-dollars (1 cent = 10,000 µ$), rounded half up past the fourth
/// decimal of a cent. `None` for anything but a plain non-negative decimal.
pub fn cents_to_micros(amount: &str) -> Option<u64> {
    let (whole, frac) = amount.split_once('.').unwrap_or((amount, ""));
    let digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(frac) {
        return None;
    }
    let mut micros = whole.parse::<u64>().ok()?.checked_mul(10_000)?;
    let f: Vec<u64> = frac.bytes().map(|b| u64::from(b - b'0')).collect();
    for (i, d) in f.iter().take(4).enumerate() {
        micros += d * 10u64.pow(3 - i as u32);
    }
    if f.get(4).is_some_and(|&d| d >= 5) {
        micros += 1;
    }
    Some(micros)
}
