//! The Dead letters page's filters and its bulk replay.

use leptos::prelude::*;
use pipeline::clock::{parse_day, DAY_MS};
use pipeline::ops::dlq::DlqFilter;
use pipeline::outcome::ErrorClass;
use pipeline::status::Status;

use super::actions::BulkReplay;
use crate::takeover::kept;

/// The filter the typed fields describe: empty fields mean any; `to` includes its whole day.
pub fn filter_of(
    status: &str,
    class: &str,
    user: &str,
    model: &str,
    from: &str,
    to: &str,
) -> DlqFilter {
    let text = |s: &str| Some(s.trim().to_string()).filter(|t| !t.is_empty());
    DlqFilter {
        status: Some(status.to_string()),
        error_class: text(class),
        user: text(user),
        model: text(model),
        from: parse_day(from),
        to: parse_day(to).map(|t| t + DAY_MS),
    }
}

/// The error class choices of a filter: any, or one class.
pub fn class_options() -> impl IntoView {
    view! {
        <option value="">"any"</option>
        {ErrorClass::ALL.map(|c| view! { <option value=c.as_str()>{c.as_str()}</option> }).collect_view()}
    }
}

/// Status (dead-lettered, failed or both), error class, user, model and the days the jobs
/// ended in; Apply sets `filter`, "Replay all matching" replays what it matches.
#[component]
pub fn DlqFilters(
    filter: RwSignal<DlqFilter>,
    bulk: BulkReplay,
    error: RwSignal<Option<String>>,
) -> impl IntoView {
    // What was chosen or typed in the build-time shell before the wasm arrived, if anything.
    let status = kept("dlq-status", Status::DeadLettered.as_str());
    let [class, user, model, from, to] =
        ["dlq-class", "dlq-user", "dlq-model", "dlq-from", "dlq-to"].map(|t| kept(t, ""));
    let apply = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        error.set(None);
        filter.set(filter_of(
            &status.get(),
            &class.get(),
            &user.get(),
            &model.get(),
            &from.get(),
            &to.get(),
        ));
    };
    let input = move |sig: RwSignal<String>| move |ev| sig.set(event_target_value(&ev));
    let statuses = DlqFilter::STATUSES.map(|s| (s, s.replace('_', "-")));
    let replaying = bulk.pending();
    let waiting = crate::takeover::waiting();
    view! {
        <form class="filters" on:submit=apply>
            <label class="filter">"Status"
                <select data-testid="dlq-status" on:change=input(status)>
                    {statuses.map(|(v, label)| view! { <option value=v>{label}</option> }).collect_view()}
                </select>
            </label>
            <label class="filter">"Error class"
                <select data-testid="dlq-class" on:change=input(class)>
                    {class_options()}
                </select>
            </label>
            <label class="filter">"User"
                <input data-testid="dlq-user" size="12" prop:value=user on:input=input(user) />
            </label>
            <label class="filter">"Model"
                <input data-testid="dlq-model" size="18" prop:value=model on:input=input(model) />
            </label>
            <label class="filter">"Ended from"
                <input type="date" data-testid="dlq-from" prop:value=from on:input=input(from) />
            </label>
            <label class="filter">"to"
                <input type="date" data-testid="dlq-to" prop:value=to on:input=input(to) />
            </label>
            <button type="submit" class="primary" data-testid="dlq-apply" disabled=waiting>"Apply"</button>
            <button type="button" class="secondary" data-testid="dlq-replay-all"
                disabled=move || replaying.get()
                on:click=move |_| { bulk.dispatch(filter.get_untracked()); }>
                "Replay all matching"
            </button>
        </form>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_fields_mean_any_and_the_last_day_is_included() {
        let f = filter_of("failed", " ", "", " opus ", "", "");
        assert_eq!(f.status.as_deref(), Some("failed"));
        assert_eq!((f.error_class, f.user), (None, None));
        assert_eq!(f.model.as_deref(), Some("opus"));
        let f = filter_of("all", "", "", "", "1970-01-02", "1970-01-02");
        assert_eq!(f.from, Some(DAY_MS));
        assert_eq!(f.to, Some(2 * DAY_MS));
    }
}
