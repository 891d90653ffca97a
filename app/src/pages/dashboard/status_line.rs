//! The Dashboard's first line (`pipeline::ops::status`): all clear, or what is wrong, where
//! (a link to the section that explains it) and since when; then the sections to jump between.

use leptos::prelude::*;
use pipeline::ops::metrics::MetricsReport;
use pipeline::ops::status::status_line;
use pipeline::pause::PauseList;

use crate::api::ApiError;
use crate::components::format::when;

/// The status line, from the metrics and the pauses in force.
#[component]
pub fn StatusLine(
    metrics: LocalResource<Result<MetricsReport, ApiError>>,
    pauses: LocalResource<Result<PauseList, ApiError>>,
) -> impl IntoView {
    move || match (metrics.get(), pauses.get()) {
        (Some(Ok(m)), Some(Ok(p))) => line(&m, &p).into_any(),
        (Some(Err(e)), _) | (_, Some(Err(e))) => view! {
            <p class="status alert" data-testid="status-line" data-state="unknown">
                {format!("Status unknown: {e}")}
            </p>
        }
        .into_any(),
        _ => view! {
            <p class="status muted" data-testid="status-line" data-state="loading">"Checking…"</p>
        }
        .into_any(),
    }
}

fn line(m: &MetricsReport, p: &PauseList) -> impl IntoView {
    let items = status_line(m, p);
    if items.is_empty() {
        return view! {
            <p class="status ok" data-testid="status-line" data-state="ok">
                "All clear: no warning, no open dead letter, nothing paused."
            </p>
        }
        .into_any();
    }
    view! {
        <ul class="status alert" data-testid="status-line" data-state="alert">
            {items.into_iter().map(|i| {
                let since = i.since.map(|t| format!(" (since {} UTC)", when(t))).unwrap_or_default();
                view! {
                    <li data-testid="status-item">
                        <a href=i.section.href()>{i.text}</a>{since}
                    </li>
                }
            }).collect_view()}
        </ul>
    }
    .into_any()
}

/// The sections, in the order the page shows them.
#[component]
pub fn SectionNav() -> impl IntoView {
    const SECTIONS: [(&str, &str); 7] = [
        ("#paths", "Sync and batch"),
        ("#headroom", "Headroom"),
        ("#models", "Models"),
        ("#routing", "Routing"),
        ("#cost", "Cost"),
        ("#health", "Health"),
        ("#controls", "Controls"),
    ];
    view! {
        <nav class="sections" data-testid="dashboard-nav">
            {SECTIONS.into_iter().map(|(href, name)| view! { <a href=href>{name}</a> }).collect_view()}
        </nav>
    }
}
