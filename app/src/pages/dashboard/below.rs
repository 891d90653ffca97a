//! The Dashboard below its first screen: routes, rollout, deadline routing, cost by tag, prompt
//! cache, reconciliation and health ([`super::panels`]). In the whole app they are drawn with
//! the page. In the Dashboard's own bundle (`dashboard-bundle`) their code is a wasm chunk of
//! its own, split off at build time (`cargo xtask build`, wasm_split): the first screen hydrates
//! and draws without it, then the chunk is fetched and the panels take the place of their
//! headings and loading lines — the same headings and lines the build-time shell shows, so
//! nothing moves when they arrive.

use leptos::prelude::*;

use super::panels;
use super::sections::Shared;
#[cfg(feature = "dashboard-bundle")]
use super::sections::{
    check_again, heading, Panel, CACHE, HEALTH, RECONCILIATION, ROLLOUT, ROUTES, ROUTING, TAGS,
};
#[cfg(feature = "dashboard-bundle")]
use crate::components::layout::Health;

/// The panels below the first screen; `drawn` says when the first screen is (its data came).
#[component]
pub fn Below(shared: Shared, drawn: Signal<bool>) -> impl IntoView {
    #[cfg(not(feature = "dashboard-bundle"))]
    {
        let _ = drawn;
        let owner = Owner::current().unwrap_or_default();
        shown(panels::panels(Box::new(panels::Args { owner, shared })))
    }
    #[cfg(feature = "dashboard-bundle")]
    lazily(shared, drawn)
}

/// Their headings and loading lines until their chunk has come, then the panels. The chunk is
/// asked for once the first screen is drawn, so that drawing never waits behind the panels':
/// asked at hydration, a warm visit found it in the cache at once and drew the panels before
/// the first screen's charts (the warm Dashboard ≈ 250 ms later at phone speed, README).
#[cfg(feature = "dashboard-bundle")]
fn lazily(shared: Shared, drawn: Signal<bool>) -> impl IntoView {
    let slot = StoredValue::new_local(None::<AnyView>);
    let ready = RwSignal::new(false);
    let owner = Owner::current();
    // An effect runs in the browser alone, after hydration.
    Effect::new(move |asked: Option<bool>| {
        if asked == Some(true) || !drawn.get() {
            return asked == Some(true);
        }
        let owner = owner.clone().unwrap_or_default();
        leptos::task::spawn_local(async move {
            let view = panels::panels(Box::new(panels::Args { owner, shared })).await;
            slot.set_value(Some(shown(view)));
            ready.set(true);
        });
        true
    });
    move || {
        let view = ready
            .get()
            .then(|| slot.try_update_value(Option::take).flatten())
            .flatten();
        view.unwrap_or_else(|| placeholder(shared.health))
    }
}

/// The panels, or why they are missing.
fn shown(panels: Result<Box<AnyView>, leptos::wasm_split::SplitLoaderError>) -> AnyView {
    match panels {
        Ok(view) => *view,
        Err(e) => view! {
            <p class="error" data-testid="panels-error">
                {format!("The panels below could not be loaded ({e}): reload the page.")}
            </p>
        }
        .into_any(),
    }
}

/// What the shell shows below the first screen, and the page until the panels' chunk has come.
#[cfg(feature = "dashboard-bundle")]
fn placeholder(health: Health) -> AnyView {
    let waiting = |p: &Panel| view! { {heading(p)} <p class="muted">{p.loading}</p> };
    view! {
        {[ROUTES, ROLLOUT, ROUTING, TAGS, CACHE, RECONCILIATION].iter().map(waiting).collect_view()}
        {heading(&HEALTH)}
        {check_again(health)}
        <p class="muted">{HEALTH.loading}</p>
    }
    .into_any()
}
