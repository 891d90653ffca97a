use leptos::prelude::*;
use leptos_router::components::A;

use crate::api::{self, ApiError};

/// The prompt-job form: prompt, priority, model and an optional expiry; errors by field.
#[component]
pub fn PromptForm() -> impl IntoView {
    let prompt = RwSignal::new(String::new());
    let priority = RwSignal::new("high".to_string());
    let model = RwSignal::new(pipeline::models::DEFAULT_MODEL.to_string());
    // The catalog's models not retired today: the same table the Worker validates against.
    let now = js_sys::Date::now() as i64;
    let choices: Vec<(&'static str, &'static str)> = pipeline::models::CATALOG
        .iter()
        .filter(|m| !m.is_retired(now))
        .map(|m| (m.id, m.display_name))
        .collect();
    let expires = RwSignal::new(String::new());
    let error = RwSignal::new(None::<ApiError>);
    let last = RwSignal::new(None::<String>);
    let send = Action::new_local(move |body: &serde_json::Value| {
        let body = body.clone();
        async move { api::submit_prompt(&body).await }
    });
    Effect::new(move |_| {
        if let Some(result) = send.value().get() {
            match result {
                Ok(ack) => {
                    error.set(None);
                    prompt.set(String::new());
                    last.set(Some(ack.job_id));
                }
                Err(e) => error.set(Some(e)),
            }
        }
    });
    let field_error = move |name: &'static str| {
        move || {
            error
                .get()
                .filter(|e| e.field.as_deref() == Some(name))
                .map(|e| e.message)
        }
    };
    let general_error = move || {
        error
            .get()
            .filter(|e| e.field.is_none())
            .map(|e| e.to_string())
    };
    view! {
        <form
            class="card form"
            data-testid="prompt-form"
            on:submit=move |ev| {
                ev.prevent_default();
                let mut body = serde_json::json!({
                    "prompt": prompt.get(),
                    "priority": priority.get(),
                    "model": model.get(),
                });
                let exp = expires.get();
                if !exp.trim().is_empty() {
                    // Sent as typed: the API says what is wrong with it, next to the field.
                    body["expires_in_s"] = exp.trim().parse::<u64>().map(serde_json::Value::from)
                        .unwrap_or(serde_json::Value::String(exp));
                }
                send.dispatch(body);
            }
        >
            <label for="pj-prompt">"Prompt"</label>
            <textarea
                id="pj-prompt"
                data-testid="pj-prompt"
                rows="4"
                placeholder="Explain the difference between a queue and a topic."
                prop:value=prompt
                on:input=move |ev| prompt.set(event_target_value(&ev))
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
                <label>
                    "Model "
                    <select data-testid="pj-model" on:change=move |ev| model.set(event_target_value(&ev))>
                        {choices
                            .into_iter()
                            .map(|(id, name)| {
                                view! {
                                    <option value=id selected=id == pipeline::models::DEFAULT_MODEL>
                                        {format!("{name} ({id})")}
                                    </option>
                                }
                            })
                            .collect_view()}
                    </select>
                </label>
                <label>
                    "Expires after (s) "
                    <input
                        data-testid="pj-expires"
                        size="8"
                        prop:value=expires
                        on:input=move |ev| expires.set(event_target_value(&ev))
                    />
                </label>
            </div>
            <p class="field-error" data-testid="pj-error-expires">{field_error("expires_in_s")}</p>
            <div class="actions">
                <button type="submit" data-testid="pj-submit" disabled=move || send.pending().get()>
                    "Submit job"
                </button>
                <span class="muted" data-testid="pj-last">
                    {move || last.get().map(|id| view! {
                        "queued " <A href=format!("/ui/jobs/{id}")>{id.clone()}</A>
                    })}
                </span>
            </div>
            <p class="error">{general_error}</p>
        </form>
    }
}
