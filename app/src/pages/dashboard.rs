use std::time::Duration;

use leptos::prelude::*;
use pipeline::dto::HealthReport;
use pipeline::ops::metrics::{Metrics, MetricsReport, OLDEST_PENDING_ALERT_MS, P95_ALERT_MS};

use crate::api;
use crate::components::chart::{Bar, BarChart, LineChart, Series};
use crate::components::format::{clock, percent, seconds};
use crate::components::ticker::every;

/// How much history the charts show, and how often they refresh.
const MINUTES: u32 = 60;
const REFRESH: Duration = Duration::from_secs(10);

/// Operations: live metrics (alerts, latency, throughput, lanes, tokens, failures, budget use),
/// refreshed every 10 s, above the Worker's health report.
#[component]
pub fn Dashboard() -> impl IntoView {
    let health = LocalResource::new(api::health);
    let tick = every(REFRESH);
    let metrics = LocalResource::new(move || {
        tick.track();
        api::metrics(MINUTES)
    });
    view! {
        <section class="page" data-testid="page-dashboard">
            <h1>"Dashboard"</h1>
            {move || match metrics.get() {
                None => view! { <p class="muted">"Loading metrics…"</p> }.into_any(),
                Some(Err(e)) => view! {
                    <p class="error" data-testid="metrics-error">{e.to_string()}</p>
                }.into_any(),
                Some(Ok(m)) => view! { <MetricsView m=m /> }.into_any(),
            }}
            <h2>"Health"</h2>
            <div class="toolbar">
                <button data-testid="refresh-health" on:click=move |_| health.refetch()>
                    "Check again"
                </button>
            </div>
            <Transition fallback=|| view! { <p class="muted">"Asking the Worker…"</p> }>
                {move || Suspend::new(async move {
                    match health.await {
                        Ok(h) => view! { <HealthTable h=h /> }.into_any(),
                        Err(e) => view! {
                            <p class="error" data-testid="health-error">{e.to_string()}</p>
                        }.into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}

/// The metrics report: alerts, the latest row as cards, the series as charts.
#[component]
fn MetricsView(m: MetricsReport) -> impl IntoView {
    let warnings = m.warnings;
    let latest = m.latest.map(|l| view! { <Latest l=l /> });
    let none = latest
        .is_none()
        .then(|| view! { <p class="muted" data-testid="metrics-empty">"No metrics yet: the cron writes a row every minute."</p> });
    let series = m.series;
    view! {
        <ul class="alerts" data-testid="metrics-warnings">
            {warnings.into_iter().map(|w| view! {
                <li class="alert" data-testid="metrics-warning">{w}</li>
            }).collect_view()}
        </ul>
        {none}
        {latest}
        <div class="charts">
            <LineChart testid="chart-latency" title="End-to-end latency (p50 / p95 / p99)"
                series=latency(&series) threshold={P95_ALERT_MS as f64}
                y_fmt={|v| seconds(v as i64)} x_fmt={|x| clock(x as i64)} />
            <LineChart testid="chart-throughput" title="Completed per minute"
                series=vec![line("completed / min", &series, |r| Some(r.throughput_per_min))]
                y_fmt={|v| format!("{v:.1}")} x_fmt={|x| clock(x as i64)} />
            <BarChart testid="chart-tokens" title="Tokens per model (input + output)"
                bars=tokens(&series) bar_testid="tokens-bar" y_fmt=compact />
            <LineChart testid="chart-failures" title="Failed and dead-letter rates"
                series=vec![
                    line("failed", &series, |r| Some(r.failed_rate)),
                    line("dead-lettered", &series, |r| Some(r.dead_letter_rate)),
                ]
                y_fmt=percent x_fmt={|x| clock(x as i64)} />
        </div>
    }
}

/// One line of the series: `(at, value)` where the row has a value.
fn line(label: &str, rows: &[Metrics], value: impl Fn(&Metrics) -> Option<f64>) -> Series {
    let points = rows
        .iter()
        .filter_map(|r| value(r).map(|v| (r.at as f64, v)))
        .collect();
    (label.to_string(), points)
}

fn latency(rows: &[Metrics]) -> Vec<Series> {
    let ms = |v: Option<i64>| v.map(|v| v as f64);
    vec![
        line("p50", rows, |r| ms(r.end_to_end_ms.p50)),
        line("p95", rows, |r| ms(r.end_to_end_ms.p95)),
        line("p99", rows, |r| ms(r.end_to_end_ms.p99)),
    ]
}

/// Input plus output tokens per model, summed over the series.
fn tokens(rows: &[Metrics]) -> Vec<Bar> {
    let mut per_model: Vec<(String, u64, u64)> = Vec::new();
    for m in rows.iter().flat_map(|r| &r.models) {
        match per_model.iter_mut().find(|(name, ..)| *name == m.model) {
            Some((_, i, o)) => {
                *i += m.input_tokens;
                *o += m.output_tokens;
            }
            None => per_model.push((m.model.clone(), m.input_tokens, m.output_tokens)),
        }
    }
    per_model.sort();
    per_model
        .into_iter()
        .map(|(model, i, o)| Bar {
            title: format!("{model}: {i} input + {o} output tokens"),
            label: model,
            value: (i + o) as f64,
        })
        .collect()
}

/// `950`, `12.3k`, `4.5M`.
fn compact(v: f64) -> String {
    match v {
        v if v >= 1e6 => format!("{:.1}M", v / 1e6),
        v if v >= 1e3 => format!("{:.1}k", v / 1e3),
        v => format!("{v:.0}"),
    }
}

fn ms_or_dash(v: Option<i64>) -> String {
    v.map_or_else(|| "—".into(), seconds)
}

/// The latest row: cards for latency, throughput, failure rates and dead letters, one card per
/// lane, and the budget's use per model class. Cards over a threshold get the class `over`.
#[component]
fn Latest(l: Metrics) -> impl IntoView {
    let p95_over = l.end_to_end_ms.p95.is_some_and(|p| p > P95_ALERT_MS);
    let kpi = |label: &'static str, testid: &'static str, value: String, over: bool| {
        view! {
            <div class=if over { "kpi over" } else { "kpi" }>
                <span class="kpi-label">{label}</span>
                <strong data-testid=testid>{value}</strong>
            </div>
        }
    };
    let lanes = l.lanes.into_iter().map(|lane| {
        let over = lane.oldest_pending_ms.is_some_and(|a| a > OLDEST_PENDING_ALERT_MS);
        view! {
            <div class=if over { "kpi lane over" } else { "kpi lane" } data-testid=format!("lane-{}", lane.lane.as_str())>
                <span class="kpi-label">{format!("{} lane", lane.lane.as_str())}</span>
                <strong>{format!("{} queued · {} in flight", lane.queued, lane.in_flight)}</strong>
                <span class="muted">{format!("oldest pending {}", ms_or_dash(lane.oldest_pending_ms))}</span>
            </div>
        }
    }).collect_view();
    let budget = l.budget;
    view! {
        <p class="muted" data-testid="metrics-at">
            {format!("As of {} UTC, over the last {} min", clock(l.at), l.window_ms / 60_000)}
        </p>
        <div class="kpis">
            {kpi("p50 end-to-end", "kpi-p50", ms_or_dash(l.end_to_end_ms.p50), false)}
            {kpi("p95 end-to-end", "kpi-p95", ms_or_dash(l.end_to_end_ms.p95), p95_over)}
            {kpi("p99 end-to-end", "kpi-p99", ms_or_dash(l.end_to_end_ms.p99), false)}
            {kpi("Throughput", "kpi-throughput", format!("{:.1} / min", l.throughput_per_min), false)}
            {kpi("Failed", "kpi-failed-rate", percent(l.failed_rate), false)}
            {kpi("Dead-lettered", "kpi-dead-letter-rate", percent(l.dead_letter_rate), false)}
            {kpi("Dead letters now", "kpi-dead-letters", l.dead_letters_now.to_string(), false)}
        </div>
        <div class="kpis">{lanes}</div>
        <h2>"Budget use per minute"</h2>
        <table class="grid" data-testid="budget-use">
            <thead><tr><th>"Class"</th><th class="num">"Requests"</th><th class="num">"Input tokens"</th><th class="num">"Output tokens"</th></tr></thead>
            <tbody>
                {budget.is_empty().then(|| view! { <tr><td colspan="4" class="muted">"No budget charges yet."</td></tr> })}
                {budget.into_iter().map(|b| view! {
                    <tr data-testid="budget-row">
                        <td>{b.class}</td>
                        <td class="num">{percent(b.rpm)}</td>
                        <td class="num">{percent(b.itpm)}</td>
                        <td class="num">{percent(b.otpm)}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
}

fn when(ms: Option<i64>, now: i64) -> String {
    match ms {
        None => "never".into(),
        Some(t) => format!("{} s ago", ((now - t).max(0) + 500) / 1000),
    }
}

/// The report as a table.
#[component]
fn HealthTable(h: HealthReport) -> impl IntoView {
    let ok = h.ok;
    let overall = if ok { "ok" } else { "degraded" };
    let cron = when(h.cron_last_run_at, h.now);
    let consumer = when(h.queue_last_consumed_at, h.now);
    let summary = format!("Worker {} — version {}", overall, h.version);
    let anthropic = format!("{} at {}", h.anthropic.kind, h.anthropic.base_url);
    let whoami = format!("{} ({:?})", h.user_id, h.role).to_lowercase();
    let checks = h.checks;
    view! {
        <p data-testid="health-overall" class=if ok { "status ok" } else { "status bad" }>
            {summary}
        </p>
        <table class="grid" data-testid="health-checks">
            <thead><tr><th>"Binding"</th><th>"Status"</th><th>"Detail"</th><th>"ms"</th></tr></thead>
            <tbody>
                <For each=move || checks.clone() key=|c| c.name.clone() let:c>
                    <tr data-testid=format!("check-{}", c.name)>
                        <td>{c.name.clone()}</td>
                        <td class=if c.ok { "ok" } else { "bad" }>{if c.ok { "ok" } else { "failed" }}</td>
                        <td>{c.detail.clone()}</td>
                        <td class="num">{c.latency_ms}</td>
                    </tr>
                </For>
            </tbody>
        </table>
        <dl class="facts">
            <dt>"Anthropic"</dt>
            <dd data-testid="anthropic-target">
                {anthropic}
            </dd>
            <dt>"Signed in as"</dt>
            <dd data-testid="whoami">{whoami}</dd>
            <dt>"Cron last ran"</dt>
            <dd data-testid="cron-last-run">{cron}</dd>
            <dt>"High lane last consumed"</dt>
            <dd data-testid="queue-last-consumed">{consumer}</dd>
        </dl>
    }
}
