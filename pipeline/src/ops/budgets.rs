//! Per-user budgets: a daily and a monthly cap (UTC) that refuse new jobs (429) and the soft
//! threshold that raises an alert.
//!
//! A cap holds against what is *committed*, not only what was spent: every job, at admission,
//! reserves its worst case ([`crate::pricing::worst_case_micros`]); completion settles the
//! reservation to the real cost, and failure, cancellation and expiry release it. The check and
//! the reservation are one atomic step in the database (the `jobs_admission` trigger of migration
//! 0010 refuses the insert that would cross a cap, so concurrent requests cannot all pass the
//! same check); [`check_caps`] is the same rule, run first so that a request over a cap is
//! refused before anything is written, and used to explain a refusal.

use crate::anthropic::MessagesRequest;
use crate::caps::{BudgetRefusal, Cap};
use crate::money::UsdMicros;
use crate::pricing::Tier;
use crate::status::Mode;
use serde::{Deserialize, Serialize};

use crate::error::ApiError;

/// `PUT /api/usage/budget` (admins): a user's daily and monthly caps and soft threshold in
/// micro-dollars (`null` or absent removes one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BudgetSetting {
    pub user_id: String,
    pub daily_cap_micros: Option<UsdMicros>,
    #[serde(default)]
    pub monthly_cap_micros: Option<UsdMicros>,
    pub soft_micros: Option<UsdMicros>,
    /// The user's weight in the lanes' fair shares ([`crate::fair`]), 1 to 100; `None` is 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_weight: Option<u32>,
}

impl BudgetSetting {
    /// Nothing set: the setting removes the user's budget.
    pub fn is_empty(&self) -> bool {
        self.daily_cap_micros.is_none()
            && self.monthly_cap_micros.is_none()
            && self.soft_micros.is_none()
            && self.share_weight.is_none()
    }
}

/// The most weight a user's fair share can be given.
pub const MAX_SHARE_WEIGHT: u64 = 100;

impl BudgetSetting {
    pub fn parse(body: &[u8]) -> Result<BudgetSetting, ApiError> {
        let obj = crate::error::json_object(body)?;
        let user = obj.get("user_id").and_then(|v| v.as_str()).ok_or_else(|| {
            ApiError::bad_request("invalid_user", "user_id must be a string", Some("user_id"))
        })?;
        let user = crate::identity::UserId::parse(user)
            .map_err(|e| ApiError::bad_request("invalid_user", e, Some("user_id")))?;
        let amount = |field: &str| -> Result<Option<UsdMicros>, ApiError> {
            match obj.get(field) {
                None | Some(serde_json::Value::Null) => Ok(None),
                Some(v) => v
                    .as_u64()
                    .filter(|n| *n <= 1_000_000_000_000)
                    .map(|n| Some(UsdMicros::new(n)))
                    .ok_or_else(|| {
                        ApiError::bad_request(
                            "invalid_amount",
                            format!("{field} must be a whole number of micro-dollars (0 to 10^12) or null"),
                            Some(field),
                        )
                    }),
            }
        };
        crate::error::reject_unknown_fields(
            &obj,
            &[
                "user_id",
                "daily_cap_micros",
                "monthly_cap_micros",
                "soft_micros",
                "share_weight",
            ],
        )?;
        let share_weight = match obj.get("share_weight") {
            None | Some(serde_json::Value::Null) => None,
            Some(v) => Some(
                v.as_u64()
                    .filter(|w| (1..=MAX_SHARE_WEIGHT).contains(w))
                    .ok_or_else(|| {
                        ApiError::bad_request(
                            "invalid_field",
                            format!("share_weight must be a whole number from 1 to {MAX_SHARE_WEIGHT} or null"),
                            Some("share_weight"),
                        )
                    })? as u32,
            ),
        };
        Ok(BudgetSetting {
            user_id: user.as_str().to_owned(),
            daily_cap_micros: amount("daily_cap_micros")?,
            monthly_cap_micros: amount("monthly_cap_micros")?,
            share_weight,
            soft_micros: amount("soft_micros")?,
        })
    }
}

/// The admission rule: a request that needs `need` at its worst case fits when, under each cap
/// the user has, what is committed plus `need` stays within it. The daily cap is checked first.
pub fn check_caps(b: &DailyBudget, need: UsdMicros) -> Result<(), BudgetRefusal> {
    let caps = [
        (Cap::Daily, b.daily_cap_micros, b.committed_today_micros),
        (Cap::Monthly, b.monthly_cap_micros, b.committed_month_micros),
    ];
    for (cap, limit, committed) in caps {
        if let Some(limit) = limit {
            if committed + need > limit {
                return Err(BudgetRefusal {
                    cap,
                    cap_micros: limit,
                    committed_micros: committed,
                    left_micros: limit.saturating_sub(committed),
                    needed_micros: need,
                });
            }
        }
    }
    Ok(())
}

