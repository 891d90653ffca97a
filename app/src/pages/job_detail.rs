use leptos::prelude::*;
use leptos_router::hooks::use_params_map;
use pipeline::status::Status;

use crate::api;
use crate::components::format::seconds;
use crate::components::ticker::every_second;
use pipeline::money::usd;

/// One job: status, model, tokens, cost, attempts and error, its result once completed, and a
/// cancel button while it can still be canceled. Refreshed every second until it is terminal.
#[component]
pub fn JobDetail() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.read().get("id").unwrap_or_default();
    let tick = every_second();
    let job = LocalResource::new(move || {
        tick.track();
        let id = id();
        async move { api::get_job(&id).await }
    });
    let completed = move || {
        job.get()
            .and_then(|r| r.ok())
            .is_some_and(|j| j.status == Status::Completed)
    };
    let result = LocalResource::new(move || {
        let (id, done) = (id(), completed());
        async move {
            if done {
                Some(api::job_result(&id).await)
            } else {
                None
            }
        }
    });
    let cancel = Action::new_local(move |_: &()| {
        let id = id();
        async move { api::cancel_job(&id).await }
    });
    view! {
        <section class="page" data-testid="page-job">
            <h1>"Job " <code>{id}</code></h1>
            {move || match job.get() {
                None => view! { <p class="muted">"Loading…"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="error" data-testid="job-error">{e.to_string()}</p> }.into_any(),
                Some(Ok(j)) => {
                    let status = j.status.to_string();
                    let cancelable = j.status == Status::Queued;
                    view! {
                        <dl class="facts">
                            <dt>"Status"</dt>
                            <dd><span class=format!("badge {status}") data-testid="detail-status">{status.clone()}</span></dd>
                            <dt>"Kind"</dt><dd>{j.kind.as_str()}</dd>
                            <dt>"Priority / mode"</dt><dd>{format!("{} / {}", j.priority.as_str(), j.mode.as_str())}</dd>
                            <dt>"Model"</dt><dd data-testid="detail-model">{j.model.clone()}</dd>
                            <dt>"Attempts"</dt><dd data-testid="detail-attempts">{j.attempts}</dd>
                            <dt>"Elapsed"</dt><dd data-testid="detail-elapsed">{seconds(j.elapsed_ms)}</dd>
                            <dt>"Tokens"</dt>
                            <dd>{format!("{} in · {} out · {} cache write · {} cache read", j.input_tokens, j.output_tokens, j.cache_write_tokens, j.cache_read_tokens)}</dd>
                            <dt>"Cost"</dt><dd data-testid="detail-cost">{if j.cost_unknown { "unknown: the model is not in the price table".to_string() } else { usd(j.cost_micros) }}</dd>
                            <dt>"Last error"</dt><dd class="error">{j.error.clone().unwrap_or_else(|| "—".into())}</dd>
                        </dl>
                        <h2>"Attempts"</h2>
                        <table class="grid" data-testid="attempt-log">
                            <thead><tr><th>"#"</th><th>"Model"</th><th>"Outcome"</th><th class="num">"Took"</th><th>"Error"</th></tr></thead>
                            <tbody>
                                {j.attempt_log.iter().map(|a| view! {
                                    <tr>
                                        <td>{a.n}</td>
                                        <td>{a.model.clone().unwrap_or_default()}</td>
                                        <td>{a.outcome.clone()}</td>
                                        <td class="num">{seconds(a.ended_at - a.started_at)}</td>
                                        <td class="error">{a.error.clone().unwrap_or_default()}</td>
                                    </tr>
                                }).collect_view()}
                            </tbody>
                        </table>
                        <Show when=move || cancelable>
                            <button class="secondary" data-testid="cancel-job" on:click=move |_| { cancel.dispatch(()); }>
                                "Cancel this job"
                            </button>
                        </Show>
                    }.into_any()
                }
            }}
            <p class="error">{move || cancel.value().get().and_then(|r| r.err()).map(|e| e.to_string())}</p>
            <Show when=completed>
                <h2>"Result"</h2>
                <pre class="result" data-testid="job-result">
                    {move || match result.get().flatten() {
                        Some(Ok(t)) => t,
                        Some(Err(e)) => e.to_string(),
                        None => "Loading…".into(),
                    }}
                </pre>
            </Show>
        </section>
    }
}
