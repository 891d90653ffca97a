use leptos::prelude::*;

use crate::components::coming::Coming;

/// Every job you submitted, newest first, with its status, tokens, cost and live elapsed time.
#[component]
pub fn Jobs() -> impl IntoView {
    view! { <Coming title="Jobs" testid="page-jobs" what="Every job you submitted, newest first, with its status, tokens, cost and live elapsed time." /> }
}
