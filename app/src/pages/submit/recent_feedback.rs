//! The Submit page's live list of recent feedback.

use leptos::prelude::*;

use super::feedback_form::SendFeedback;
use super::feedback_item::FeedbackItem;
use crate::api;
use crate::components::fetched::fetched;
use crate::components::layout::{demo_mode, Health};
use crate::components::ticker::every_second;

/// The caller's recent feedback, refreshed every second (and after each submission); elapsed
/// times tick until completion.
#[component]
pub fn RecentFeedback(submitted: SendFeedback) -> impl IntoView {
    let tick = every_second();
    let list = LocalResource::new(move || {
        tick.track();
        submitted.version().track();
        api::list_feedback()
    });
    let demo = demo_mode(expect_context::<Health>());
    let poll = Action::new_local(|_: &()| api::poll_batches());
    view! {
        <div class="list-head">
            <h2>"Recent submissions"</h2>
            <Show when=demo>
                <button
                    class="secondary"
                    data-testid="poll-now"
                    title="Settle ended Message Batches now instead of waiting for the cron"
                    on:click=move |_| { poll.dispatch(()); }
                >
                    "Poll batches now"
                </button>
            </Show>
        </div>
        {fetched(list, "Loading…", "feedback-list-error", move |l| view! {
                        <ul class="jobs" data-testid="feedback-list">
                            {l.items.into_iter().map(|f| view! { <FeedbackItem f=f /> }).collect_view()}
                        </ul>
                    })}
    }
}
