//! Per-user daily budgets: the cap that refuses new jobs (429) and the soft threshold that
//! raises an alert.

use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::money::dollars;

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

/// The user's daily budget and today's spending.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DailyBudget {
    pub daily_cap_micros: Option<u64>,
    pub soft_micros: Option<u64>,
    pub spent_today_micros: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
