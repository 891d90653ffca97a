use leptos::prelude::*;
use pipeline::dto::FeedbackView;
use pipeline::status::{Mode, Status};

use crate::api::{self, ApiError};
use crate::components::format::seconds;
use crate::components::layout::{demo_mode, Health};
use crate::components::prompt_form::PromptForm;
use crate::components::ticker::every_second;

/// The Submit page: the feedback form and the live list of recent submissions.
#[component]
pub fn Submit() -> impl IntoView {
    // Bumped after each submission so the list refreshes at once, not on the next tick.
    let submitted = RwSignal::new(0u32);
    view! {
        <section class="page" data-testid="page-submit">
            <h1>"Submit feedback"</h1>
            <p class="muted">
                "Claude classifies each piece of feedback. Sync calls the Messages API at once; \
                 batch joins a half-price Message Batch that the cron polls."
            </p>
            <FeedbackForm on_submitted=move || submitted.update(|n| *n += 1) />
            <h2>"Submit a prompt job"</h2>
            <p class="muted">
                "Any prompt, on the high lane (now) or the bulk lane (batched at half price). \
                 Follow it on the " <a href="/ui/jobs">"Jobs"</a> " page."
            </p>
            <PromptForm />
            <RecentFeedback submitted=submitted />
        </section>
    }
}

/// Source, text and the sync / batch toggle; API errors show next to their field.
#[component]
fn FeedbackForm(on_submitted: impl Fn() + Copy + 'static) -> impl IntoView {
    let source = RwSignal::new("web_app".to_string());
    let text = RwSignal::new(String::new());
    let mode = RwSignal::new(Mode::Sync);
    let error = RwSignal::new(None::<ApiError>);
    let last = RwSignal::new(None::<String>);
    let send = Action::new_local(move |(source, text, mode): &(String, String, Mode)| {
        let (source, text, mode) = (source.clone(), text.clone(), *mode);
        async move { api::submit_feedback(&source, &text, mode).await }
    });
    Effect::new(move |_| {
        if let Some(result) = send.value().get() {
            match result {
                Ok(ack) => {
                    error.set(None);
                    text.set(String::new());
                    last.set(Some(ack.id));
                    on_submitted();
                }
                Err(e) => error.set(Some(e)),
            }
        }
    });
    let field_error = move |name: &'static str| {
        move || {
            error
                .get()
                .filter(|e| e.field.as_deref() == Some(name))
                .map(|e| e.message)
        }
    };
    let general_error = move || {
        error
            .get()
            .filter(|e| !matches!(e.field.as_deref(), Some("text" | "source" | "mode")))
            .map(|e| e.to_string())
    };
    view! {
        <form
            class="card form"
            data-testid="feedback-form"
            on:submit=move |ev| {
                ev.prevent_default();
                send.dispatch((source.get(), text.get(), mode.get()));
            }
        >
            <label for="fb-source">"Source"</label>
            <input
                id="fb-source"
                data-testid="fb-source"
                prop:value=source
                on:input=move |ev| source.set(event_target_value(&ev))
            />
            <p class="field-error" data-testid="error-source">{field_error("source")}</p>

            <label for="fb-text">"Feedback"</label>
            <textarea
                id="fb-text"
                data-testid="fb-text"
                rows="4"
                placeholder="The dark mode toggle stopped working after the last update."
                prop:value=text
                on:input=move |ev| text.set(event_target_value(&ev))
            ></textarea>
            <p class="field-error" data-testid="error-text">{field_error("text")}</p>

            <fieldset class="toggle" data-testid="fb-mode">
                <legend>"Mode"</legend>
                <label>
                    <input
                        type="radio"
                        name="mode"
                        value="sync"
                        data-testid="mode-sync"
                        prop:checked=move || mode.get() == Mode::Sync
                        on:change=move |_| mode.set(Mode::Sync)
                    />
                    " sync — now, standard price"
                </label>
                <label>
                    <input
                        type="radio"
                        name="mode"
                        value="batch"
                        data-testid="mode-batch"
                        prop:checked=move || mode.get() == Mode::Batch
                        on:change=move |_| mode.set(Mode::Batch)
                    />
                    " batch — half price, completes when the batch ends"
                </label>
            </fieldset>
            <p class="field-error" data-testid="error-mode">{field_error("mode")}</p>

            <div class="actions">
                <button type="submit" data-testid="fb-submit" disabled=move || send.pending().get()>
                    {move || if send.pending().get() { "Submitting…" } else { "Submit" }}
                </button>
                <span class="muted" data-testid="fb-last">
                    {move || last.get().map(|id| format!("queued {id}"))}
                </span>
            </div>
            <p class="error" data-testid="fb-error">{general_error}</p>
        </form>
    }
}

/// The caller's recent feedback, refreshed every second; elapsed times tick until completion.
#[component]
fn RecentFeedback(submitted: RwSignal<u32>) -> impl IntoView {
    let tick = every_second();
    let list = LocalResource::new(move || {
        tick.track();
        submitted.track();
        api::list_feedback()
    });
    let demo = demo_mode(expect_context::<Health>());
    let poll = Action::new_local(|_: &()| api::poll_batches());
    let items = move || {
        list.get()
            .and_then(|r| r.ok())
            .map(|l| l.items)
            .unwrap_or_default()
    };
    view! {
        <div class="list-head">
            <h2>"Recent submissions"</h2>
            <Show when=demo>
                <button
                    class="secondary"
                    data-testid="poll-now"
                    title="Settle ended Message Batches now instead of waiting for the cron"
                    on:click=move |_| {
                        poll.dispatch(());
                    }
                >
                    "Poll batches now"
                </button>
            </Show>
        </div>
        <p class="error">
            {move || list.get().and_then(|r| r.err()).map(|e| e.to_string())}
        </p>
        <ul class="jobs" data-testid="feedback-list">
            <For each=items key=|f| (f.id.clone(), f.status, f.elapsed_ms / 100) let:f>
                <FeedbackItem f=f />
            </For>
        </ul>
    }
}

/// One submission: status, mode, ticking elapsed time, and the analysis once it arrives.
#[component]
fn FeedbackItem(f: FeedbackView) -> impl IntoView {
    let status = f.status.to_string();
    let waiting = f.mode == Mode::Batch && matches!(f.status, Status::Queued | Status::Submitted);
    let analysis = f.analysis.clone().map(|a| {
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
        <li class="job" data-testid=format!("job-{}", f.id) data-status=status.clone()>
            <div class="job-head">
                <span class=format!("badge {status}") data-testid="job-status">{status.clone()}</span>
                <span class="badge mode">{f.mode.as_str()}</span>
                <span class="muted">{f.source.clone()}</span>
                <span class="elapsed num" data-testid="job-elapsed">{seconds(f.elapsed_ms)}</span>
            </div>
            <p class="text">{f.text.clone()}</p>
            {waiting.then(|| view! {
                <p class="muted" data-testid="batch-wait">
                    "Waiting for the Message Batch; it completes after the cron polls it."
                </p>
            })}
            {analysis}
            {f.error.clone().map(|e| view! { <p class="error" data-testid="job-error">{e}</p> })}
        </li>
    }
}
