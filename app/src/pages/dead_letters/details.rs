//! A dead letter's history, folded.

use leptos::prelude::*;
use pipeline::ops::dlq::DlqItem;

use crate::components::attempt_log::AttemptLog;
use crate::components::format::when;

/// The attempt log and the audit entries, folded.
#[component]
pub fn Details(item: DlqItem) -> impl IntoView {
    let summary = format!(
        "{} attempts · {} audit entries",
        item.attempt_log.len(),
        item.audit.len()
    );
    view! {
        <details data-testid="dlq-details">
            <summary>{summary}</summary>
            <AttemptLog attempts=item.attempt_log />
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
