//! The token budget's use per model class, on the dashboard.

use leptos::prelude::*;
use pipeline::ops::metrics::BudgetUse;

use crate::components::format::percent;

/// One row per model class: the share of its requests, input and output tokens per minute.
#[component]
pub fn BudgetUseTable(budget: Vec<BudgetUse>) -> impl IntoView {
    let empty = budget.is_empty();
    view! {
        <table class="grid" data-testid="budget-use">
            <thead><tr><th>"Class"</th><th class="num">"Requests"</th><th class="num">"Input tokens"</th><th class="num">"Output tokens"</th></tr></thead>
            <tbody>
                {empty.then(|| view! { <tr><td colspan="4" class="muted">"No budget charges yet."</td></tr> })}
                {budget.into_iter().map(|b| view! {
                    <tr data-testid="budget-row">
                        <td>{b.class}</td>
                        <td class="num">{percent(b.rpm)}</td>
                        <td class="num">{percent(b.itpm)}</td>
                        <td class="num">{percent(b.otpm)}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
}
