use leptos::prelude::*;

/// Any path the SPA does not know.
#[component]
pub fn NotFound() -> impl IntoView {
    view! {
        <section class="page" data-testid="page-not-found">
            <h1>"Page not found"</h1>
            <p><a href="/">"Back to Submit"</a></p>
        </section>
    }
}
