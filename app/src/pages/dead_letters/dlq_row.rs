//! One job of the dead-letter triage list.

use leptos::prelude::*;
use pipeline::ops::dlq::DlqItem;
use pipeline::status::Kind;

use super::actions::{Discard, Replay};
use super::details::Details;
use super::discard_button::DiscardButton;
use super::edit_form::EditForm;
use super::replay_buttons::ReplayButtons;
use crate::components::format::when;
use crate::components::job_status::JobStatus;

/// What the job was and how it ended, its attempts and audit, and its actions.
#[component]
pub fn DlqRow(
    item: DlqItem,
    replay: Replay,
    discard: Discard,
    error: RwSignal<Option<String>>,
) -> impl IntoView {
    let editing = RwSignal::new(false);
    let ended = item.completed_at.map_or_else(|| "—".to_string(), when);
    let facts = format!(
        "{} · {} · {} · {} attempts",
        item.user_id,
        item.kind.as_str(),
        item.model.as_deref().unwrap_or("default model"),
        item.attempts
    );
    let id = item.id.clone();
    let (model, is_prompt) = (item.model.clone(), item.kind == Kind::Prompt);
    let edit_form = {
        let id = id.clone();
        move || {
            view! {
                <EditForm id=id.clone() model=model.clone() is_prompt=is_prompt
                    replay=replay editing=editing error=error />
            }
        }
    };
    // Ids as text, not links: job pages are their owners' (an admin triaging someone else's job
    // has everything about it here).
    view! {
        <li class="job dlq-item" data-testid="dlq-item" data-id=id.clone()>
            <div class="job-head">
                <code>{id.clone()}</code>
                <JobStatus status=item.status />
                {item.error_class.map(|c| view! { <span class="badge" data-testid="dlq-class-badge">{c.as_str()}</span> })}
                <span class="elapsed muted">{format!("ended {ended}")}</span>
            </div>
            <div class="muted">{facts}</div>
            <div class="error">{item.error.clone().unwrap_or_default()}</div>
            <div class="text">{item.preview.clone()}</div>
            {item.replay_of.clone().map(|o| view! {
                <div class="muted">"replay of " <code>{o}</code></div>
            })}
            <div class="actions">
                <ReplayButtons id=id.clone() replayed_to=item.replayed_to.clone()
                    replay_status=item.replay_status replay=replay editing=editing />
                <DiscardButton id=id.clone() discard=discard />
            </div>
            <Show when=move || editing.get()>{edit_form.clone()}</Show>
            <Details item=item />
        </li>
    }
}
