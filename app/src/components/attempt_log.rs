//! The calls made for a job, as the job page and the dead-letter triage show them.

use leptos::prelude::*;
use pipeline::dto::AttemptView;

use crate::components::format::seconds;

/// One row per call: its number, model, outcome, duration and error.
#[component]
pub fn AttemptLog(
    attempts: Vec<AttemptView>,
    #[prop(optional)] testid: Option<&'static str>,
) -> impl IntoView {
    view! {
        <table class="grid" data-testid=testid>
            <thead><tr><th>"#"</th><th>"Model"</th><th>"Outcome"</th><th class="num">"Took"</th><th>"Error"</th></tr></thead>
            <tbody>
                {attempts.into_iter().map(|a| view! {
                    <tr>
                        <td>{a.n}</td>
                        <td>{a.model.unwrap_or_default()}</td>
                        <td>{a.outcome.as_str()}</td>
                        <td class="num">{seconds(a.ended_at - a.started_at)}</td>
                        <td class="error">{a.error.unwrap_or_default()}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
}
