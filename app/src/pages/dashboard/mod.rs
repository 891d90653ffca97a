//! The Dashboard (`/ui/dashboard`, admins): live metrics and the Worker's health.

mod below;
mod budget_use;
mod headroom;
mod health_table;
mod lane_card;
mod latest;
mod metrics_view;
mod models_watch;
mod panels;
mod paths;
mod pauses;
mod reconciliation_table;
mod rollout_table;
mod routes_table;
mod routing_table;
mod sections;
mod series;
mod status_line;
mod unrecorded;

use std::time::Duration;

use leptos::prelude::*;

use crate::api::{self, gets};
use crate::components::fetched::fetched;
use crate::components::layout::Health;
use crate::components::ticker::every;
use below::Below;
use metrics_view::MetricsView;
use pauses::Pauses;
use sections::Shared;
use status_line::{SectionNav, StatusLine};

/// How much history the charts show, and how often they refresh.
const MINUTES: u32 = 60;
/// The rollout panel's window: the seed compares the paths for 48 hours before each step.
const ROLLOUT_HOURS: u32 = 48;
/// The routing panel's window.
const ROUTING_DAYS: u32 = 7;
const REFRESH: Duration = Duration::from_secs(10);

/// The GETs the Dashboard's first draw makes, each as its resource below asks it (besides the
/// frame's health): `boot.js` starts them with the page (`crate::shell::first_gets`).
pub(crate) fn first_gets() -> Vec<String> {
    vec![
        gets::metrics(MINUTES),
        gets::pauses(),
        gets::rollout(ROLLOUT_HOURS),
        gets::routing(ROUTING_DAYS),
        gets::routes(),
        gets::usage("/api/usage/cache", "", "", ""),
        gets::usage("/api/usage/tags", "", "", ""),
        gets::reconciliation(),
    ]
}

/// Operations, read top-down: the status line (what is wrong, where, since when) and the
/// sections to jump to; then the paths (alerts, latency, throughput, lanes, tokens, failures,
/// budget use), cost, routing, models, headroom and health; the controls (pauses) last.
/// Refreshed every 10 s.
#[component]
pub fn Dashboard() -> impl IntoView {
    // The frame's report (one request for both): "Check again" refreshes the header's too.
    let health = expect_context::<Health>();
    let tick = every(REFRESH);
    let metrics = LocalResource::new(move || {
        tick.track();
        api::metrics(MINUTES)
    });
    let pauses = LocalResource::new(move || {
        tick.track();
        api::pauses()
    });
    // The status line reads the routes' breakers; their table is below the first screen.
    let routes = LocalResource::new(move || {
        tick.track();
        api::routes()
    });
    view! {
        <section class="page" data-testid="page-dashboard">
            <h1>"Dashboard"</h1>
            // First: is anything wrong, where, since when.
            <StatusLine metrics=metrics pauses=pauses routes=routes />
            <SectionNav />
            <div id="paths">
                {fetched(metrics, "Loading metrics…", "metrics-error", move |m| view! { <MetricsView m=m /> })}
            </div>
            <Below
                shared=Shared { tick, health, routes }
                drawn=Signal::derive(move || metrics.with(Option::is_some))
            />
            // Last: the controls; their effect shows in the status line above.
            <div id="controls">
                <Pauses list=pauses />
            </div>
        </section>
    }
}
