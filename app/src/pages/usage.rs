use leptos::prelude::*;

use crate::components::coming::Coming;

/// Your tokens and cost by day and by model, the savings from batches and caching, and CSV export.
#[component]
pub fn Usage() -> impl IntoView {
    view! { <Coming title="Usage" testid="page-usage" what="Your tokens and cost by day and by model, the savings from batches and caching, and CSV export." /> }
}
