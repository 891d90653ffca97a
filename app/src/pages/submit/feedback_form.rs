//! The feedback form of the Submit page.

use leptos::prelude::*;
use pipeline::dto::FeedbackAck;
use pipeline::status::Mode;

use super::mode_toggle::ModeToggle;
use crate::api::ApiError;
use crate::takeover::{kept, typed};

/// Sends one piece of feedback: `(source, text, mode)`.
pub type SendFeedback = Action<(String, String, Mode), Result<FeedbackAck, ApiError>>;

/// The fields the API may name in its errors; each shows its error next to it.
const FIELDS: [&str; 3] = ["text", "source", "mode"];

/// Source, text and the sync / batch toggle; API errors show next to their field.
#[component]
pub fn FeedbackForm(send: SendFeedback) -> impl IntoView {
    // What was typed into the build-time shell before the wasm arrived, if anything.
    let source = kept("fb-source", "web_app");
    let text = kept("fb-text", "");
    let mode = RwSignal::new(match typed("mode-batch").as_deref() {
        Some("true") => Mode::Batch,
        _ => Mode::Sync,
    });
    let error = RwSignal::new(None::<ApiError>);
    let last = RwSignal::new(None::<String>);
    Effect::new(move |_| match send.value().get() {
        Some(Ok(ack)) => {
            error.set(None);
            text.set(String::new());
            last.set(Some(ack.id));
        }
        Some(Err(e)) => error.set(Some(e)),
        None => {}
    });
    let field_error = move |name: &'static str| move || error.get().and_then(|e| e.on_field(name));
    let pending = send.pending();
    let waiting = crate::takeover::waiting();
    view! {
        <form
            class="card form"
            data-testid="feedback-form"
            on:submit=move |ev| {
                ev.prevent_default();
                send.dispatch((source.get(), text.get(), mode.get()));
            }
        >
            <label for="fb-source">"Source"</label>
            <input
                id="fb-source"
                data-testid="fb-source"
                value=source.get_untracked()
                prop:value=source
                on:input=move |ev| source.set(event_target_value(&ev))
            />
            <p class="field-error" data-testid="error-source">{field_error("source")}</p>

            <label for="fb-text">"Feedback"</label>
            <textarea
                id="fb-text"
                data-testid="fb-text"
                rows="4"
                placeholder="The dark mode toggle stopped working after the last update."
                prop:value=text
                on:input=move |ev| text.set(event_target_value(&ev))
            ></textarea>
            <p class="field-error" data-testid="error-text">{field_error("text")}</p>

            <ModeToggle mode=mode />
            <p class="field-error" data-testid="error-mode">{field_error("mode")}</p>

            <div class="actions">
                <button type="submit" data-testid="fb-submit" disabled=move || pending.get() || waiting.get()>
                    {move || if pending.get() { "Submitting…" } else { "Submit" }}
                </button>
                <span class="muted" data-testid="fb-last">
                    {move || last.get().map(|id| format!("queued {id}"))}
                </span>
            </div>
            <p class="error" data-testid="fb-error">
                {move || error.get().and_then(|e| e.elsewhere(&FIELDS))}
            </p>
        </form>
    }
}
