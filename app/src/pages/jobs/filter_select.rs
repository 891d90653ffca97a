//! One filter of the Jobs page.

use leptos::prelude::*;

/// A labelled `<select>` of `options` plus "any" (the empty value), writing into `value`.
#[component]
pub fn FilterSelect(
    label: &'static str,
    testid: &'static str,
    value: RwSignal<String>,
    options: Vec<&'static str>,
) -> impl IntoView {
    view! {
        <label class="filter">
            {label}
            <select data-testid=testid on:change=move |ev| value.set(event_target_value(&ev))>
                <option value="">"any"</option>
                {options.into_iter().map(|o| view! { <option value=o>{o}</option> }).collect_view()}
            </select>
        </label>
    }
}
