//! A user's budget caps and what a refusal under one says: the figures a `budget_exceeded`
//! answer carries in its body (`error::ErrorBody::budget`). Below both the error envelope and
//! the budget rules of `ops::budgets`, which decide when a refusal happens.

use serde::{Deserialize, Serialize};

use crate::money::UsdMicros;

/// Which cap a refusal names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Cap {
    Daily,
    Monthly,
}

impl Cap {
    /// When new jobs fit again under this cap.
    pub fn when_free(self) -> &'static str {
        match self {
            Cap::Daily => "after midnight UTC",
            Cap::Monthly => "on the first of next month (UTC)",
        }
    }
}

/// What a `budget_exceeded` answer carries besides its message: the cap, what is committed
/// against it (spent plus the worst case of the jobs still running), what is left, and what the
/// refused request needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BudgetRefusal {
    pub cap: Cap,
    pub cap_micros: UsdMicros,
    pub committed_micros: UsdMicros,
    pub left_micros: UsdMicros,
    pub needed_micros: UsdMicros,
}

impl Cap {
    /// The cap's name in a sentence ("your daily budget").
    pub fn name(self) -> &'static str {
        match self {
            Cap::Daily => "daily",
            Cap::Monthly => "monthly",
        }
    }
}
