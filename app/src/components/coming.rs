use leptos::prelude::*;

/// The frame of a page whose feature has not landed yet: says so plainly, and what it will do.
#[component]
pub fn Coming(title: &'static str, testid: &'static str, what: &'static str) -> impl IntoView {
    view! {
        <section class="page" data-testid=testid>
            <h1>{title}</h1>
            <p class="muted">{what}</p>
            <p class="notice">"Not available yet in this version."</p>
        </section>
    }
}
