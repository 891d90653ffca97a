use leptos::prelude::*;

/// A page another bundle draws: in the Dashboard's bundle, every path but the Dashboard's. The
/// router has already moved to the path, so loading it again asks the Worker for that page,
/// which comes with the whole app. A path this bundle was loaded at but does not draw is not
/// found (loading it again would only come back here).
#[component]
pub fn Elsewhere() -> impl IntoView {
    let path = leptos_router::hooks::use_location().pathname;
    let away = move || crate::takeover::moved_since_loaded(&path.get());
    Effect::new(move |_| {
        if away() {
            let _ = window().location().reload();
        }
    });
    move || {
        if away() {
            view! {
                <section class="page" data-testid="page-elsewhere">
                    <p class="muted">"Loading…"</p>
                </section>
            }
            .into_any()
        } else {
            view! { <super::not_found::NotFound /> }.into_any()
        }
    }
}
