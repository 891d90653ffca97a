use leptos::prelude::*;
use leptos_router::components::A;
use pipeline::dto::JobView;

use crate::api;
use crate::components::format::seconds;
use crate::components::ticker::every_second;
use pipeline::money::usd;

/// Every job of the caller (all kinds), filtered, refreshed every second.
#[component]
pub fn Jobs() -> impl IntoView {
    let status = RwSignal::new(String::new());
    let priority = RwSignal::new(String::new());
    let kind = RwSignal::new(String::new());
    let tick = every_second();
    let list = LocalResource::new(move || {
        tick.track();
        let (s, p, k) = (status.get(), priority.get(), kind.get());
        async move { api::list_jobs(&s, &p, &k).await }
    });
    let items = move || {
        list.get()
            .and_then(|r| r.ok())
            .map(|l| l.items)
            .unwrap_or_default()
    };
    let select = |label: &'static str,
                  testid: &'static str,
                  sig: RwSignal<String>,
                  options: &'static [&'static str]| {
        view! {
            <label class="filter">
                {label}
                <select
                    data-testid=testid
                    on:change=move |ev| sig.set(event_target_value(&ev))
                >
                    <option value="">"any"</option>
                    {options.iter().map(|o| view! { <option value=*o>{*o}</option> }).collect_view()}
                </select>
            </label>
        }
    };
    view! {
        <section class="page" data-testid="page-jobs">
            <h1>"Jobs"</h1>
            <div class="filters">
                {select("Status", "filter-status", status, &["queued", "running", "submitted", "completed", "failed", "dead_lettered", "expired", "canceled", "enqueue_failed"])}
                {select("Priority", "filter-priority", priority, &["high", "bulk"])}
                {select("Kind", "filter-kind", kind, &["feedback", "prompt", "pdf"])}
            </div>
            <p class="error">{move || list.get().and_then(|r| r.err()).map(|e| e.to_string())}</p>
            <table class="grid" data-testid="jobs-table">
                <thead>
                    <tr>
                        <th>"Job"</th><th>"Kind"</th><th>"Status"</th><th>"Priority"</th>
                        <th>"Model"</th><th class="num">"Elapsed"</th><th class="num">"Cost"</th>
                    </tr>
                </thead>
                <tbody>
                    <For each=items key=|j| (j.id.clone(), j.status, j.elapsed_ms / 100) let:j>
                        <JobRow j=j />
                    </For>
                </tbody>
            </table>
        </section>
    }
}

#[component]
fn JobRow(j: JobView) -> impl IntoView {
    let status = j.status.to_string();
    let testid = format!("jobrow-{}", j.id);
    let href = format!("/ui/jobs/{}", j.id);
    let short: String = j.id.chars().take(8).collect();
    view! {
        <tr data-testid=testid>
            <td><A href=href>{short}</A></td>
            <td>{j.kind.as_str()}</td>
            <td><span class=format!("badge {status}")>{status.clone()}</span></td>
            <td>{j.priority.as_str()}</td>
            <td>{j.model.clone()}</td>
            <td class="num">{seconds(j.elapsed_ms)}</td>
            <td class="num">{if j.cost_unknown { "?".to_string() } else { usd(j.cost_micros) }}</td>
        </tr>
    }
}
