//! The Jobs page (`/ui/jobs`): every job of the caller, filtered, live.

mod filter_select;
mod job_row;

use leptos::prelude::*;
use pipeline::status::{Kind, Lane, Status};

use crate::api;
use crate::components::fetched::fetched;
use crate::components::ticker::every_second;
use crate::takeover::kept;
use filter_select::FilterSelect;
use job_row::JobRow;

/// The GETs the Jobs page's first draw makes (the filters at their defaults), started by
/// `boot.js` with the page (`crate::shell::first_gets`).
pub(crate) fn first_gets() -> Vec<String> {
    vec![crate::api::gets::jobs("", "", "")]
}

/// Every job of the caller (all kinds), filtered, refreshed every second.
#[component]
pub fn Jobs() -> impl IntoView {
    // A filter chosen in the build-time shell before the wasm arrived applies.
    let status = kept("filter-status", "");
    let priority = kept("filter-priority", "");
    let kind = kept("filter-kind", "");
    let tick = every_second();
    let list = LocalResource::new(move || {
        tick.track();
        let (s, p, k) = (status.get(), priority.get(), kind.get());
        async move { api::list_jobs(&s, &p, &k).await }
    });
    let statuses = Status::ALL.map(Status::as_str).to_vec();
    let lanes = Lane::ALL.map(Lane::as_str).to_vec();
    let kinds = Kind::ALL.map(Kind::as_str).to_vec();
    view! {
        <section class="page" data-testid="page-jobs">
            <h1>"Jobs"</h1>
            <div class="filters">
                <FilterSelect label="Status" testid="filter-status" value=status options=statuses />
                <FilterSelect label="Priority" testid="filter-priority" value=priority options=lanes />
                <FilterSelect label="Kind" testid="filter-kind" value=kind options=kinds />
            </div>
            {fetched(list, "Loading…", "jobs-error", move |l| view! {
                <table class="grid" data-testid="jobs-table">
                    <thead>
                        <tr>
                            <th>"Job"</th><th>"Kind"</th><th>"Status"</th><th>"Priority"</th>
                            <th>"Model"</th><th class="num">"Elapsed"</th><th class="num">"Cost"</th>
                        </tr>
                    </thead>
                    <tbody>
                        {l.items.into_iter().map(|j| view! { <JobRow j=j /> }).collect_view()}
                    </tbody>
                </table>
            })}
        </section>
    }
}
