//! The header's one-word summary of the Worker's health.

use leptos::prelude::*;

use super::health::Health;

/// A one-word summary of what the Worker reports about its bindings, linking to the dashboard.
#[component]
pub fn HealthBadge(health: Health) -> impl IntoView {
    let label = move || match health.get() {
        None => ("checking…", "status pending"),
        Some(Ok(h)) if h.ok => ("all systems ok", "status ok"),
        Some(Ok(_)) => ("degraded", "status bad"),
        Some(Err(_)) => ("worker unreachable", "status bad"),
    };
    view! {
        <a href="/ui/dashboard" class=move || label().1 data-testid="status-badge">
            {move || label().0}
        </a>
    }
}
