//! Editing a dead letter before replaying it.

use leptos::prelude::*;
use pipeline::ops::dlq::ReplayEdit;

use super::actions::Replay;

/// The edit the fields describe (`None` when nothing changes): an empty model keeps the job's,
/// max tokens only for prompt jobs and only when typed.
pub fn replay_edit(model: &str, max: &str, is_prompt: bool) -> Result<Option<ReplayEdit>, String> {
    let model = Some(model.trim().to_string()).filter(|m| !m.is_empty());
    let max = max.trim();
    let max_tokens = if max.is_empty() || !is_prompt {
        None
    } else {
        let n = max
            .parse::<u32>()
            .map_err(|_| format!("max tokens must be a whole number, not {max:?}"))?;
        Some(n)
    };
    let edit = ReplayEdit { model, max_tokens };
    Ok((!edit.is_empty()).then_some(edit))
}

/// Model and (for prompt jobs) max tokens, then "Replay with these"; closes `editing` once sent.
#[component]
pub fn EditForm(
    id: String,
    model: Option<String>,
    is_prompt: bool,
    replay: Replay,
    editing: RwSignal<bool>,
    error: RwSignal<Option<String>>,
) -> impl IntoView {
    let edit_model = RwSignal::new(model.unwrap_or_default());
    let edit_max = RwSignal::new(String::new());
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        match replay_edit(&edit_model.get(), &edit_max.get(), is_prompt) {
            Ok(edit) => {
                replay.dispatch((id.clone(), edit));
                editing.set(false);
            }
            Err(e) => error.set(Some(e)),
        }
    };
    let waiting = crate::takeover::waiting();
    view! {
        <form class="row" on:submit=submit>
            <label>"Model "
                <input data-testid="dlq-edit-model" size="20" prop:value=edit_model
                    on:input=move |ev| edit_model.set(event_target_value(&ev)) />
            </label>
            <Show when=move || is_prompt>
                <label>"Max tokens "
                    <input data-testid="dlq-edit-max-tokens" size="6" inputmode="numeric" prop:value=edit_max
                        on:input=move |ev| edit_max.set(event_target_value(&ev)) />
                </label>
            </Show>
            <button type="submit" class="primary" data-testid="dlq-edit-submit" disabled=waiting>"Replay with these"</button>
        </form>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_carries_only_what_was_typed() {
        assert_eq!(replay_edit(" ", "", true), Ok(None));
        let e = replay_edit("claude-opus-5-5", " 64 ", true)
            .unwrap()
            .unwrap();
        assert_eq!(
            (e.model.as_deref(), e.max_tokens),
            (Some("claude-opus-5-5"), Some(64))
        );
        assert_eq!(
            replay_edit("", "64", false),
            Ok(None),
            "max tokens only for prompt jobs"
        );
        assert!(replay_edit("", "lots", true)
            .unwrap_err()
            .contains("\"lots\""));
    }
}
