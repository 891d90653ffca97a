//! The deadline routing panel: how the jobs that set a deadline were routed, the deadlines met
//! or missed, and what the batch path saved (`GET /api/routing`).

use leptos::prelude::*;
use pipeline::decimal::fixed;
use pipeline::routing::RoutingReport;

/// One figure of the panel.
fn row(label: &'static str, testid: &'static str, value: String) -> impl IntoView {
    view! {
        <tr data-testid=testid>
            <th scope="row">{label}</th>
            <td class="num">{value}</td>
        </tr>
    }
}

#[component]
pub fn RoutingTable(r: RoutingReport) -> impl IntoView {
    let ended = r.met + r.missed;
    let share = if ended == 0 {
        "–".to_string()
    } else {
        format!("{} %", fixed(r.met as f64 * 100.0 / ended as f64, 0))
    };
    let caption = format!(
        "Jobs with a deadline over the last {} days — a batch needs its expected time plus a {} s \
         margin and a {} s rescue reserve; sync needs {} s",
        r.days, r.margin_s, r.rescue_s, r.sync_s
    );
    view! {
        <table class="grid" data-testid="routing">
            <caption>{caption}</caption>
            <tbody>
                {row("Jobs", "routing-jobs", r.jobs.to_string())}
                {row("Answered by a batch", "routing-batch", r.by_batch.to_string())}
                {row("Sent straight to sync", "routing-sync", r.by_sync.to_string())}
                {row("Moved from a late batch to sync", "routing-moved", r.moved.to_string())}
                {row("Deadlines met", "routing-met", format!("{} of {ended} ({share})", r.met))}
                {row("Deadlines missed", "routing-missed", r.missed.to_string())}
                {row("Cost", "routing-cost", r.cost_micros.usd())}
                {row("Saved by the batch path", "routing-saved", r.saved_micros.usd())}
            </tbody>
        </table>
    }
}
