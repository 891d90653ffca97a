//! The upload page (`/ui/batches/:id`): one upload's files, live.

mod extraction;
mod file_item;
mod upload_facts;

use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

use crate::api;
use crate::components::fetched::fetched;
use crate::components::format::short_id;
use crate::components::ticker::every_second;
use file_item::FileItem;
use upload_facts::UploadFacts;

/// One upload: a progress bar (done / total), a chip per file that updates live, elapsed time,
/// tokens and cost so far, each finished file's extraction (expandable), and a cancel button
/// while files are waiting. Refreshed every second and after a cancel.
#[component]
pub fn UploadDetail() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.read().get("id").unwrap_or_default();
    let tick = every_second();
    let cancel = Action::new_local(move |_: &()| {
        let id = id();
        async move { api::cancel_upload(&id).await }
    });
    let batch = LocalResource::new(move || {
        tick.track();
        cancel.version().track();
        let id = id();
        async move { api::get_upload(&id).await }
    });
    view! {
        <section class="page" data-testid="page-batch">
            <h1>"Upload " <code>{move || short_id(&id())}</code></h1>
            {fetched(batch, "Loading…", "batch-error", move |b| {
                            let waiting = b.done < b.total;
                            let files = b.files.clone();
                            view! {
                                <UploadFacts b=b />
                                <Show when=move || waiting>
                                    <button class="secondary" data-testid="cancel-batch"
                                        on:click=move |_| { cancel.dispatch(()); }>
                                        "Cancel what has not run"
                                    </button>
                                </Show>
                                <ul class="files">
                                    {files.into_iter().map(|f| view! { <FileItem f=f /> }).collect_view()}
                                </ul>
                            }
                        })}
            <p class="error">{move || cancel.value().get().and_then(|r| r.err()).map(|e| e.to_string())}</p>
            <p><a href="/ui/upload">"Upload more"</a></p>
        </section>
    }
}
