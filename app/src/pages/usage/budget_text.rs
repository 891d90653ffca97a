//! Budgets as the Usage page words them.

use pipeline::money::UsdMicros;
use pipeline::ops::budgets::{BudgetSetting, DailyBudget};

fn amount(v: Option<UsdMicros>) -> String {
    v.map_or_else(|| "none".to_string(), UsdMicros::usd)
}

/// "cap $5.000000 · monthly none · soft $4.000000 · spent today $0.120000 · committed today
/// $0.300000", or that there is none. Committed is spent plus the worst case of the jobs still
/// running: what the caps are held against.
pub fn budget_text(b: &DailyBudget) -> String {
    let spent = format!("spent today {}", b.spent_today_micros.usd());
    if b.is_unlimited() {
        return format!("none set · {spent}");
    }
    format!(
        "cap {} · monthly {} · soft {} · {spent} · committed today {}, this month {}",
        amount(b.daily_cap_micros),
        amount(b.monthly_cap_micros),
        amount(b.soft_micros),
        b.committed_today_micros.usd(),
        b.committed_month_micros.usd()
    )
}

/// What the budget form says once a budget is saved.
pub fn saved_text(s: &BudgetSetting) -> String {
    format!(
        "saved for {}: cap {}, monthly {}, soft {}",
        s.user_id,
        amount(s.daily_cap_micros),
        amount(s.monthly_cap_micros),
        amount(s.soft_micros)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_reads_as_its_cap_soft_threshold_and_spending() {
        let setting = BudgetSetting {
            user_id: "dora".into(),
            daily_cap_micros: Some(UsdMicros::new(5_000_000)),
            monthly_cap_micros: None,
            soft_micros: None,
            share_weight: None,
        };
        let text = saved_text(&setting);
        assert!(text.starts_with("saved for dora: cap $5"), "{text}");
        assert!(text.ends_with("soft none"), "{text}");
        let none = DailyBudget::default();
        assert!(budget_text(&none).starts_with("none set · spent today $0"));
        let capped = DailyBudget {
            daily_cap_micros: Some(UsdMicros::new(1_000_000)),
            ..none
        };
        assert!(budget_text(&capped).starts_with("cap $1"));
        assert!(budget_text(&capped).contains("monthly none · soft none"));
        let committed = DailyBudget {
            committed_today_micros: UsdMicros::new(250_000),
            ..capped
        };
        assert!(budget_text(&committed).contains("committed today $0.250000"));
    }
}
