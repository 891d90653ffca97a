//! The job page (`/ui/jobs/:id`): one job, live, its result once completed.

mod job_facts;
mod job_result;
mod job_webhook;

use leptos::prelude::*;
use leptos_router::hooks::use_params_map;
use pipeline::status::Status;

use crate::api;
use crate::components::attempt_log::AttemptLog;
use crate::components::fetched::fetched;
use crate::components::ticker::every_second;
use job_facts::JobFacts;
use job_result::JobResult;
use job_webhook::JobWebhook;

/// One job: status, model, tokens, cost, attempts and error, its result once completed, and a
/// cancel button while it can still be canceled. Refreshed every second and after a cancel.
#[component]
pub fn JobDetail() -> impl IntoView {
    let params = use_params_map();
    let id = Signal::derive(move || params.read().get("id").unwrap_or_default());
    let tick = every_second();
    let cancel = Action::new_local(move |_: &()| {
        let id = id.get_untracked();
        async move { api::cancel_job(&id).await }
    });
    let job = LocalResource::new(move || {
        tick.track();
        cancel.version().track();
        let id = id.get();
        async move { api::get_job(&id).await }
    });
    let completed = move || {
        job.get()
            .and_then(|r| r.ok())
            .is_some_and(|j| j.status == Status::Completed)
    };
    view! {
        <section class="page" data-testid="page-job">
            <h1>"Job " <code>{id}</code></h1>
            {fetched(job, "Loading…", "job-error", move |j| {
                            let cancelable = j.status == Status::Queued;
                            let attempts = j.attempt_log.clone();
                            let webhook = j.webhook.clone().map(|w| {
                                let job_id = j.id.clone();
                                view! { <JobWebhook job_id=job_id w=w /> }
                            });
                            view! {
                                <JobFacts j=j />
                                {webhook}
                                <h2>"Attempts"</h2>
                                <AttemptLog attempts=attempts testid="attempt-log" />
                                <Show when=move || cancelable>
                                    <button class="secondary" data-testid="cancel-job"
                                        on:click=move |_| { cancel.dispatch(()); }>
                                        "Cancel this job"
                                    </button>
                                </Show>
                            }
                        })}
            <p class="error">{move || cancel.value().get().and_then(|r| r.err()).map(|e| e.to_string())}</p>
            <Show when=completed>
                <h2>"Result"</h2>
                <JobResult id=id />
            </Show>
        </section>
    }
}
