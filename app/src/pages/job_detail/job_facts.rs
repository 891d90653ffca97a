//! The facts of one job, as its page lists them.

use leptos::prelude::*;
use pipeline::dto::JobView;

use crate::components::format::{seconds, when};
use crate::components::job_status::JobStatus;

/// Status, kind, lane and mode, model, attempts, elapsed time, tokens, cost and last error.
#[component]
pub fn JobFacts(j: JobView) -> impl IntoView {
    let cost = match j.spend.cost_unknown {
        true => "unknown: the model is not in the price table".to_string(),
        false => j.spend.cost_text(),
    };
    let used = j.spend.tokens_text();
    let held = j.held_at.map(|at| view! {
        <dt>"Paused"</dt>
        <dd class="warn" data-testid="detail-paused">
            {format!("since {} UTC: its lane, model or user is paused; it runs when an admin resumes it", when(at))}
        </dd>
    });
    let deadline = j.deadline_at.map(|at| {
        let met = match j.deadline_met {
            Some(true) => " — met",
            Some(false) => " — missed",
            None => "",
        };
        let why = match j.route_reason.as_deref() {
            Some("deadline_allows_batch") => "routed to a batch: the deadline allows one",
            Some("deadline_too_close_for_batch") => "sent to sync: too close for a batch",
            Some("batch_ran_late") => "moved from its batch to sync: the batch ran late",
            _ => "",
        };
        view! {
            <dt>"Deadline"</dt>
            <dd data-testid="detail-deadline">{format!("{} UTC{met}; {why}", when(at))}</dd>
        }
    });
    let refusal = j.refusal.clone().map(|r| {
        let details = r
            .stop_details
            .as_ref()
            .map(|d| d.describe())
            .unwrap_or_default();
        view! {
            <dt>"Refused"</dt>
            <dd class="warn" data-testid="detail-refusal">
                {format!(
                    "attempt {} on {}{details}; retried on {} — that attempt: {}, {}",
                    r.n, r.model, r.fallback_model, r.spend.tokens_text(), r.spend.cost_text()
                )}
            </dd>
        }
    });
    let provider = j.provider.map(|p| {
        view! {
            <dt>"Answered on"</dt>
            <dd class="warn" data-testid="detail-provider">
                {format!("{}: the Anthropic API was unavailable; priced at that route's price", p.display_name())}
            </dd>
        }
    });
    let speed = (j.speed == Some(pipeline::anthropic::Speed::Fast)).then(|| {
        view! {
            <dt>"Speed"</dt>
            <dd data-testid="detail-speed">"fast mode: priced at the model's fast rates"</dd>
        }
    });
    let fallback = j.fallback_model.clone().map(|m| {
        view! {
            <dt>"Fallback on refusal"</dt><dd data-testid="detail-fallback">{m}</dd>
        }
    });
    view! {
        <dl class="facts">
            <dt>"Status"</dt>
            <dd><JobStatus status=j.status testid="detail-status" /></dd>
            {held}
            <dt>"Kind"</dt><dd>{j.kind.as_str()}</dd>
            <dt>"Priority / mode"</dt><dd>{format!("{} / {}", j.priority.as_str(), j.mode.as_str())}</dd>
            {deadline}
            <dt>"Model"</dt><dd data-testid="detail-model">{j.model}</dd>
            {speed}
            {provider}
            {fallback}
            {refusal}
            <dt>"Attempts"</dt><dd data-testid="detail-attempts">{j.attempts}</dd>
            <dt>"Elapsed"</dt><dd data-testid="detail-elapsed">{seconds(j.elapsed_ms)}</dd>
            <dt>"Tokens"</dt><dd data-testid="detail-tokens">{used}</dd>
            <dt>"Cost"</dt><dd data-testid="detail-cost">{cost}</dd>
            <dt>"Last error"</dt><dd class="error">{j.error.unwrap_or_else(|| "—".into())}</dd>
        </dl>
    }
}
