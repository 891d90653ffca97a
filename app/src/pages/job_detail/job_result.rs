//! A completed job's result text.

use leptos::prelude::*;

use crate::api;

/// The result of the job `id`, fetched once it is shown (the page shows it once completed); a
/// failure to fetch it is said in its place.
#[component]
pub fn JobResult(id: Signal<String>) -> impl IntoView {
    let result = LocalResource::new(move || {
        let id = id.get();
        async move { api::job_result(&id).await }
    });
    view! {
        <pre class="result" data-testid="job-result">
            {move || match result.get() {
                None => "Loading…".to_owned(),
                Some(r) => r.unwrap_or_else(|e| e.to_string()),
            }}
        </pre>
    }
}
