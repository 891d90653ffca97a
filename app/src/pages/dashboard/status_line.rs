//! The Dashboard's first line (`pipeline::ops::status`): all clear, or what is wrong, where
//! (a link to the section that explains it) and since when; then the sections to jump between.

use leptos::prelude::*;
use pipeline::ops::metrics::MetricsReport;
use pipeline::ops::route_health::RoutesReport;
use pipeline::ops::status::{route_items, status_line};
use pipeline::pause::PauseList;

use crate::api::ApiError;
use crate::components::format::when;

/// The status line, from the metrics, the pauses in force and the routes' breakers (a route
/// report that did not come is left out: the line does not wait for it).
#[component]
pub fn StatusLine(
    metrics: LocalResource<Result<MetricsReport, ApiError>>,
    pauses: LocalResource<Result<PauseList, ApiError>>,
    routes: LocalResource<Result<RoutesReport, ApiError>>,
) -> impl IntoView {
    move || match (metrics.get(), pauses.get()) {
        (Some(Ok(m)), Some(Ok(p))) => {
            let routes = routes.get().and_then(Result::ok);
            line(&m, &p, routes.as_ref()).into_any()
        }
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

fn line(m: &MetricsReport, p: &PauseList, routes: Option<&RoutesReport>) -> impl IntoView {
    let mut items = status_line(m, p);
    items.extend(routes.map(route_items).unwrap_or_default());
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
    const SECTIONS: [(&str, &str); 8] = [
        ("#paths", "Sync and batch"),
        ("#routes", "Routes"),
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
