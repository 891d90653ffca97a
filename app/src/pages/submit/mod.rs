//! The Submit page (`/`): the feedback and prompt-job forms, and the live list of feedback.

mod feedback_form;
mod feedback_item;
mod mode_toggle;
mod model_picker;
mod prompt_form;
mod recent_feedback;

use leptos::prelude::*;
use pipeline::dto::FeedbackRequest;
use pipeline::status::Mode;

use crate::api;
use feedback_form::{FeedbackForm, SendFeedback};
use prompt_form::PromptForm;
use recent_feedback::RecentFeedback;

/// The Submit page: the feedback form and the live list of recent submissions.
#[component]
pub fn Submit() -> impl IntoView {
    // The list follows this action's version, so it refreshes at once after a submission.
    let send: SendFeedback = Action::new_local(|(source, text, mode): &(String, String, Mode)| {
        let request = FeedbackRequest {
            text: text.clone(),
            mode: Some(*mode),
            source: Some(source.clone()),
            ..FeedbackRequest::default()
        };
        async move { api::submit_feedback(&request).await }
    });
    view! {
        <section class="page" data-testid="page-submit">
            <h1>"Submit feedback"</h1>
            <p class="muted">
                "Claude classifies each piece of feedback. Sync calls the Messages API at once; \
                 batch joins a half-price Message Batch that the cron polls."
            </p>
            <FeedbackForm send=send />
            <h2>"Submit a prompt job"</h2>
            <p class="muted">
                "Any prompt, on the high lane (now) or the bulk lane (batched at half price). \
                 Follow it on the " <a href="/ui/jobs">"Jobs"</a> " page."
            </p>
            <PromptForm />
            <RecentFeedback submitted=send />
        </section>
    }
}
