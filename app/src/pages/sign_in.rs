use leptos::prelude::*;

use crate::components::coming::Coming;

/// Enter your API key once; it is kept for this browser session.
#[component]
pub fn SignIn() -> impl IntoView {
    view! { <Coming title="Sign in" testid="page-sign-in" what="Enter your API key once; it is kept for this browser session." /> }
}
