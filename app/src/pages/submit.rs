use leptos::prelude::*;

/// The home page: what the pipeline does and how to send it work.
#[component]
pub fn Submit() -> impl IntoView {
    view! {
        <section class="page" data-testid="page-submit">
            <h1>"Submit"</h1>
            <p>
                "claude-pipeline takes LLM jobs over HTTP, queues them in two priority lanes, calls \
                 Claude synchronously or through the half-price Message Batches API, and keeps \
                 every result and every cent on record."
            </p>
            <p class="notice">
                "The feedback form arrives with the first product flow. Until then, the "
                <a href="/ui/dashboard">"Dashboard"</a>
                " shows what the Worker found when it touched each of its bindings."
            </p>
        </section>
    }
}
