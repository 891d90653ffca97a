//! "Act on many jobs" (issue 36, incident tools): replay the dead letters and failures, or
//! cancel or expire the queued jobs, that a filter matches — counted first (a dry run), then a
//! slice per click (`POST /api/ops/bulk`: 100 replays or 500 cancels at a time), each audited.

use leptos::prelude::*;
use pipeline::ops::bulk::{Action as BulkAction, BulkFilter, BulkReport, BulkRequest};
use pipeline::outcome::ErrorClass;
use pipeline::status::Lane;

use crate::api::{self, ApiError};

/// The request the typed fields describe (empty fields mean any).
pub fn request_of(action: &str, fields: [&str; 5], dry_run: bool) -> Result<BulkRequest, String> {
    let text = |s: &str| Some(s.trim().to_string()).filter(|t| !t.is_empty());
    let action = match action {
        "cancel" => BulkAction::Cancel,
        "expire" => BulkAction::Expire,
        _ => BulkAction::Replay,
    };
    let [user, tag, model, class, lane] = fields;
    let filter = BulkFilter {
        user: text(user),
        tag: text(tag),
        model: text(model),
        error_class: text(class).and_then(|c| ErrorClass::parse(&c)),
        lane: Lane::ALL.into_iter().find(|l| l.as_str() == lane),
        ..BulkFilter::default()
    };
    if filter == BulkFilter::default() {
        return Err("name a user, a tag, a model, an error class or a lane first".into());
    }
    Ok(BulkRequest {
        action,
        filter,
        dry_run,
        reason: None,
    })
}

fn summary(r: &BulkReport) -> String {
    let verb = match r.action {
        BulkAction::Cancel => "canceled",
        BulkAction::Expire => "expired",
        BulkAction::Replay => "replayed",
        BulkAction::Pause => "paused",
    };
    match r.dry_run {
        true => format!("{} jobs match.", r.matched),
        false => format!("{} {verb}; {} still match.", r.acted, r.remaining),
    }
}

#[component]
pub fn BulkPanel() -> impl IntoView {
    let action = RwSignal::new("replay".to_string());
    let [user, tag, model, class, lane] = [(); 5].map(|_| RwSignal::new(String::new()));
    let outcome = RwSignal::new(None::<Result<BulkReport, String>>);
    let send = Action::new_local(|req: &BulkRequest| {
        let req = req.clone();
        async move { api::bulk(&req).await }
    });
    Effect::new(move |_| {
        if let Some(r) = send.value().get() {
            outcome.set(Some(r.map_err(|e: ApiError| e.to_string())));
        }
    });
    let go = move |dry_run: bool| {
        let fields = [user, tag, model, class, lane].map(|s| s.get_untracked());
        let fields = [0, 1, 2, 3, 4].map(|i| fields[i].as_str());
        match request_of(&action.get_untracked(), fields, dry_run) {
            Ok(req) => {
                send.dispatch(req);
            }
            Err(why) => outcome.set(Some(Err(why))),
        }
    };
    let input = move |sig: RwSignal<String>| move |ev| sig.set(event_target_value(&ev));
    let counted = move || matches!(outcome.get(), Some(Ok(_)));
    view! {
        <details class="bulk" data-testid="bulk-panel">
            <summary>"Act on many jobs"</summary>
            <form class="filters" on:submit=move |ev| { ev.prevent_default(); go(true); }>
                <label class="filter">"Action"
                    <select data-testid="bulk-action" on:change=input(action)>
                        <option value="replay">"replay dead letters and failures"</option>
                        <option value="cancel">"cancel queued jobs"</option>
                        <option value="expire">"expire queued jobs"</option>
                    </select>
                </label>
                <label class="filter">"User"<input data-testid="bulk-user" size="12" on:input=input(user) /></label>
                <label class="filter">"Tag"<input data-testid="bulk-tag" size="14" placeholder="key=value" on:input=input(tag) /></label>
                <label class="filter">"Model"<input data-testid="bulk-model" size="18" on:input=input(model) /></label>
                <label class="filter">"Error class"
                    <select data-testid="bulk-class" on:change=input(class)>
                        {super::filters::class_options()}
                    </select>
                </label>
                <label class="filter">"Lane"
                    <select data-testid="bulk-lane" on:change=input(lane)>
                        <option value="">"any"</option>
                        <option value="high">"high"</option>
                        <option value="bulk">"bulk"</option>
                    </select>
                </label>
                <button type="submit" class="secondary" data-testid="bulk-count"
                    disabled=move || send.pending().get()>"Count (dry run)"</button>
                <button type="button" class="primary" data-testid="bulk-act"
                    disabled=move || send.pending().get() || !counted()
                    on:click=move |_| go(false)>"Act on the next slice"</button>
            </form>
            {move || outcome.get().map(|o| match o {
                Ok(r) => view! { <p data-testid="bulk-result">{summary(&r)}</p> }.into_any(),
                Err(e) => view! { <p class="error" data-testid="bulk-error">{e}</p> }.into_any(),
            })}
        </details>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fields_make_a_request_and_an_empty_filter_is_refused() {
        let r = request_of("cancel", ["", " run=nightly ", "", "", "bulk"], true).unwrap();
        assert_eq!(r.action, BulkAction::Cancel);
        assert_eq!(r.filter.tag.as_deref(), Some("run=nightly"));
        assert_eq!(r.filter.lane, Some(Lane::Bulk));
        assert!(r.dry_run);
        let r = request_of("replay", ["ann", "", "", "overloaded", ""], false).unwrap();
        assert_eq!(r.filter.error_class, Some(ErrorClass::Overloaded));
        assert!(!r.dry_run);
        assert!(request_of("expire", ["", " ", "", "", ""], true).is_err());
    }
}
