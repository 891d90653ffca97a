//! The Dashboard (`/ui/dashboard`, admins): live metrics and the Worker's health.

mod budget_use;
mod headroom;
mod health_table;
mod lane_card;
mod latest;
mod metrics_view;
mod models_watch;
mod paths;
mod pauses;
mod reconciliation_table;
mod rollout_table;
mod routes_table;
mod routing_table;
mod series;
mod status_line;
mod unrecorded;

use std::time::Duration;

use leptos::prelude::*;

use crate::api::{self, gets};
use crate::components::fetched::fetched;
use crate::components::layout::Health;
use crate::components::ticker::every;
use health_table::HealthTable;
use metrics_view::MetricsView;
use pauses::Pauses;
use reconciliation_table::ReconciliationTable;
use rollout_table::RolloutTable;
use routes_table::RoutesTable;
use routing_table::RoutingTable;
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
    let rollout = LocalResource::new(move || {
        tick.track();
        api::rollout(ROLLOUT_HOURS)
    });
    let routing = LocalResource::new(move || {
        tick.track();
        api::routing(ROUTING_DAYS)
    });
    let routes = LocalResource::new(move || {
        tick.track();
        api::routes()
    });
    let cache = LocalResource::new(move || {
        tick.track();
        // Every user's jobs, the Usage default: the 30 days up to today.
        api::cache_use("", "", "")
    });
    let tags = LocalResource::new(move || {
        tick.track();
        // Every user's jobs over the Usage default (the 30 days up to today).
        api::tag_usage("", "", "")
    });
    // Not configured (409) or not run yet (404) is a note, not an error.
    let reconciliation = LocalResource::new(move || {
        tick.track();
        async move {
            match api::reconciliation().await {
                Ok(r) => Ok(Ok(r)),
                Err(e) if matches!(e.status, 404 | 409) => Ok(Err(e.message)),
                Err(e) => Err(e),
            }
        }
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
            <h2 id="routes">"Routes: the Anthropic API, Bedrock, Vertex AI"</h2>
            {fetched(routes, "Loading the routes…", "routes-error", move |r| view! { <RoutesTable r=r /> })}
            <h2 id="routing">"Rollout: direct and queue path"</h2>
            {fetched(rollout, "Loading the rollout…", "rollout-error", move |r| view! { <RolloutTable r=r hours=ROLLOUT_HOURS /> })}
            <h2>"Deadline routing"</h2>
            {fetched(routing, "Loading the routing figures…", "routing-error", move |r| view! { <RoutingTable r=r /> })}
            <h2 id="cost">"Cost by tag, every user"</h2>
            {fetched(tags, "Loading tags…", "dashboard-tags-error", move |r| view! { <crate::pages::usage::tags::TagTable r=r /> })}
            <h2>"Prompt cache, every user"</h2>
            {fetched(cache, "Loading cache use…", "dashboard-cache-error", move |r| view! { <crate::pages::usage::cache::CacheTable r=r /> })}
            <h2>"Reconciliation with Anthropic's bill"</h2>
            {fetched(reconciliation, "Loading the reconciliation…", "recon-error", move |r| match r {
                Ok(r) => view! { <ReconciliationTable r=r /> }.into_any(),
                Err(note) => view! { <p class="muted" data-testid="recon-note">{note}</p> }.into_any(),
            })}
            <h2 id="health">"Health"</h2>
            <div class="toolbar">
                <button data-testid="refresh-health" on:click=move |_| health.refetch()>
                    "Check again"
                </button>
            </div>
            {fetched(health, "Asking the Worker…", "health-error", move |h| view! { <HealthTable h=h /> })}
            // Last: the controls; their effect shows in the status line above.
            <div id="controls">
                <Pauses list=pauses />
            </div>
        </section>
    }
}
