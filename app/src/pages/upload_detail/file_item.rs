//! One file of an upload.

use leptos::prelude::*;
use pipeline::dto::UploadFile;

use super::extraction::Extraction;
use crate::components::format::bytes;
use crate::components::job_status::JobStatus;

/// A file: its status chip, name, size, cost, error, and its extraction once completed.
#[component]
pub fn FileItem(f: UploadFile) -> impl IntoView {
    let result_url = f.result_url;
    view! {
        <li data-testid="file-row">
            <JobStatus status=f.status testid="file-chip" />
            " "
            <span class="file-name">{f.file_name}</span>
            <span class="muted">{format!(" · {} · {}", bytes(f.file_size), f.spend.cost_text())}</span>
            {f.error.map(|e| view! { <div class="error">{e}</div> })}
            {f.extraction.map(|x| view! { <Extraction x=x result_url=result_url /> })}
        </li>
    }
}
