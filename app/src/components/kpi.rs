//! A figure card, as the dashboard and the usage page show their headline numbers.

use leptos::prelude::*;

/// A labelled figure; `over` marks one past its alert threshold.
#[component]
pub fn Kpi(
    label: &'static str,
    testid: &'static str,
    #[prop(into)] value: String,
    #[prop(optional)] over: bool,
) -> impl IntoView {
    view! {
        <div class=if over { "kpi over" } else { "kpi" }>
            <span class="kpi-label">{label}</span>
            <strong data-testid=testid>{value}</strong>
        </div>
    }
}
