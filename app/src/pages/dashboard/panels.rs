//! The panels below the Dashboard's first screen, with the resources they alone read
//! ([`super::below`] decides when they are drawn).

use leptos::prelude::*;
use leptos::wasm_split::SplitLoaderError;

use super::health_table::HealthTable;
use super::reconciliation_table::ReconciliationTable;
use super::rollout_table::RolloutTable;
use super::routes_table::RoutesTable;
use super::routing_table::RoutingTable;
use super::sections::{
    check_again, heading, Shared, CACHE, HEALTH, RECONCILIATION, ROLLOUT, ROUTES, ROUTING, TAGS,
};
use super::{ROLLOUT_HOURS, ROUTING_DAYS};
use crate::api;
use crate::components::fetched::fetched;

/// What the panels are drawn with: the Dashboard's owner (their resources live and go with the
/// page) and what they share with the first screen.
pub struct Args {
    pub owner: Owner,
    pub shared: Shared,
}

/// The panels. In the Dashboard's bundle, a split point: this function and what only it
/// reaches are a chunk of their own, and calling it fetches the chunk first — which can fail
/// (the line dropped; a deploy since the page was loaded took the chunk away), so the answer
/// is a `Result`. Boxed in and out: a split function is called through the C ABI.
#[allow(clippy::boxed_local)] // the box is the ABI, not an allocation to spare
#[cfg_attr(
    feature = "dashboard-bundle",
    leptos::wasm_split::wasm_split(
        dashboard_panels,
        wasm_split_path = ::leptos::wasm_split,
        fallible
    )
)]
pub fn panels(args: Box<Args>) -> Result<Box<AnyView>, SplitLoaderError> {
    let Args { owner, shared } = *args;
    Ok(owner.with(|| Box::new(view(shared))))
}

fn view(shared: Shared) -> AnyView {
    let Shared {
        tick,
        health,
        routes,
    } = shared;
    let rollout = LocalResource::new(move || {
        tick.track();
        api::rollout(ROLLOUT_HOURS)
    });
    let routing = LocalResource::new(move || {
        tick.track();
        api::routing(ROUTING_DAYS)
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
        {heading(&ROUTES)}
        {fetched(routes, ROUTES.loading, "routes-error", move |r| view! { <RoutesTable r=r /> })}
        {heading(&ROLLOUT)}
        {fetched(rollout, ROLLOUT.loading, "rollout-error", move |r| view! { <RolloutTable r=r hours=ROLLOUT_HOURS /> })}
        {heading(&ROUTING)}
        {fetched(routing, ROUTING.loading, "routing-error", move |r| view! { <RoutingTable r=r /> })}
        {heading(&TAGS)}
        {fetched(tags, TAGS.loading, "dashboard-tags-error", move |r| view! { <crate::pages::usage::tags::TagTable r=r /> })}
        {heading(&CACHE)}
        {fetched(cache, CACHE.loading, "dashboard-cache-error", move |r| view! { <crate::pages::usage::cache::CacheTable r=r /> })}
        {heading(&RECONCILIATION)}
        {fetched(reconciliation, RECONCILIATION.loading, "recon-error", move |r| match r {
            Ok(r) => view! { <ReconciliationTable r=r /> }.into_any(),
            Err(note) => view! { <p class="muted" data-testid="recon-note">{note}</p> }.into_any(),
        })}
        {heading(&HEALTH)}
        {check_again(health)}
        {fetched(health, HEALTH.loading, "health-error", move |h| view! { <HealthTable h=h /> })}
    }
    .into_any()
}
