//! One usage report: totals, savings, budget, the chart and the table.

use leptos::prelude::*;
use pipeline::money::UsdMicros;
use pipeline::ops::usage::UsageReport;

use super::budget_text::budget_text;
use super::usage_table::UsageTable;
use crate::components::chart::{Bar, BarChart};
use crate::components::kpi::Kpi;

/// Totals, savings, today's budget, the chart of cost per day and the table by day and model.
#[component]
pub fn ReportView(r: UsageReport) -> impl IntoView {
    let t = r.totals;
    let unknown = (t.cost_unknown_jobs > 0).then(|| {
        format!(
            "{} jobs used a model without a price; their cost is not included",
            t.cost_unknown_jobs
        )
    });
    let bars = r
        .days
        .iter()
        .map(|d| Bar {
            label: d.day.get(5..).unwrap_or(&d.day).to_string(),
            value: d.cost_micros.as_f64(),
            title: format!("{}: {} ({} jobs)", d.day, d.cost_micros.usd(), d.jobs),
        })
        .collect::<Vec<_>>();
    view! {
        <h2>{format!("{} · {} to {}", r.user_id, r.from, r.to)}</h2>
        <div class="kpis">
            <Kpi label="Cost" testid="usage-total-cost" value=t.spend.cost_micros.usd() />
            <Kpi label="Jobs" testid="usage-total-jobs" value=t.jobs.to_string() />
            <Kpi label="Saved by batches" testid="usage-saving-batch" value=r.savings.batch_micros.usd() />
            <Kpi label="Saved by caching" testid="usage-saving-cache" value=r.savings.cache_micros.usd() />
        </div>
        {unknown.map(|u| view! { <p class="muted">{u}</p> })}
        <dl class="facts">
            <dt>"Input tokens"</dt><dd data-testid="usage-tokens-input">{t.spend.input_tokens}</dd>
            <dt>"Output tokens"</dt><dd data-testid="usage-tokens-output">{t.spend.output_tokens}</dd>
            <dt>"Cache write tokens"</dt><dd data-testid="usage-tokens-cache-write">{t.spend.cache_write_tokens}</dd>
            <dt>"Cache read tokens"</dt><dd data-testid="usage-tokens-cache-read">{t.spend.cache_read_tokens}</dd>
            <dt>"Fast mode"</dt>
            <dd data-testid="usage-fast">
                {format!("{} jobs, {} (included above)", t.fast_jobs, t.fast_cost_micros.usd())}
            </dd>
            <dt>"Refused attempts"</dt>
            <dd data-testid="usage-refusals">
                {format!("{} (retried on a fallback model; billed under the model that refused)", t.refusals)}
            </dd>
            <dt>"Daily budget"</dt><dd data-testid="usage-budget">{budget_text(&r.budget)}</dd>
        </dl>
        <BarChart testid="usage-chart" title="Cost per day (UTC)" bars=bars bar_testid="usage-bar"
            y_fmt={|v| UsdMicros::new(v.round() as u64).usd()} />
        <UsageTable rows=r.rows />
    }
}
