//! The dead letters listed: the first page, and the pages loaded after it.

use leptos::prelude::*;
use pipeline::ops::dlq::{DlqFilter, DlqList};

use super::actions::{Discard, Replay};
use super::dlq_row::DlqRow;
use crate::api;

/// The first page's items followed by those of each "Load more" (dropped whenever the first
/// page is fetched again, as this component is then built anew), or that nothing matches.
#[component]
pub fn DlqPages(
    first: DlqList,
    filter: RwSignal<DlqFilter>,
    replay: Replay,
    discard: Discard,
    error: RwSignal<Option<String>>,
) -> impl IntoView {
    let more = Action::new_local(move |cursor: &String| {
        let (f, c) = (filter.get_untracked(), cursor.clone());
        async move { api::list_dlq(&f, Some(&c)).await }
    });
    let extra = RwSignal::new(Vec::<DlqList>::new());
    Effect::new(move |_| match more.value().get() {
        Some(Ok(page)) => extra.update(|e| e.push(page)),
        Some(Err(e)) => error.set(Some(e.to_string())),
        None => {}
    });
    let first_cursor = first.next_cursor.clone();
    let next_cursor = move || match extra.with(|e| e.last().map(|p| p.next_cursor.clone())) {
        Some(c) => c,
        None => first_cursor.clone(),
    };
    let empty = first.items.is_empty();
    let row = move |item| view! { <DlqRow item=item replay=replay discard=discard error=error /> };
    let loading = more.pending();
    view! {
        <ul class="jobs" data-testid="dlq-list">
            {first.items.into_iter().map(row).collect_view()}
            {move || extra.get().into_iter().flat_map(|p| p.items).map(row).collect_view()}
        </ul>
        {empty.then(|| view! { <p class="muted" data-testid="dlq-empty">"Nothing matches."</p> })}
        {move || next_cursor().map(|c| view! {
            <button class="secondary" data-testid="dlq-more" disabled=move || loading.get()
                on:click=move |_| { more.dispatch(c.clone()); }>
                "Load more"
            </button>
        })}
    }
}
