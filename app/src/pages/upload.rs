use leptos::prelude::*;

use crate::components::coming::Coming;

/// Drop up to 100 PDFs to have each one summarized and its key facts extracted on the bulk lane.
#[component]
pub fn Upload() -> impl IntoView {
    view! { <Coming title="Upload PDFs" testid="page-upload" what="Drop up to 100 PDFs to have each one summarized and its key facts extracted on the bulk lane." /> }
}
