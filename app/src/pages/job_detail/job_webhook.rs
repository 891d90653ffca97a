//! A job's completion webhook on its page: where it goes, its state, every attempt, and (for
//! admins) a re-send of the same message.

use leptos::prelude::*;
use pipeline::dto::WebhookView;

use crate::api;
use crate::components::format::when;
use crate::components::layout::{is_admin, Health};

/// The delivery and its attempts; `resent` is bumped after a re-send (the page refreshes).
#[component]
pub fn JobWebhook(job_id: String, w: WebhookView) -> impl IntoView {
    let admin = is_admin(expect_context::<Health>());
    let resend = Action::new_local(move |id: &String| {
        let id = id.clone();
        async move { api::resend_webhook(&id).await.map(|_| ()) }
    });
    let next = w
        .next_at
        .filter(|_| w.state == "pending")
        .map(|at| format!(" — next attempt {} UTC", when(at)));
    view! {
        <h2>"Webhook"</h2>
        <p data-testid="webhook-state" data-state=w.state.clone()>
            {format!("{} to ", w.state)}<code>{w.url}</code>{format!(" (webhook-id {})", w.id)}{next}
        </p>
        <table class="grid" data-testid="webhook-attempts">
            <thead><tr><th class="num">"#"</th><th>"At (UTC)"</th><th>"Answer"</th><th class="num">"ms"</th><th></th></tr></thead>
            <tbody>
                {w.attempts.into_iter().map(|a| view! {
                    <tr data-testid="webhook-attempt">
                        <td class="num">{a.n}</td>
                        <td>{when(a.at)}</td>
                        <td>{a.status.map(|s| s.to_string()).or(a.error).unwrap_or_default()}</td>
                        <td class="num">{a.ms}</td>
                        <td class="muted">{a.resend.then_some("re-sent")}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
        <Show when=admin>
            <button class="secondary" data-testid="webhook-resend" on:click={
                let id = job_id.clone();
                move |_| { resend.dispatch(id.clone()); }
            }>"Re-send the webhook"</button>
        </Show>
        {move || resend.value().get().and_then(|r| r.err()).map(|e| view! {
            <p class="error" data-testid="webhook-error">{e.to_string()}</p>
        })}
    }
}
