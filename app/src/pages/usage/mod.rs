//! The Usage page (`/ui/usage`): tokens and cost by day and model, cost by tag, budgets, CSV
//! export.

mod budget_form;
mod budget_text;
pub mod cache;
mod range_form;
mod report_view;
mod spenders;
pub mod tags;
mod usage_table;

use leptos::prelude::*;
use pipeline::ops::budgets::BudgetSetting;

use crate::api;
use crate::components::download::save_text;
use crate::components::fetched::fetched;
use crate::components::layout::{is_admin, Health};
use budget_form::BudgetForm;
use cache::CacheUse;
use range_form::{Range, RangeForm};
use report_view::ReportView;
use spenders::Spenders;
use tags::TagUsage;

/// Your tokens and cost by day and by model, the savings from batches and caching, today's
/// budget, and CSV export; admins can look at any user and set their daily budget.
#[component]
pub fn Usage() -> impl IntoView {
    let admin = is_admin(expect_context::<Health>());
    let applied = RwSignal::new(Range::default());
    let save = Action::new_local(|s: &BudgetSetting| {
        let s = s.clone();
        async move { api::set_budget(&s).await }
    });
    let report = LocalResource::new(move || {
        let r = applied.get();
        save.version().track();
        async move { api::usage(&r.from, &r.to, &r.user).await }
    });
    let csv = Action::new_local(move |_: &()| {
        let r = applied.get_untracked();
        // Named after what the Worker resolved (its defaults included).
        let name = match report.get_untracked() {
            Some(Ok(rep)) => format!("usage-{}-{}-{}.csv", rep.user_id, rep.from, rep.to),
            _ => format!("usage-{}-{}-{}.csv", r.user, r.from, r.to),
        };
        async move {
            let text = api::usage_csv(&r.from, &r.to, &r.user)
                .await
                .map_err(|e| e.to_string())?;
            save_text(&name, &text, "text/csv")
        }
    });
    // The user typed in the filter, which the budget form also addresses.
    let user = RwSignal::new(String::new());
    view! {
        <section class="page" data-testid="page-usage">
            <h1>"Usage"</h1>
            <RangeForm report=report applied=applied user=user admin=admin csv=csv />
            {move || csv.value().get().and_then(|r| r.err()).map(|e| view! {
                <p class="error" data-testid="usage-error">{e}</p>
            })}
            {fetched(report, "Loading…", "usage-error", move |r| view! { <ReportView r=r /> })}
            <TagUsage applied=applied />
            <CacheUse applied=applied />
            <Show when=admin>
                <BudgetForm report=report user=user save=save />
                <Spenders applied=applied user=user />
            </Show>
        </section>
    }
}
