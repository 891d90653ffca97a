//! The Upload page (`/ui/upload`): PDFs dropped or picked, checked here, sent with progress.

mod checks;
mod chosen;
mod chosen_files;
mod drop_zone;
mod past_uploads;
mod upload_options;

use leptos::prelude::*;
use leptos_router::hooks::use_navigate;
use pipeline::pdf::{Template, MAX_FILES, MAX_FILE_BYTES, MAX_UPLOAD_BYTES};
use pipeline::status::Mode;

use crate::api;
use chosen::{Chosen, ChosenList};
use chosen_files::ChosenFiles;
use drop_zone::DropZone;
use past_uploads::PastUploads;
use upload_options::UploadOptions;

/// Drop up to 100 PDFs (or pick them): each is checked here first, with the Worker's own checks
/// — a PDF, not empty, at most 20 MB, 95 MB in all — then sent with per-file progress; the
/// upload's page follows its files.
#[component]
pub fn Upload() -> impl IntoView {
    let chosen: ChosenList = RwSignal::new_local(Vec::<Chosen>::new());
    let mode = RwSignal::new(Mode::Batch);
    let template = RwSignal::new(Template::Summary);
    let error = RwSignal::new(None::<String>);
    let navigate = use_navigate();
    let add = move |list: web_sys::FileList| {
        error.set(None);
        chosen::add(chosen, list);
    };
    let blocking =
        move || chosen.with(|c| checks::blocking(&c.iter().map(|f| &f.check).collect::<Vec<_>>()));
    let upload = Action::new_local(move |_: &()| {
        let files: Vec<(web_sys::File, String)> = chosen.with_untracked(|c| {
            c.iter()
                .map(|f| (f.file.clone(), f.check.name.clone()))
                .collect()
        });
        // Each file's share of the body, in order, to turn bytes sent into per-file progress.
        let sizes: Vec<f64> = files.iter().map(|(f, _)| f.size()).collect();
        let on_progress = move |sent: f64, _total: f64| {
            let shares = checks::shares(&sizes, sent);
            chosen.update(|c| c.iter_mut().zip(shares).for_each(|(f, s)| f.check.sent = s));
        };
        let (mode, template) = (mode.get_untracked(), template.get_untracked());
        async move { api::upload_pdfs(&files, mode, template.as_str(), on_progress).await }
    });
    let sending = upload.pending();
    Effect::new(move |_| match upload.value().get() {
        Some(Ok(ack)) => {
            chosen.set(Vec::new());
            navigate(&format!("/ui/batches/{}", ack.batch_id), Default::default());
        }
        Some(Err(e)) => error.set(Some(e.to_string())),
        None => {}
    });
    let send = move |_| {
        if blocking().is_none() && !sending.get_untracked() {
            error.set(None);
            upload.dispatch_local(());
        }
    };
    let intro = format!(
        "Drop up to {MAX_FILES} PDFs ({} MB each, {} MB in all). Each one is summarized and its key \
         facts extracted on the bulk lane, so a big upload never slows interactive work.",
        MAX_FILE_BYTES >> 20,
        MAX_UPLOAD_BYTES >> 20
    );
    view! {
        <section class="page" data-testid="page-upload">
            <h1>"Upload PDFs"</h1>
            <p class="muted">{intro}</p>
            <DropZone add=add />
            <Show when=move || chosen.with(|c| !c.is_empty())>
                <ChosenFiles chosen=chosen />
            </Show>
            <div class="row">
                <UploadOptions mode=mode template=template />
                <button
                    data-testid="upload-submit"
                    disabled=move || blocking().is_some() || sending.get()
                    on:click=send
                >
                    {move || if sending.get() { "Uploading…" } else { "Upload" }}
                </button>
            </div>
            <p class="muted" data-testid="upload-hint">
                {move || blocking().filter(|_| chosen.with(|c| !c.is_empty()))}
            </p>
            <p class="error" data-testid="upload-error">{move || error.get()}</p>
            <h2>"Past uploads"</h2>
            <PastUploads />
        </section>
    }
}
