//! The latest metrics row as cards.

use leptos::prelude::*;
use pipeline::decimal::fixed;
use pipeline::ops::metrics::Metrics;

use super::budget_use::BudgetUseTable;
use super::lane_card::LaneCard;
use super::paths::Paths;
use crate::components::format::{clock, percent};
use crate::components::kpi::Kpi;

/// The latest row: the sync and batch paths against their SLOs, cards for throughput, failure
/// rates and dead letters, one card per lane, and the budget's use per model class.
#[component]
pub fn Latest(l: Metrics) -> impl IntoView {
    let paths = l.clone();
    view! {
        <p class="muted" data-testid="metrics-at">
            {format!("As of {} UTC, over the last {} min", clock(l.at), l.window_ms / 60_000)}
        </p>
        <Paths l=paths />
        <div class="kpis">
            <Kpi label="Throughput" testid="kpi-throughput" value=format!("{} / min", fixed(l.throughput_per_min, 1)) />
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
