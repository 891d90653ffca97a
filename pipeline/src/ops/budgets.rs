//! Per-user daily budgets: the cap that refuses new jobs (429) and the soft threshold that
//! raises an alert.

use crate::money::UsdMicros;
use serde::{Deserialize, Serialize};

use crate::error::ApiError;

/// `PUT /api/usage/budget` (admins): a user's daily cap and soft threshold in micro-dollars
/// (`null` removes one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BudgetSetting {
    pub user_id: String,
    pub daily_cap_micros: Option<UsdMicros>,
    pub soft_micros: Option<UsdMicros>,
}

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
                    .map(|n| Some(UsdMicros(n)))
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
pub fn check_daily_cap(spent_today: UsdMicros, cap: Option<UsdMicros>) -> Result<(), ApiError> {
    match cap {
        Some(cap) if spent_today >= cap => Err(ApiError::new(
            429,
            "daily_budget_exceeded",
            format!(
                "your daily budget of ${} is spent (${} today); new jobs are accepted again after midnight UTC",
                cap.dollars(),
                spent_today.dollars()
            ),
            None,
        )),
        _ => Ok(()),
    }
}

/// Whether today's spending reached the soft threshold (the alert is raised once per day).
pub fn soft_reached(spent_today: UsdMicros, soft: Option<UsdMicros>) -> bool {
    soft.is_some_and(|s| spent_today >= s)
}

/// The user's daily budget and today's spending.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DailyBudget {
    pub daily_cap_micros: Option<UsdMicros>,
    pub soft_micros: Option<UsdMicros>,
    pub spent_today_micros: UsdMicros,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn daily_cap_and_soft_threshold() {
        let m = UsdMicros;
        assert!(check_daily_cap(m(999), Some(m(1_000))).is_ok());
        let e = check_daily_cap(m(1_000), Some(m(1_000))).unwrap_err();
        assert_eq!(
            (e.status, e.body.code.as_str()),
            (429, "daily_budget_exceeded")
        );
        assert!(e.body.error.contains("$0.001000"));
        assert!(check_daily_cap(m(u64::MAX), None).is_ok());
        assert!(
            soft_reached(m(5), Some(m(5)))
                && !soft_reached(m(4), Some(m(5)))
                && !soft_reached(m(9), None)
        );
        let s = BudgetSetting::parse(
            br#"{"user_id":"ann","daily_cap_micros":5000,"soft_micros":null}"#,
        )
        .unwrap();
        assert_eq!((s.daily_cap_micros, s.soft_micros), (Some(m(5000)), None));
        for bad in [
            &br#"{"user_id":"ann","daily_cap_micros":-1}"#[..],
            br#"{"user_id":"ann","daily_cap_micros":"5"}"#,
            br#"{"daily_cap_micros":5}"#,
            br#"{"user_id":"ann","cap":5}"#,
        ] {
            assert_eq!(BudgetSetting::parse(bad).unwrap_err().status, 400);
        }
    }
}
