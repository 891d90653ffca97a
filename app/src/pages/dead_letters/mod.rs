//! The Dead letters page (`/ui/dead-letters`, admins): triage of jobs whose retries ran out.

mod actions;
mod bulk_panel;
mod details;
mod discard_button;
mod dlq_pages;
mod dlq_row;
mod edit_form;
mod filters;
mod notices;
mod replay_buttons;

use std::time::Duration;

use leptos::prelude::*;
use pipeline::ops::dlq::DlqFilter;
use pipeline::status::Status;

use crate::api;
use crate::components::fetched::fetched;
use crate::components::ticker::every;
use actions::report_outcome;
use dlq_pages::DlqPages;
use filters::DlqFilters;
use notices::Notices;

/// What the list shows first: the dead letters, any error, user, model or day.
fn first_filter() -> DlqFilter {
    DlqFilter {
        status: Some(Status::DeadLettered.as_str().into()),
        ..DlqFilter::default()
    }
}

/// The GETs the page's first draw makes, started by `boot.js` with the page
/// (`crate::shell::first_gets`).
pub(crate) fn first_gets() -> Vec<String> {
    vec![api::gets::dlq(&first_filter(), None)]
}

/// Jobs whose retries ran out (or that failed), with their last error, attempts and audit, for
/// triage: replay as is, edit then replay, replay everything matching, or discard.
#[component]
pub fn DeadLetters() -> impl IntoView {
    let filter = RwSignal::new(first_filter());
    let error = RwSignal::new(None::<String>);
    let (replay, discard, bulk) = (
        actions::replay(),
        actions::discard(),
        actions::bulk_replay(),
    );
    report_outcome(replay, error);
    report_outcome(discard, error);
    report_outcome(bulk, error);
    // While a replay shown here has not ended, the list refreshes every 2 s to follow it.
    let following = RwSignal::new(false);
    let tick = every(Duration::from_secs(2));
    // The first page follows the filter and every change made here.
    let first = LocalResource::new(move || {
        let f = filter.get();
        if following.get() {
            tick.track();
        }
        replay.version().track();
        discard.version().track();
        bulk.version().track();
        async move { api::list_dlq(&f, None).await }
    });
    let page = move || first.get().and_then(|r| r.ok());
    Effect::new(move |_| {
        let open = page().is_some_and(|p| {
            p.items
                .iter()
                .any(|i| i.replay_status.is_some_and(|s| !s.is_terminal()))
        });
        if following.get_untracked() != open {
            following.set(open);
        }
    });
    view! {
        <section class="page" data-testid="page-dead-letters">
            <h1>"Dead letters"</h1>
            <p>
                <strong data-testid="dlq-count">{move || page().map(|p| p.dead_lettered.to_string())}</strong>
                " dead-lettered jobs now"
            </p>
            <DlqFilters filter=filter bulk=bulk error=error />
            {move || error.get().map(|e| view! { <p class="error" data-testid="dlq-error">{e}</p> })}
            <Notices bulk=bulk replay=replay />
            <bulk_panel::BulkPanel />
            {fetched(first, "Loading…", "dlq-error", move |p| view! {
                            <DlqPages first=p filter=filter replay=replay discard=discard error=error />
                        })}
        </section>
    }
}
