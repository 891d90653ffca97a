//! A job's status as the badge every page shows.

use leptos::prelude::*;
use pipeline::status::Status;

/// A job's status as a badge; its class names the status, which the palette colours.
#[component]
pub fn JobStatus(
    status: Status,
    /// Names the badge for tests, where a page needs to find it.
    #[prop(optional)]
    testid: Option<&'static str>,
) -> impl IntoView {
    view! { <span class=format!("badge {status}") data-testid=testid>{status.as_str()}</span> }
}
