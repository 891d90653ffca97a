//! The rollout panel: the direct and the queue path of `POST /api/claude`, side by side.

use leptos::prelude::*;
use pipeline::rollout::{PathStats, RolloutReport};

use super::series::ms_or_dash;
use crate::components::format::percent;

/// One row of the panel: a figure for each path.
fn row(
    label: &'static str,
    testid: &'static str,
    of: impl Fn(&PathStats) -> String,
    r: &RolloutReport,
) -> impl IntoView {
    view! {
        <tr data-testid=testid>
            <th scope="row">{label}</th>
            <td class="num">{of(&r.direct)}</td>
            <td class="num">{of(&r.queue)}</td>
        </tr>
    }
}

/// Calls, latency, failure rate and cost per call of each path over the window, with the
/// rollout percent in force — what to compare before moving `QUEUE_ROLLOUT_PERCENT`.
#[component]
pub fn RolloutTable(r: RolloutReport, hours: u32) -> impl IntoView {
    let caption = format!(
        "POST /api/claude over the last {hours} h — {} % of users on the queue path",
        r.percent
    );
    view! {
        <table class="grid" data-testid="rollout">
            <caption>{caption}</caption>
            <thead><tr><th></th><th scope="col">"direct"</th><th scope="col">"queue"</th></tr></thead>
            <tbody>
                {row("Calls", "rollout-calls", |p| p.calls.to_string(), &r)}
                {row("Latency p50", "rollout-p50", |p| ms_or_dash(p.latency_ms.p50), &r)}
                {row("Latency p95", "rollout-p95", |p| ms_or_dash(p.latency_ms.p95), &r)}
                {row("Failure rate", "rollout-failures", |p| percent(p.failure_rate), &r)}
                {row("Cost per call", "rollout-cost", |p| p.cost_per_call_micros.usd(), &r)}
            </tbody>
        </table>
    }
}
