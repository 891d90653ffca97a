//! An upload's progress and totals.

use leptos::prelude::*;
use pipeline::dto::UploadView;

use crate::components::format::seconds;

/// The progress bar (files done / total), then mode, template, elapsed time, tokens, cost so far
/// and the files by status.
#[component]
pub fn UploadFacts(b: UploadView) -> impl IntoView {
    let used = b.spend.tokens_text();
    let by_status = b
        .counts
        .iter()
        .map(|(s, n)| format!("{n} {s}"))
        .collect::<Vec<_>>()
        .join(" · ");
    view! {
        <div class="progress-line">
            <progress max=b.total value=b.done data-testid="batch-bar"></progress>
            <strong data-testid="batch-progress">{format!("{}/{}", b.done, b.total)}</strong>
            <span class="muted">" files done"</span>
        </div>
        <dl class="facts">
            <dt>"Mode / template"</dt><dd>{format!("{} / {}", b.mode.as_str(), b.template.as_str())}</dd>
            <dt>"Elapsed"</dt><dd data-testid="batch-elapsed">{seconds(b.elapsed_ms)}</dd>
            <dt>"Tokens"</dt><dd data-testid="batch-tokens">{used}</dd>
            <dt>"Cost so far"</dt><dd data-testid="batch-cost">{b.spend.cost_text()}</dd>
            <dt>"By status"</dt><dd>{by_status}</dd>
        </dl>
    }
}
