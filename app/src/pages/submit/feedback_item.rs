//! One submission in the Submit page's list.

use leptos::prelude::*;
use pipeline::dto::FeedbackView;
use pipeline::status::{Mode, Status};

use crate::components::format::seconds;
use crate::components::job_status::JobStatus;

/// One submission: status, mode, ticking elapsed time, and the analysis once it arrives.
#[component]
pub fn FeedbackItem(f: FeedbackView) -> impl IntoView {
    let waiting = f.mode == Mode::Batch && matches!(f.status, Status::Queued | Status::Submitted);
    let analysis = f.analysis.map(|a| {
        let chips = format!(
            "{:?} · {:?} · {:?} urgency",
            a.sentiment, a.category, a.urgency
        )
        .to_lowercase();
        view! {
            <p class="analysis" data-testid="analysis">
                <span class="chips">{chips}</span>
                " — "
                {a.summary}
            </p>
        }
    });
    view! {
        <li class="job" data-testid=format!("job-{}", f.id) data-status=f.status.as_str()>
            <div class="job-head">
                <JobStatus status=f.status testid="job-status" />
                <span class="badge mode">{f.mode.as_str()}</span>
                <span class="muted">{f.source}</span>
                <span class="elapsed num" data-testid="job-elapsed">{seconds(f.elapsed_ms)}</span>
            </div>
            <p class="text">{f.text}</p>
            {waiting.then(|| view! {
                <p class="muted" data-testid="batch-wait">
                    "Waiting for the Message Batch; it completes after the cron polls it."
                </p>
            })}
            {analysis}
            {f.error.map(|e| view! { <p class="error" data-testid="job-error">{e}</p> })}
        </li>
    }
}
