//! Discarding a dead letter, with a confirmation.

use leptos::prelude::*;

use super::actions::Discard;

/// "Discard", then "Discard for good?" with yes / keep.
#[component]
pub fn DiscardButton(id: String, discard: Discard) -> impl IntoView {
    let confirming = RwSignal::new(false);
    view! {
        <Show when=move || !confirming.get()>
            <button class="secondary" data-testid="dlq-discard" on:click=move |_| confirming.set(true)>
                "Discard"
            </button>
        </Show>
        <Show when=move || confirming.get()>
            <span>"Discard for good? "</span>
            <button class="danger" data-testid="dlq-discard-confirm" on:click={
                let id = id.clone();
                move |_| { confirming.set(false); discard.dispatch(id.clone()); }
            }>"Yes, discard"</button>
            <button class="link" on:click=move |_| confirming.set(false)>"keep"</button>
        </Show>
    }
}
