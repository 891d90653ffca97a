//! Where files are dropped or picked on the upload page.

use leptos::prelude::*;

/// The drop zone (drag and drop, or click / Enter to open the file picker) and the hidden
/// picker; every file list it receives goes to `add`.
#[component]
pub fn DropZone(add: impl Fn(web_sys::FileList) + Copy + 'static) -> impl IntoView {
    let over = RwSignal::new(false);
    let input_ref = NodeRef::<leptos::html::Input>::new();
    let open_picker = move || {
        if let Some(input) = input_ref.get() {
            input.click();
        }
    };
    view! {
        <div
            class=move || if over.get() { "dropzone over" } else { "dropzone" }
            data-testid="dropzone"
            role="button"
            tabindex="0"
            aria-label="Drop PDFs here, or press Enter to choose files"
            on:dragenter=move |ev: web_sys::DragEvent| { ev.prevent_default(); over.set(true); }
            on:dragover=move |ev: web_sys::DragEvent| { ev.prevent_default(); over.set(true); }
            on:dragleave=move |_| over.set(false)
            on:drop=move |ev: web_sys::DragEvent| {
                ev.prevent_default();
                over.set(false);
                if let Some(list) = ev.data_transfer().and_then(|d| d.files()) {
                    add(list);
                }
            }
            on:click=move |_| open_picker()
            on:keydown=move |ev: web_sys::KeyboardEvent| {
                if ev.key() == "Enter" || ev.key() == " " {
                    ev.prevent_default();
                    open_picker();
                }
            }
        >
            <strong>"Drop PDFs here"</strong>
            <span class="muted">" or click (or press Enter) to choose them"</span>
        </div>
        <input
            type="file"
            multiple
            accept="application/pdf,.pdf"
            class="visually-hidden"
            data-testid="file-input"
            node_ref=input_ref
            on:change=move |ev| {
                let input: web_sys::HtmlInputElement = event_target(&ev);
                if let Some(list) = input.files() {
                    add(list);
                }
                input.set_value("");
            }
        />
    }
}
