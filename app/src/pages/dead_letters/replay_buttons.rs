//! A dead letter's replay controls, or what its replay became.

use leptos::prelude::*;
use pipeline::status::Status;

use super::actions::Replay;
use crate::components::job_status::JobStatus;

/// Once replayed: the new job and its status. Before: Replay, and Edit & replay (which toggles
/// `editing`).
#[component]
pub fn ReplayButtons(
    id: String,
    replayed_to: Option<String>,
    replay_status: Option<Status>,
    replay: Replay,
    editing: RwSignal<bool>,
) -> impl IntoView {
    match replayed_to {
        Some(to) => view! {
            <span data-testid="dlq-replayed-to">
                "replayed as " <code>{to}</code> " "
                {replay_status.map(|s| view! { <JobStatus status=s testid="dlq-replay-status" /> })}
            </span>
        }
        .into_any(),
        None => view! {
            <button class="secondary" data-testid="dlq-replay" disabled=move || replay.pending().get()
                on:click=move |_| { replay.dispatch((id.clone(), None)); }>
                "Replay"
            </button>
            <button class="secondary" data-testid="dlq-edit" on:click=move |_| editing.update(|e| *e = !*e)>
                "Edit & replay"
            </button>
        }
        .into_any(),
    }
}
