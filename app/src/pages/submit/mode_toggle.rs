//! The feedback form's sync / batch choice.

use leptos::prelude::*;
use pipeline::status::Mode;

/// Two radios: sync (now, standard price) or batch (half price, when the batch ends).
#[component]
pub fn ModeToggle(mode: RwSignal<Mode>) -> impl IntoView {
    let choice = move |m: Mode, testid: &'static str, text: &'static str| {
        view! {
            <label>
                <input
                    type="radio"
                    name="mode"
                    value=m.as_str()
                    data-testid=testid
                    checked=mode.get_untracked() == m
                    prop:checked=move || mode.get() == m
                    on:change=move |_| mode.set(m)
                />
                {text}
            </label>
        }
    };
    view! {
        <fieldset class="toggle" data-testid="fb-mode">
            <legend>"Mode"</legend>
            {choice(Mode::Sync, "mode-sync", " sync — now, standard price")}
            {choice(Mode::Batch, "mode-batch", " batch — half price, completes when the batch ends")}
        </fieldset>
    }
}
