//! The prompt-job form of the Submit page.

use leptos::prelude::*;
use leptos_router::components::A;
use pipeline::dto::JobRequest;
use pipeline::models::DEFAULT_MODEL;
use pipeline::status::Lane;

use super::model_picker::ModelPicker;
use crate::api::{self, ApiError};
use crate::takeover::kept;

/// The fields that show their own error; others show under the form.
const FIELDS: [&str; 2] = ["prompt", "expires_in_s"];

/// The body of `POST /jobs`, or the error to show next to a field the API would refuse for its
/// type (an expiry that is not a whole number), in the API's own words.
pub fn body(
    prompt: String,
    priority: &str,
    model: String,
    expires: &str,
) -> Result<JobRequest, ApiError> {
    let refuse = |field: &str, message: String| ApiError {
        status: 400,
        message,
        field: Some(field.to_owned()),
    };
    let priority = priority
        .parse::<Lane>()
        .map_err(|e| refuse("priority", e.to_string()))?;
    let exp = expires.trim();
    let expires_in_s =
        match exp.is_empty() {
            true => None,
            false => Some(exp.parse::<u64>().map_err(|_| {
                refuse("expires_in_s", "expires_in_s must be a whole number".into())
            })?),
        };
    Ok(JobRequest {
        priority: Some(priority),
        model: Some(model),
        expires_in_s,
        ..JobRequest::prompt(prompt)
    })
}

/// The prompt-job form: prompt, priority, model and an optional expiry; errors by field.
#[component]
pub fn PromptForm() -> impl IntoView {
    // What was typed into the build-time shell before the wasm arrived, if anything.
    let prompt = kept("pj-prompt", "");
    let priority = kept("pj-priority", "high");
    let model = kept("pj-model", DEFAULT_MODEL);
    let expires = kept("pj-expires", "");
    let error = RwSignal::new(None::<ApiError>);
    let last = RwSignal::new(None::<String>);
    let send = Action::new_local(|body: &Result<JobRequest, ApiError>| {
        let body = body.clone();
        async move { api::submit_prompt(&body?).await }
    });
    Effect::new(move |_| match send.value().get() {
        Some(Ok(ack)) => {
            error.set(None);
            prompt.set(String::new());
            last.set(Some(ack.job_id));
        }
        Some(Err(e)) => error.set(Some(e)),
        None => {}
    });
    let field_error = move |name: &'static str| move || error.get().and_then(|e| e.on_field(name));
    let pending = send.pending();
    let waiting = crate::takeover::waiting();
    view! {
        <form class="card form" data-testid="prompt-form" on:submit=move |ev| {
            ev.prevent_default();
            send.dispatch(body(prompt.get(), &priority.get(), model.get(), &expires.get()));
        }>
            <label for="pj-prompt">"Prompt"</label>
            <textarea id="pj-prompt" data-testid="pj-prompt" rows="4"
                placeholder="Explain the difference between a queue and a topic."
                prop:value=prompt on:input=move |ev| prompt.set(event_target_value(&ev))
            ></textarea>
            <p class="field-error" data-testid="pj-error-prompt">{field_error("prompt")}</p>
            <div class="row">
                <label>
                    "Priority "
                    <select data-testid="pj-priority" on:change=move |ev| priority.set(event_target_value(&ev))>
                        <option value="high">"high — now"</option>
                        <option value="bulk">"bulk — batched, half price"</option>
                    </select>
                </label>
                <label>"Model " <ModelPicker model=model /></label>
                <label>
                    "Expires after (s) "
                    <input data-testid="pj-expires" size="8" prop:value=expires
                        on:input=move |ev| expires.set(event_target_value(&ev)) />
                </label>
            </div>
            <p class="field-error" data-testid="pj-error-expires">{field_error("expires_in_s")}</p>
            <div class="actions">
                <button type="submit" data-testid="pj-submit" disabled=move || pending.get() || waiting.get()>
                    "Submit job"
                </button>
                <span class="muted" data-testid="pj-last">
                    {move || last.get().map(|id| view! {
                        "queued " <A href=format!("/ui/jobs/{id}")>{id.clone()}</A>
                    })}
                </span>
            </div>
            <p class="error">{move || error.get().and_then(|e| e.elsewhere(&FIELDS))}</p>
        </form>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expiry_is_sent_as_a_number_and_anything_else_is_refused_at_its_field() {
        let b = |exp: &str| body("p".into(), "high", "m".into(), exp);
        assert_eq!(b("").unwrap().expires_in_s, None);
        assert_eq!(b(" 60 ").unwrap().expires_in_s, Some(60));
        let refused = b("soon").unwrap_err();
        assert_eq!(
            refused.on_field("expires_in_s").as_deref(),
            Some("expires_in_s must be a whole number")
        );
        assert_eq!(b("").unwrap().model.as_deref(), Some("m"));
        assert_eq!(b("").unwrap().priority, Some(Lane::High));
    }
}
