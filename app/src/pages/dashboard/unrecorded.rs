//! The spend the pipeline may not have recorded: calls abandoned at the timeout, batches lost.

use leptos::prelude::*;
use pipeline::ops::metrics::Unrecorded;

use crate::components::format::count;

/// A warning card, shown only when there is something: what was possibly billed that no job's
/// cost includes, and why.
#[component]
pub fn UnrecordedSpend(u: Unrecorded) -> impl IntoView {
    (!u.is_empty()).then(|| {
        let calls = format!(
            "{} abandoned at the timeout (the API bills them; up to {} at their worst case)",
            count(u.timed_out_calls, "call", "calls"),
            u.timed_out_worst_micros.usd()
        );
        let batches = format!(
            "{} unknown to the API given up ({} run again in a new batch; what they billed cannot be read)",
            count(u.lost_batches, "Message Batch", "Message Batches"),
            count(u.lost_batch_jobs, "job", "jobs")
        );
        view! {
            <div class="card warn" data-testid="unrecorded-spend">
                <h3>"Possible unrecorded spend"</h3>
                <p data-testid="unrecorded-timeouts">{calls}</p>
                <p data-testid="unrecorded-batches">{batches}</p>
            </div>
        }
    })
}
