//! Who is signed in, in the header.

use leptos::prelude::*;
use pipeline::identity::AuthMode;

use super::health::Health;
use crate::api;

/// Who is signed in (keys mode), with a way out; or the way in when no key is accepted.
#[component]
pub fn Who(health: Health) -> impl IntoView {
    move || match health.get() {
        Some(Ok(h)) if h.auth_mode == AuthMode::Keys => view! {
            <span class="who" data-testid="signed-in">
                {format!("{} ({})", h.user_id, h.role.as_str())}
                " · "
                <button class="link" data-testid="sign-out" on:click=move |_| {
                    api::sign_out();
                    let _ = window().location().set_href("/ui/sign-in");
                }>"sign out"</button>
            </span>
        }
        .into_any(),
        Some(Err(e)) if e.status == 401 => view! {
            <a class="who" href="/ui/sign-in" data-testid="sign-in-link">"Sign in"</a>
        }
        .into_any(),
        _ => ().into_any(),
    }
}
