//! The dashboard's metrics report.

use leptos::prelude::*;
use pipeline::decimal::fixed;
use pipeline::ops::metrics::{span, MetricsReport};

use super::headroom::HeadroomTable;
use super::latest::Latest;
use super::models_watch::ModelsWatch;
use super::series::{batch_latency, compact, latency, line, tokens};
use super::unrecorded::UnrecordedSpend;
use crate::components::chart::{BarChart, LineChart};
use crate::components::format::{clock, percent, seconds};

/// The metrics report: the latest row as cards, the series as charts, the headroom and the
/// models (its warnings are in the status line).
#[component]
pub fn MetricsView(m: MetricsReport) -> impl IntoView {
    let latest = m.latest.map(|l| view! { <Latest l=l /> });
    let none = latest.is_none().then(|| view! {
        <p class="muted" data-testid="metrics-empty">"No metrics yet: the cron writes a row every minute."</p>
    });
    let series = m.series;
    let unrecorded = m.unrecorded;
    let headroom = m.headroom;
    let models = m.models;
    let sync_slo = series
        .last()
        .and_then(|r| r.slo)
        .unwrap_or_default()
        .sync_p95_ms as f64;
    view! {
        // The warnings are the status line's, at the top of the page.
        {none}
        <UnrecordedSpend u=unrecorded />
        {latest}
        <div class="charts">
            <LineChart testid="chart-latency" title="Sync path latency (end-to-end p50 / p95 / p99, call p95)"
                series=latency(&series) threshold=sync_slo
                y_fmt={|v| seconds(v as i64)} x_fmt={|x| clock(x as i64)} />
            <LineChart testid="chart-batch-latency" title="Batch path (p95: to submission, inside the batch, end to end)"
                series=batch_latency(&series)
                y_fmt={|v| span(v as i64)} x_fmt={|x| clock(x as i64)} />
            <LineChart testid="chart-throughput" title="Completed per minute"
                series=vec![line("completed / min", &series, |r| Some(r.throughput_per_min))]
                y_fmt={|v| fixed(v, 1)} x_fmt={|x| clock(x as i64)} />
            <BarChart testid="chart-tokens" title="Tokens per model (input + output)"
                bars=tokens(&series) bar_testid="tokens-bar" y_fmt=compact />
            <LineChart testid="chart-failures" title="Failed and dead-letter rates"
                series=vec![
                    line("failed", &series, |r| Some(r.failed_rate)),
                    line("dead-lettered", &series, |r| Some(r.dead_letter_rate)),
                ]
                y_fmt=percent x_fmt={|x| clock(x as i64)} />
        </div>
        <h2 id="headroom">"Production headroom (per invocation, last day)"</h2>
        <HeadroomTable peaks=headroom />
        <h2 id="models">"Models (the catalog against the API's list)"</h2>
        <ModelsWatch w=models />
    }
}