/// What a job reserves at admission: the most `req` can cost on `mode`
/// ([`crate::pricing::worst_case_micros`] over [`crate::tokens::worst_input_tokens`]), at the
/// dearest model it may fall back to along `chain`. `document_pages` as
/// [`crate::tokens::worst_input_tokens`] takes it.
pub fn worst_case(
    req: &MessagesRequest,
    document_pages: Option<u32>,
    mode: Mode,
    chain: &[String],
    now_ms: i64,
) -> UsdMicros {
    let tier = match mode {
        Mode::Sync => Tier::Standard,
        Mode::Batch => Tier::Batch,
    };
    let models = crate::retry::reachable_models(&req.model, chain);
    let input = crate::tokens::worst_input_tokens(req, document_pages);
    crate::pricing::worst_case_micros(req, input, tier, &models, now_ms)
}

/// The keys of the `spend` table's rows that a job created at `at_ms` commits to: its UTC day
/// (`d:<days since the epoch>`) and month (`m:YYYY-MM`) — spelled as migration 0010's triggers
/// spell them.
pub fn periods(at_ms: i64) -> (String, String) {
    let day = at_ms.div_euclid(crate::clock::DAY_MS);
    let month = chrono::DateTime::from_timestamp_millis(at_ms)
        .unwrap_or_default()
        .format("%Y-%m");
    (format!("d:{day}"), format!("m:{month}"))
}

/// The refusal to report when the database refused an insert that the check before it let
/// through (a concurrent request committed first): the cap it now crosses, or — when it fits
/// again already — the tighter of the two.
pub fn explain_refusal(b: &DailyBudget, need: UsdMicros) -> BudgetRefusal {
    check_caps(b, need).err().unwrap_or_else(|| {
        let left = |cap: Option<UsdMicros>, committed: UsdMicros| {
            cap.map(|c| (c.saturating_sub(committed), c, committed))
        };
        let (cap, (left, limit, committed)) = [
            (
                Cap::Daily,
                left(b.daily_cap_micros, b.committed_today_micros),
            ),
            (
                Cap::Monthly,
                left(b.monthly_cap_micros, b.committed_month_micros),
            ),
        ]
        .into_iter()
        .filter_map(|(c, l)| Some((c, l?)))
        .min_by_key(|(_, (left, _, _))| *left)
        .unwrap_or((
            Cap::Daily,
            (UsdMicros::ZERO, UsdMicros::ZERO, UsdMicros::ZERO),
        ));
        BudgetRefusal {
            cap,
            cap_micros: limit,
            committed_micros: committed,
            left_micros: left,
            needed_micros: need,
        }
    })
}

/// Per-user limits on the producers, so one user cannot fill the lanes or flood the API: at
/// most `max_queued` jobs waiting and `max_per_min` jobs made in the last minute (0: no limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserLimits {
    pub max_queued: u64,
    pub max_per_min: u64,
}

/// The admission rule of [`UserLimits`]: `queued` jobs of the user waiting, `last_minute` made
/// in the minute before, `adding` this request would make. Over a limit is a 429 with a
/// `retry-after`: a minute for the rate (the window), ten seconds for the queue (it drains).
pub fn check_user_limits(
    l: &UserLimits,
    queued: u64,
    last_minute: u64,
    adding: u64,
) -> Result<(), ApiError> {
    let over = |limit: u64, now: u64| limit > 0 && now + adding > limit;
    let (code, message, after) = if over(l.max_per_min, last_minute) {
        (
            "rate_limited",
            format!(
                "at most {} jobs a minute per user: {last_minute} were made in the last minute",
                l.max_per_min
            ),
            60,
        )
    } else if over(l.max_queued, queued) {
        (
            "too_many_queued",
            format!(
                "at most {} jobs waiting per user: {queued} of yours are waiting",
                l.max_queued
            ),
            10,
        )
    } else {
        return Ok(());
    };
    let mut e = ApiError::new(429, code, message, None);
    e.body.retry_after_s = Some(after);
    Err(e)
}

/// Whether today's spending reached the soft threshold (the alert is raised once per day).
pub fn soft_reached(spent_today: UsdMicros, soft: Option<UsdMicros>) -> bool {
    soft.is_some_and(|s| spent_today >= s)
}

/// The user's budget: the caps, today's spending, and what is committed today and this month
/// (spent plus the reservations of the jobs not yet ended).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DailyBudget {
    pub daily_cap_micros: Option<UsdMicros>,
    #[serde(default)]
    pub monthly_cap_micros: Option<UsdMicros>,
    pub soft_micros: Option<UsdMicros>,
    pub spent_today_micros: UsdMicros,
    #[serde(default)]
    pub committed_today_micros: UsdMicros,
    #[serde(default)]
    pub committed_month_micros: UsdMicros,
    /// The user's fair-share weight, when an admin set one.
    #[serde(default)]
    pub share_weight: Option<u32>,
}

