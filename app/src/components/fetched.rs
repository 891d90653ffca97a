//! What a page shows for data it fetches from the API: the one way every page renders a
//! `LocalResource` of the API client's `Result`.

use leptos::prelude::*;

use crate::api::ApiError;

/// `data`, shown: a muted `loading` line until its first answer, the API's message under
/// `testid` if the call failed, else `view` of the data. A refetch keeps the last answer on
/// screen until the next one arrives (a resource keeps its value while it reloads), so polling
/// never flickers.
///
/// A plain reactive closure over the resource rather than `Transition` → `ErrorBoundary` →
/// `Suspend`: each of those is generic over its children, and the three of them on every page
/// were a large share of the SPA's code (issue 18).
pub fn fetched<T, V>(
    data: LocalResource<Result<T, ApiError>>,
    loading: &'static str,
    testid: &'static str,
    view: impl Fn(T) -> V + Send + Sync + 'static,
) -> impl IntoView
where
    T: Clone + 'static,
    V: IntoView + 'static,
{
    move || match data.get() {
        None => waiting(loading),
        Some(Err(e)) => failed(&e, testid),
        Some(Ok(v)) => view(v).into_any(),
    }
}

fn waiting(text: &'static str) -> AnyView {
    view! { <p class="muted">{text}</p> }.into_any()
}

fn failed(e: &ApiError, testid: &'static str) -> AnyView {
    view! { <p class="error" data-testid=testid>{e.to_string()}</p> }.into_any()
}
