//! Pause and resume (admins): what is paused, a resume button for each, and a form to pause a
//! lane, a model or a user. Paused work waits, queued, until resumed.

use leptos::prelude::*;
use pipeline::pause::PauseList;

use crate::api;
use crate::components::fetched::fetched;
use crate::components::format::when;

/// The pauses (`list`, the Dashboard's: the status line reads the same), refreshed after each
/// pause or resume.
#[component]
pub fn Pauses(list: LocalResource<Result<PauseList, api::ApiError>>) -> impl IntoView {
    let scope = RwSignal::new("lane".to_string());
    let value = RwSignal::new(String::new());
    let reason = RwSignal::new(String::new());
    let pause = Action::new_local(move |_: &()| {
        let (s, v, r) = (
            scope.get_untracked(),
            value.get_untracked(),
            reason.get_untracked(),
        );
        async move {
            let done = api::pause(&s, &v, &r).await.map(|_| ());
            list.refetch();
            done
        }
    });
    let resume = Action::new_local(move |(s, v): &(String, String)| {
        let (s, v) = (s.clone(), v.clone());
        async move {
            let done = api::resume(&s, &v).await.map(|_| ());
            list.refetch();
            done
        }
    });
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        pause.dispatch(());
    };
    let error = move || {
        [pause.value().get(), resume.value().get()]
            .into_iter()
            .flatten()
            .find_map(|r| r.err())
            .map(|e| view! { <p class="error" data-testid="pause-error">{e.to_string()}</p> })
    };
    let waiting = crate::takeover::waiting();
    view! {
        <h2>"Pauses"</h2>
        <form class="card form" data-testid="pause-form" on:submit=submit>
            <div class="row">
                <label>"Pause "
                    <select data-testid="pause-scope" prop:value=scope on:change=move |ev| scope.set(event_target_value(&ev))>
                        <option value="lane">"a lane"</option>
                        <option value="model">"a model"</option>
                        <option value="user">"a user"</option>
                    </select>
                </label>
                <label>"Which "
                    <input data-testid="pause-value" size="18" placeholder="high, claude-haiku-5-5, carol"
                        prop:value=value on:input=move |ev| value.set(event_target_value(&ev)) />
                </label>
                <label>"Reason "
                    <input data-testid="pause-reason" size="24" placeholder="optional"
                        prop:value=reason on:input=move |ev| reason.set(event_target_value(&ev)) />
                </label>
                <button type="submit" data-testid="pause-submit" disabled=move || pause.pending().get() || waiting.get()>"Pause"</button>
            </div>
        </form>
        {error}
        {fetched(list, "Loading pauses…", "pauses-error", move |l| view! { <PauseTable l=l resume=resume /> })}
    }
}

#[component]
fn PauseTable(
    l: PauseList,
    resume: Action<(String, String), Result<(), api::ApiError>>,
) -> impl IntoView {
    if l.items.is_empty() {
        return view! { <p class="muted" data-testid="pauses-none">"Nothing is paused."</p> }
            .into_any();
    }
    view! {
        <table class="grid" data-testid="pauses">
            <thead><tr><th>"Paused"</th><th>"Why"</th><th>"By"</th><th>"Since (UTC)"</th><th></th></tr></thead>
            <tbody>
                {l.items.into_iter().map(|p| {
                    let key = (p.scope.as_str().to_string(), p.value.clone());
                    view! {
                        <tr data-testid="pause-row" data-scope=p.scope.as_str() data-value=p.value.clone()>
                            <td><strong>{format!("{} {}", p.scope.as_str(), p.value)}</strong></td>
                            <td>{p.reason.unwrap_or_default()}</td>
                            <td>{p.paused_by}</td>
                            <td>{when(p.paused_at)}</td>
                            <td><button data-testid="pause-resume" on:click=move |_| { resume.dispatch(key.clone()); }>"Resume"</button></td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
    .into_any()
}