impl DailyBudget {
    /// No cap and no threshold: nothing to check.
    pub fn is_unlimited(&self) -> bool {
        self.daily_cap_micros.is_none()
            && self.monthly_cap_micros.is_none()
            && self.soft_micros.is_none()
    }
}

#[cfg(test)]
mod tests;

/// `PUT /api/usage/tags/budget`: a tag's daily cap in micro-dollars (`null` removes it). The
/// jobs carrying the tag may commit at most this much per UTC day of their creation: what they
/// cost plus what the live ones reserve (the database refuses the job that would cross it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TagBudgetSetting {
    pub tag: String,
    pub daily_cap_micros: Option<UsdMicros>,
}

impl TagBudgetSetting {
    pub fn parse(body: &[u8]) -> Result<TagBudgetSetting, ApiError> {
        let obj = crate::error::json_object(body)?;
        crate::error::reject_unknown_fields(&obj, &["tag", "daily_cap_micros"])?;
        let tag = obj.get("tag").and_then(|v| v.as_str()).ok_or_else(|| {
            ApiError::bad_request(
                "invalid_field",
                "tag must be a key=value string",
                Some("tag"),
            )
        })?;
        let tag = crate::tags::parse_filter(tag)
            .map_err(|e| ApiError::bad_request("invalid_field", e.body.error, Some("tag")))?;
        let daily_cap_micros = match obj.get("daily_cap_micros") {
            None | Some(serde_json::Value::Null) => None,
            Some(v) => Some(
                v.as_u64()
                    .filter(|n| *n <= 1_000_000_000_000)
                    .map(UsdMicros::new)
                    .ok_or_else(|| {
                        ApiError::bad_request(
                            "invalid_amount",
                            "daily_cap_micros must be a whole number of micro-dollars (0 to 10^12) or null",
                            Some("daily_cap_micros"),
                        )
                    })?,
            ),
        };
        Ok(TagBudgetSetting {
            tag,
            daily_cap_micros,
        })
    }
}

/// A tag's cap and what its jobs have committed today (`GET /api/usage/tags/budgets`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TagBudgetView {
    pub tag: String,
    pub daily_cap_micros: UsdMicros,
    /// Cost of today's jobs with the tag plus the reservations of the live ones.
    pub committed_micros: UsdMicros,
    pub left_micros: UsdMicros,
}

impl TagBudgetView {
    pub fn new(tag: String, cap: UsdMicros, committed: UsdMicros) -> TagBudgetView {
        TagBudgetView {
            tag,
            daily_cap_micros: cap,
            committed_micros: committed,
            left_micros: UsdMicros::new(cap.micros().saturating_sub(committed.micros())),
        }
    }

    /// The 429 of a job whose worst case (`need`) does not fit under this tag's cap.
    pub fn refusal(&self, need: UsdMicros) -> ApiError {
        ApiError::new(
            429,
            "tag_budget_exceeded",
            format!(
                "the tag {} has {} left of its {} daily cap, and this job may cost up to {}",
                self.tag,
                self.left_micros.usd(),
                self.daily_cap_micros.usd(),
                need.usd()
            ),
            Some("tags"),
        )
    }
}

#[cfg(test)]
mod tag_budget_tests {
    use super::*;

    #[test]
    fn a_tag_budget_names_a_valid_tag_and_a_whole_amount() {
        let s = TagBudgetSetting::parse(br#"{"tag":"team=search","daily_cap_micros":5000000}"#)
            .unwrap();
        assert_eq!(s.daily_cap_micros, Some(UsdMicros::new(5_000_000)));
        assert_eq!(
            TagBudgetSetting::parse(br#"{"tag":"team=search","daily_cap_micros":null}"#)
                .unwrap()
                .daily_cap_micros,
            None
        );
        for bad in [
            &br#"{"tag":"team","daily_cap_micros":1}"#[..],
            br#"{"tag":"team=search","daily_cap_micros":-1}"#,
            br#"{"tag":"team=search","daily_cap_micros":1.5}"#,
            br#"{"tag":"team=search","cap":1}"#,
        ] {
            let e = TagBudgetSetting::parse(bad).unwrap_err();
            assert_eq!(e.status, 400, "{}", String::from_utf8_lossy(bad));
        }
        let v = TagBudgetView::new(
            "team=search".into(),
            UsdMicros::new(100),
            UsdMicros::new(130),
        );
        assert_eq!(v.left_micros, UsdMicros::new(0));
        let e = v.refusal(UsdMicros::new(20));
        assert_eq!((e.status, e.body.field.as_deref()), (429, Some("tags")));
    }
}
