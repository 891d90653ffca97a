//! What was extracted from one PDF.

use leptos::prelude::*;

/// Title (the fold's summary line), summary, key points, names and a link to the raw answer.
#[component]
pub fn Extraction(x: pipeline::pdf::Extraction, result_url: Option<String>) -> impl IntoView {
    let names = (!x.entities.is_empty())
        .then(|| view! { <p class="muted">{format!("Names: {}", x.entities.join(", "))}</p> });
    view! {
        <details data-testid="file-summary">
            <summary>{x.title}</summary>
            <p data-testid="file-summary-text">{x.summary}</p>
            <ul>{x.key_points.into_iter().map(|k| view! { <li>{k}</li> }).collect_view()}</ul>
            {names}
            {result_url.map(|u| view! { <a href=u>"raw answer"</a> })}
        </details>
    }
}
