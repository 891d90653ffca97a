//! The latest metrics row as cards.

use leptos::prelude::*;
use pipeline::ops::metrics::{Metrics, P95_ALERT_MS};

use super::budget_use::BudgetUseTable;
use super::lane_card::LaneCard;
use super::series::ms_or_dash;
use crate::components::format::{clock, percent};
use crate::components::kpi::Kpi;

/// The latest row: cards for latency, throughput, failure rates and dead letters, one card per
/// lane, and the budget's use per model class. Cards over a threshold get the class `over`.
#[component]
pub fn Latest(l: Metrics) -> impl IntoView {
    let p = l.end_to_end_ms;
    let p95_over = p.p95.is_some_and(|v| v > P95_ALERT_MS);
    view! {
        <p class="muted" data-testid="metrics-at">
            {format!("As of {} UTC, over the last {} min", clock(l.at), l.window_ms / 60_000)}
        </p>
        <div class="kpis">
            <Kpi label="p50 end-to-end" testid="kpi-p50" value=ms_or_dash(p.p50) />
            <Kpi label="p95 end-to-end" testid="kpi-p95" value=ms_or_dash(p.p95) over=p95_over />
            <Kpi label="p99 end-to-end" testid="kpi-p99" value=ms_or_dash(p.p99) />
            <Kpi label="Throughput" testid="kpi-throughput" value=format!("{:.1} / min", l.throughput_per_min) />
            <Kpi label="Failed" testid="kpi-failed-rate" value=percent(l.failed_rate) />
            <Kpi label="Dead-lettered" testid="kpi-dead-letter-rate" value=percent(l.dead_letter_rate) />
            <Kpi label="Dead letters now" testid="kpi-dead-letters" value=l.dead_letters_now.to_string() />
        </div>
        <div class="kpis">
            {l.lanes.into_iter().map(|lane| view! { <LaneCard lane=lane /> }).collect_view()}
        </div>
        <h2>"Budget use per minute"</h2>
        <BudgetUseTable budget=l.budget />
    }
}
