use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

use crate::api;
use crate::components::format::{bytes, seconds};
use crate::components::ticker::every_second;
use pipeline::money::usd;

/// One upload: a progress bar (done / total), a chip per file that updates live, elapsed time,
/// tokens and cost so far, each finished file's extraction (expandable), and a cancel button
/// while files are waiting. Refreshed every second until every file has ended.
#[component]
pub fn BatchDetail() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.read().get("id").unwrap_or_default();
    let tick = every_second();
    let batch = LocalResource::new(move || {
        tick.track();
        let id = id();
        async move { api::get_batch(&id).await }
    });
    let cancel = Action::new_local(move |_: &()| {
        let id = id();
        async move { api::cancel_batch(&id).await }
    });
    view! {
        <section class="page" data-testid="page-batch">
            <h1>"Upload " <code>{move || id().chars().take(8).collect::<String>()}</code></h1>
            {move || match batch.get() {
                None => view! { <p class="muted">"Loading…"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="error" data-testid="batch-error">{e.to_string()}</p> }.into_any(),
                Some(Ok(b)) => {
                    let waiting = b.done < b.total;
                    view! {
                        <div class="progress-line">
                            <progress max=b.total value=b.done data-testid="batch-bar"></progress>
                            <strong data-testid="batch-progress">{format!("{}/{}", b.done, b.total)}</strong>
                            <span class="muted">" files done"</span>
                        </div>
                        <dl class="facts">
                            <dt>"Mode / template"</dt><dd>{format!("{} / {}", b.mode.as_str(), b.template.as_str())}</dd>
                            <dt>"Elapsed"</dt><dd data-testid="batch-elapsed">{seconds(b.elapsed_ms)}</dd>
                            <dt>"Tokens"</dt>
                            <dd data-testid="batch-tokens">{format!("{} in · {} out · {} cache write · {} cache read", b.input_tokens, b.output_tokens, b.cache_write_tokens, b.cache_read_tokens)}</dd>
                            <dt>"Cost so far"</dt><dd data-testid="batch-cost">{usd(b.cost_micros)}</dd>
                            <dt>"By status"</dt>
                            <dd>{b.counts.iter().map(|(s, n)| format!("{n} {s}")).collect::<Vec<_>>().join(" · ")}</dd>
                        </dl>
                        <Show when=move || waiting>
                            <button class="secondary" data-testid="cancel-batch" on:click=move |_| { cancel.dispatch(()); }>
                                "Cancel what has not run"
                            </button>
                        </Show>
                        <ul class="files">
                            {b.files.into_iter().map(|f| {
                                let status = f.status.to_string();
                                view! {
                                    <li data-testid="file-row">
                                        <span class=format!("badge {status}") data-testid="file-chip">{status.clone()}</span>
                                        " "
                                        <span class="file-name">{f.file_name.clone()}</span>
                                        <span class="muted">{format!(" · {} · {}", bytes(f.file_size), usd(f.cost_micros))}</span>
                                        {f.error.clone().map(|e| view! { <div class="error">{e}</div> })}
                                        {f.extraction.clone().map(|x| view! {
                                            <details data-testid="file-summary">
                                                <summary>{x.title.clone()}</summary>
                                                <p data-testid="file-summary-text">{x.summary.clone()}</p>
                                                <ul>{x.key_points.iter().map(|k| view! { <li>{k.clone()}</li> }).collect_view()}</ul>
                                                {(!x.entities.is_empty()).then(|| view! { <p class="muted">{format!("Names: {}", x.entities.join(", "))}</p> })}
                                                {f.result_url.clone().map(|u| view! { <a href=u>"raw answer"</a> })}
                                            </details>
                                        })}
                                    </li>
                                }
                            }).collect_view()}
                        </ul>
                    }.into_any()
                }
            }}
            <p class="error">{move || cancel.value().get().and_then(|r| r.err()).map(|e| e.to_string())}</p>
            <p><a href="/ui/upload">"Upload more"</a></p>
        </section>
    }
}
