//! What a page shows in place of data it could not load: the fallback of its `ErrorBoundary`.

use leptos::prelude::*;

/// The errors an `ErrorBoundary` caught, each as the API's message, under one test id.
#[component]
pub fn Failure(errors: ArcRwSignal<Errors>, testid: &'static str) -> impl IntoView {
    move || {
        errors
            .get()
            .into_iter()
            .map(|(_, e)| view! { <p class="error" data-testid=testid>{e.to_string()}</p> })
            .collect_view()
    }
}

/// An `ErrorBoundary` fallback that shows [`Failure`] under `testid`.
pub fn failure(
    testid: &'static str,
) -> impl FnMut(ArcRwSignal<Errors>) -> AnyView + Send + 'static {
    move |errors| view! { <Failure errors=errors testid=testid /> }.into_any()
}
