use leptos::prelude::*;

use crate::components::coming::Coming;

/// Jobs whose retries ran out, with their last error, for triage and replay.
#[component]
pub fn DeadLetters() -> impl IntoView {
    view! { <Coming title="Dead letters" testid="page-dead-letters" what="Jobs whose retries ran out, with their last error, for triage and replay." /> }
}
