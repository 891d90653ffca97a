use leptos::prelude::*;
use pipeline::dto::HealthReport;

use crate::api;

/// Operations: for now, the Worker's health report — one row per binding it touched.
#[component]
pub fn Dashboard() -> impl IntoView {
    let health = LocalResource::new(api::health);
    view! {
        <section class="page" data-testid="page-dashboard">
            <h1>"Dashboard"</h1>
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
