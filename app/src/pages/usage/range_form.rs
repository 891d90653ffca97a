//! The Usage page's filters: the range, the user (admins), Apply and CSV.

use leptos::prelude::*;
use pipeline::ops::usage::UsageReport;

use crate::api::ApiError;

/// The range (and, for admins, the user) a report is asked for; empty means the Worker's
/// default (the last 30 days, the caller).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Range {
    pub from: String,
    pub to: String,
    pub user: String,
}

/// From / to dates (filled with the range the Worker chose when none was typed), the user for
/// admins, Apply (sets `applied`) and the CSV download.
#[component]
pub fn RangeForm(
    report: LocalResource<Result<UsageReport, ApiError>>,
    applied: RwSignal<Range>,
    user: RwSignal<String>,
    admin: impl Fn() -> bool + Copy + Send + Sync + 'static,
    csv: Action<(), Result<(), String>>,
) -> impl IntoView {
    let from = crate::takeover::kept("usage-from", "");
    let to = crate::takeover::kept("usage-to", "");
    Effect::new(move |_| {
        if let Some(Ok(r)) = report.get() {
            if from.get_untracked().is_empty() {
                from.set(r.from.clone());
            }
            if to.get_untracked().is_empty() {
                to.set(r.to);
            }
        }
    });
    let apply = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        applied.set(Range {
            from: from.get(),
            to: to.get(),
            user: if admin() {
                user.get().trim().to_string()
            } else {
                String::new()
            },
        });
    };
    let downloading = csv.pending();
    let waiting = crate::takeover::waiting();
    view! {
        <form class="filters" on:submit=apply>
            <label class="filter">"From"
                <input type="date" data-testid="usage-from" prop:value=from
                    on:input=move |ev| from.set(event_target_value(&ev)) />
            </label>
            <label class="filter">"To"
                <input type="date" data-testid="usage-to" prop:value=to
                    on:input=move |ev| to.set(event_target_value(&ev)) />
            </label>
            <Show when=admin>
                <label class="filter">"User"
                    <input data-testid="usage-user" size="14" placeholder="you" prop:value=user
                        on:input=move |ev| user.set(event_target_value(&ev)) />
                </label>
            </Show>
            <button type="submit" class="primary" data-testid="usage-apply" disabled=waiting>"Apply"</button>
            <button type="button" class="secondary" data-testid="usage-csv"
                disabled=move || downloading.get()
                on:click=move |_| { csv.dispatch(()); }>
                "Download CSV"
            </button>
        </form>
    }
}
