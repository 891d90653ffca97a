//! Admins' form for a user's budget: daily and monthly caps, soft threshold.

use leptos::prelude::*;
use pipeline::money::{parse_dollars, UsdMicros};
use pipeline::ops::budgets::BudgetSetting;
use pipeline::ops::usage::UsageReport;

use super::budget_text::saved_text;
use crate::api::ApiError;

/// A user's daily and monthly caps and soft threshold, typed in dollars (empty removes one). Saved through
/// `save`, whose version the report follows.
#[component]
pub fn BudgetForm(
    report: LocalResource<Result<UsageReport, ApiError>>,
    /// The user typed in the filter, if any (else the report's user is meant).
    user: RwSignal<String>,
    save: Action<BudgetSetting, Result<BudgetSetting, ApiError>>,
) -> impl IntoView {
    let cap = RwSignal::new(String::new());
    let soft = RwSignal::new(String::new());
    let monthly = RwSignal::new(String::new());
    let local_error = RwSignal::new(None::<String>);
    let target = move || {
        let typed = user.get().trim().to_string();
        if typed.is_empty() {
            report
                .get()
                .and_then(|r| r.ok())
                .map(|r| r.user_id)
                .unwrap_or_default()
        } else {
            typed
        }
    };
    // The fields start from the budget the report shows.
    Effect::new(move |_| {
        if let Some(Ok(r)) = report.get() {
            let plain = |v: Option<UsdMicros>| v.map(UsdMicros::dollars).unwrap_or_default();
            cap.set(plain(r.budget.daily_cap_micros));
            soft.set(plain(r.budget.soft_micros));
            monthly.set(plain(r.budget.monthly_cap_micros));
        }
    });
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let parsed = parse_dollars(&cap.get()).and_then(|c| {
            Ok((
                c,
                parse_dollars(&monthly.get())?,
                parse_dollars(&soft.get())?,
            ))
        });
        match parsed {
            Ok((daily_cap_micros, monthly_cap_micros, soft_micros)) => {
                local_error.set(None);
                save.dispatch(BudgetSetting {
                    user_id: target(),
                    daily_cap_micros,
                    monthly_cap_micros,
                    soft_micros,
                    // The form sets caps and keeps the weight (set through the API).
                    share_weight: report
                        .get()
                        .and_then(|r| r.ok())
                        .and_then(|r| r.budget.share_weight),
                });
            }
            Err(e) => local_error.set(Some(e)),
        }
    };
    let result = move || match local_error.get() {
        Some(e) => Some((e, "error")),
        None => save.value().get().map(|r| match r {
            Ok(s) => (saved_text(&s), "ok"),
            Err(e) => (e.to_string(), "error"),
        }),
    };
    let saving = save.pending();
    let waiting = crate::takeover::waiting();
    view! {
        <form class="card form budget-form" on:submit=submit>
            <h2>"Budget for " {target}</h2>
            <div class="row">
                <label>"Daily cap ($) "
                    <input data-testid="budget-cap" size="10" inputmode="decimal" placeholder="none"
                        prop:value=cap on:input=move |ev| cap.set(event_target_value(&ev)) />
                </label>
                <label>"Monthly cap ($) "
                    <input data-testid="budget-monthly" size="10" inputmode="decimal" placeholder="none"
                        prop:value=monthly on:input=move |ev| monthly.set(event_target_value(&ev)) />
                </label>
                <label>"Soft threshold ($) "
                    <input data-testid="budget-soft" size="10" inputmode="decimal" placeholder="none"
                        prop:value=soft on:input=move |ev| soft.set(event_target_value(&ev)) />
                </label>
            </div>
            <div class="actions">
                <button type="submit" data-testid="budget-save" disabled=move || saving.get() || waiting.get()>
                    "Save budget"
                </button>
                {move || result().map(|(text, class)| view! {
                    <span class=class data-testid="budget-result">{text}</span>
                })}
            </div>
        </form>
    }
}
