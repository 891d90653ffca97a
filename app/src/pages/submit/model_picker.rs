//! The prompt form's model picker, filled from the model catalog.

use leptos::prelude::*;
use pipeline::models::{CATALOG, DEFAULT_MODEL};

/// The catalog's models not retired today (the table the Worker validates against), the
/// default selected.
#[component]
pub fn ModelPicker(model: RwSignal<String>) -> impl IntoView {
    let now = crate::components::format::now_ms();
    let choices = CATALOG
        .iter()
        .filter(|m| !m.is_retired(now))
        .map(|m| {
            view! {
                <option value=m.id selected=m.id == DEFAULT_MODEL>
                    {format!("{} ({})", m.display_name, m.id)}
                </option>
            }
        })
        .collect_view();
    view! {
        <select data-testid="pj-model" on:change=move |ev| model.set(event_target_value(&ev))>
            {choices}
        </select>
    }
}
