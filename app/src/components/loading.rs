//! What a page shows while its data is on the way: the fallback of its `Transition`.

use leptos::prelude::*;

/// A muted line saying what is being loaded.
#[component]
pub fn Loading(#[prop(default = "Loading…")] text: &'static str) -> impl IntoView {
    view! { <p class="muted">{text}</p> }
}
