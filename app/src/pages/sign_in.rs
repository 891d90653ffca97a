use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::api;

/// Enter your API key once; it is kept for this browser session (sessionStorage) and sent with
/// every request. The Worker checks it; a wrong or revoked key is refused here.
#[component]
pub fn SignIn() -> impl IntoView {
    let key = crate::takeover::kept("api-key", "");
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let submit = move || {
        if busy.get_untracked() {
            return;
        }
        busy.set(true);
        error.set(None);
        let k = key.get_untracked();
        spawn_local(async move {
            match api::sign_in(&k).await {
                // A full load, so that every page starts again as the signed-in user.
                Ok(_) => {
                    let _ = window().location().set_href("/");
                }
                Err(e) => {
                    error.set(Some(e.to_string()));
                    busy.set(false);
                }
            }
        });
    };
    let waiting = crate::takeover::waiting();
    view! {
        <section class="page" data-testid="page-sign-in">
            <h1>"Sign in"</h1>
            <p class="muted">
                "Paste your API key. It is kept for this browser session only and sent with every \
                 request; an admin can issue one with " <code>"cargo xtask key create --user NAME"</code>
                " or " <code>"POST /api/keys"</code> "."
            </p>
            <form on:submit=move |ev| { ev.prevent_default(); submit(); }>
                <label>"API key "
                    <input
                        type="password"
                        autocomplete="off"
                        data-testid="api-key"
                        prop:value=move || key.get()
                        on:input=move |ev| key.set(event_target_value(&ev))
                    />
                </label>
                <button type="submit" data-testid="sign-in" disabled=move || busy.get() || waiting.get()>"Sign in"</button>
            </form>
            <p class="error" data-testid="sign-in-error">{move || error.get()}</p>
        </section>
    }
}
