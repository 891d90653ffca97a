//! What the last replays did, above the Dead letters list.

use leptos::prelude::*;

use super::actions::{BulkReplay, Replay};
use crate::components::format::short_id;

/// How many the bulk replay replayed (and whether more remain), and the new job of each job
/// replayed one by one.
#[component]
pub fn Notices(bulk: BulkReplay, replay: Replay) -> impl IntoView {
    view! {
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
                        {format!("{} replayed as ", short_id(&r.original))}
                        <code>{r.job_id}</code>
                        " "
                    </span>
                }).collect_view()}
            </p>
        })}
    }
}
