use leptos::prelude::*;
use pipeline::clock::{parse_day, DAY_MS};
use pipeline::ops::dlq::{DlqFilter, DlqItem, DlqList, ReplayAck, ReplayEdit};
use pipeline::ops::failures::ErrorClass;
use pipeline::status::Kind;

use crate::api::{self, ApiError, Discarded};
use crate::components::format::{seconds, when};

/// Replays one job, with optional edits.
type Replay = Action<(String, Option<ReplayEdit>), Result<ReplayAck, ApiError>>;
/// Takes one job out of the triage list.
type Discard = Action<String, Result<Discarded, ApiError>>;

/// Jobs whose retries ran out (or that failed), with their last error, attempts and audit, for
/// triage: replay as is, edit then replay, replay everything matching, or discard.
#[component]
pub fn DeadLetters() -> impl IntoView {
    let status = RwSignal::new("dead_lettered".to_string());
    let class = RwSignal::new(String::new());
    let user = RwSignal::new(String::new());
    let model = RwSignal::new(String::new());
    let from = RwSignal::new(String::new());
    let to = RwSignal::new(String::new());
    let filter = RwSignal::new(DlqFilter {
        status: Some("dead_lettered".into()),
        ..DlqFilter::default()
    });
    let error = RwSignal::new(None::<String>);

    let replay: Replay = Action::new_local(|(id, edit): &(String, Option<ReplayEdit>)| {
        let (id, edit) = (id.clone(), edit.clone());
        async move { api::replay_dlq(&id, edit.as_ref()).await }
    });
    let discard: Discard = Action::new_local(|id: &String| {
        let id = id.clone();
        async move { api::discard_dlq(&id).await }
    });
    let bulk = Action::new_local(|f: &DlqFilter| {
        let f = f.clone();
        async move { api::replay_matching(&f).await }
    });
    // While a replay shown here has not ended, the list refreshes every 2 s to follow it.
    let following = RwSignal::new(false);
    let tick = crate::components::ticker::every(std::time::Duration::from_secs(2));
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
    // Later pages ("Load more"), dropped whenever the first page is fetched again.
    let more = Action::new_local(move |cursor: &String| {
        let (f, c) = (filter.get_untracked(), cursor.clone());
        async move { api::list_dlq(&f, Some(&c)).await }
    });
    let extra = RwSignal::new(Vec::<DlqList>::new());
    Effect::new(move |_| {
        first.track();
        extra.set(Vec::new());
    });
    Effect::new(move |_| match more.value().get() {
        Some(Ok(page)) => extra.update(|e| e.push(page)),
        Some(Err(e)) => error.set(Some(e.to_string())),
        None => {}
    });
    // The latest mutation's outcome decides the message.
    Effect::new(move |_| {
        if let Some(r) = replay.value().get() {
            error.set(r.err().map(|e| e.to_string()));
        }
    });
    Effect::new(move |_| {
        if let Some(r) = discard.value().get() {
            error.set(r.err().map(|e| e.to_string()));
        }
    });
    Effect::new(move |_| {
        if let Some(r) = bulk.value().get() {
            error.set(r.err().map(|e| e.to_string()));
        }
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
    let items = move || {
        let mut all = page().map(|p| p.items).unwrap_or_default();
        extra.with(|e| all.extend(e.iter().flat_map(|p| p.items.iter().cloned())));
        all
    };
    let next_cursor = move || match extra.with(|e| e.last().map(|p| p.next_cursor.clone())) {
        Some(c) => c,
        None => page().and_then(|p| p.next_cursor),
    };
    let shown_error = move || {
        error
            .get()
            .or_else(|| first.get().and_then(|r| r.err()).map(|e| e.to_string()))
    };
    let apply = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let text = |s: RwSignal<String>| Some(s.get().trim().to_string()).filter(|t| !t.is_empty());
        error.set(None);
        filter.set(DlqFilter {
            status: Some(status.get()),
            error_class: text(class),
            user: text(user),
            model: text(model),
            from: parse_day(&from.get()),
            to: parse_day(&to.get()).map(|t| t + DAY_MS),
        });
    };
    view! {
        <section class="page" data-testid="page-dead-letters">
            <h1>"Dead letters"</h1>
            <p>
                <strong data-testid="dlq-count">{move || page().map(|p| p.dead_lettered.to_string())}</strong>
                " dead-lettered jobs now"
            </p>
            <form class="filters" on:submit=apply>
                <label class="filter">"Status"
                    <select data-testid="dlq-status" on:change=move |ev| status.set(event_target_value(&ev))>
                        <option value="dead_lettered">"dead-lettered"</option>
                        <option value="failed">"failed"</option>
                        <option value="all">"all"</option>
                    </select>
                </label>
                <label class="filter">"Error class"
                    <select data-testid="dlq-class" on:change=move |ev| class.set(event_target_value(&ev))>
                        <option value="">"any"</option>
                        {ErrorClass::ALL.map(|c| view! { <option value=c.as_str()>{c.as_str()}</option> }).collect_view()}
                    </select>
                </label>
                <label class="filter">"User"
                    <input data-testid="dlq-user" size="12" prop:value=user on:input=move |ev| user.set(event_target_value(&ev)) />
                </label>
                <label class="filter">"Model"
                    <input data-testid="dlq-model" size="18" prop:value=model on:input=move |ev| model.set(event_target_value(&ev)) />
                </label>
                <label class="filter">"Ended from"
                    <input type="date" data-testid="dlq-from" prop:value=from on:input=move |ev| from.set(event_target_value(&ev)) />
                </label>
                <label class="filter">"to"
                    <input type="date" data-testid="dlq-to" prop:value=to on:input=move |ev| to.set(event_target_value(&ev)) />
                </label>
                <button type="submit" class="primary" data-testid="dlq-apply">"Apply"</button>
                <button type="button" class="secondary" data-testid="dlq-replay-all"
                    disabled=move || bulk.pending().get()
                    on:click=move |_| { bulk.dispatch(filter.get_untracked()); }>
                    "Replay all matching"
                </button>
            </form>
            {move || shown_error().map(|e| view! { <p class="error" data-testid="dlq-error">{e}</p> })}
            {move || bulk.value().get().and_then(|r| r.ok()).map(|ack| view! {
                <p class="notice" data-testid="dlq-bulk-result">
                    {format!("{} replayed", ack.replayed.len())}
                    {ack.more.then_some(", more remain: replay again for the next 100")}
                </p>
            })}
            {move || replay.value().get().and_then(|r| r.ok()).map(|ack| view! {
                <p class="notice" data-testid="dlq-replayed">
                    {ack.replayed.into_iter().map(|r| view! {
                        <span>
                            {format!("{} replayed as ", short(&r.original))}
                            <code>{r.job_id.clone()}</code>
                            " "
                        </span>
                    }).collect_view()}
                </p>
            })}
            {move || first.get().is_none().then(|| view! { <p class="muted">"Loading…"</p> })}
            <ul class="jobs" data-testid="dlq-list">
                <For each=items key=|i| (i.id.clone(), i.replayed_to.clone(), i.replay_status, i.audit.len()) let:item>
                    <DlqRow item=item replay=replay discard=discard error=error />
                </For>
            </ul>
            {move || (first.get().is_some() && items().is_empty()).then(|| view! {
                <p class="muted" data-testid="dlq-empty">"Nothing matches."</p>
            })}
            {move || next_cursor().map(|c| view! {
                <button class="secondary" data-testid="dlq-more" disabled=move || more.pending().get()
                    on:click=move |_| { more.dispatch(c.clone()); }>
                    "Load more"
                </button>
            })}
        </section>
    }
}

fn short(id: &str) -> String {
    id.chars().take(8).collect()
}

/// One job of the list: what it was and how it ended, its attempts and audit, and its actions.
#[component]
fn DlqRow(
    item: DlqItem,
    replay: Replay,
    discard: Discard,
    error: RwSignal<Option<String>>,
) -> impl IntoView {
    let editing = RwSignal::new(false);
    let confirming = RwSignal::new(false);
    let edit_model = RwSignal::new(item.model.clone().unwrap_or_default());
    let edit_max = RwSignal::new(String::new());
    let is_prompt = item.kind == Kind::Prompt;
    let id = item.id.clone();
    let status = item.status.to_string();
    let ended = item.completed_at.map_or_else(|| "—".to_string(), when);
    let facts = format!(
        "{} · {} · {} · {} attempts",
        item.user_id,
        item.kind.as_str(),
        item.model.as_deref().unwrap_or("default model"),
        item.attempts
    );
    let submit_edit = {
        let id = id.clone();
        move |ev: leptos::ev::SubmitEvent| {
            ev.prevent_default();
            let model = Some(edit_model.get().trim().to_string()).filter(|m| !m.is_empty());
            let max = edit_max.get().trim().to_string();
            let max_tokens = if max.is_empty() || !is_prompt {
                None
            } else {
                match max.parse::<u32>() {
                    Ok(n) => Some(n),
                    Err(_) => {
                        error.set(Some(format!(
                            "max tokens must be a whole number, not {max:?}"
                        )));
                        return;
                    }
                }
            };
            let edit = ReplayEdit { model, max_tokens };
            replay.dispatch((id.clone(), (!edit.is_empty()).then_some(edit)));
            editing.set(false);
        }
    };
    let actions = match item.replayed_to.clone() {
        Some(to) => view! {
            <span data-testid="dlq-replayed-to">
                "replayed as " <code>{to.clone()}</code> " "
                {item.replay_status.map(|s| view! {
                    <span class=format!("badge {}", s.as_str()) data-testid="dlq-replay-status">{s.as_str()}</span>
                })}
            </span>
        }
        .into_any(),
        None => {
            let id = id.clone();
            view! {
                <button class="secondary" data-testid="dlq-replay" disabled=move || replay.pending().get()
                    on:click=move |_| { replay.dispatch((id.clone(), None)); }>
                    "Replay"
                </button>
                <button class="secondary" data-testid="dlq-edit" on:click=move |_| editing.update(|e| *e = !*e)>
                    "Edit & replay"
                </button>
            }
            .into_any()
        }
    };
    let discard_id = id.clone();
    // Ids as text, not links: job pages are their owners' (an admin triaging someone else's job
    // has everything about it here).
    let id_text = id.clone();
    view! {
        <li class="job dlq-item" data-testid="dlq-item" data-id=id>
            <div class="job-head">
                <code>{id_text}</code>
                <span class=format!("badge {status}")>{status.clone()}</span>
                {item.error_class.clone().map(|c| view! { <span class="badge" data-testid="dlq-class-badge">{c}</span> })}
                <span class="elapsed muted">{format!("ended {ended}")}</span>
            </div>
            <div class="muted">{facts}</div>
            <div class="error">{item.error.clone().unwrap_or_default()}</div>
            <div class="text">{item.preview.clone()}</div>
            {item.replay_of.clone().map(|o| view! {
                <div class="muted">"replay of " <code>{o.clone()}</code></div>
            })}
            <div class="actions">
                {actions}
                <Show when=move || !confirming.get()>
                    <button class="secondary" data-testid="dlq-discard" on:click=move |_| confirming.set(true)>
                        "Discard"
                    </button>
                </Show>
                <Show when=move || confirming.get()>
                    <span>"Discard for good? "</span>
                    <button class="danger" data-testid="dlq-discard-confirm" on:click={
                        let id = discard_id.clone();
                        move |_| { confirming.set(false); discard.dispatch(id.clone()); }
                    }>"Yes, discard"</button>
                    <button class="link" on:click=move |_| confirming.set(false)>"keep"</button>
                </Show>
            </div>
            <Show when=move || editing.get()>
                <form class="row" on:submit=submit_edit.clone()>
                    <label>"Model "
                        <input data-testid="dlq-edit-model" size="20" prop:value=edit_model
                            on:input=move |ev| edit_model.set(event_target_value(&ev)) />
                    </label>
                    <Show when=move || is_prompt>
                        <label>"Max tokens "
                            <input data-testid="dlq-edit-max-tokens" size="6" inputmode="numeric" prop:value=edit_max
                                on:input=move |ev| edit_max.set(event_target_value(&ev)) />
                        </label>
                    </Show>
                    <button type="submit" class="primary" data-testid="dlq-edit-submit">"Replay with these"</button>
                </form>
            </Show>
            <Details item=item />
        </li>
    }
}

/// The attempt log and the audit entries, folded.
#[component]
fn Details(item: DlqItem) -> impl IntoView {
    let summary = format!(
        "{} attempts · {} audit entries",
        item.attempt_log.len(),
        item.audit.len()
    );
    view! {
        <details data-testid="dlq-details">
            <summary>{summary}</summary>
            <table class="grid">
                <thead><tr><th>"#"</th><th>"Model"</th><th>"Outcome"</th><th class="num">"Took"</th><th>"Error"</th></tr></thead>
                <tbody>
                    {item.attempt_log.into_iter().map(|a| view! {
                        <tr>
                            <td>{a.n}</td>
                            <td>{a.model.unwrap_or_default()}</td>
                            <td>{a.outcome}</td>
                            <td class="num">{seconds(a.ended_at - a.started_at)}</td>
                            <td class="error">{a.error.unwrap_or_default()}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
            <ul class="audit">
                {item.audit.into_iter().map(|a| view! {
                    <li>
                        {format!("{} · {} · {}", when(a.at), a.actor, a.action)}
                        {a.detail.map(|d| format!(" — {d}"))}
                    </li>
                }).collect_view()}
            </ul>
        </details>
    }
}
