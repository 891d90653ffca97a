use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::hooks::use_navigate;
use pipeline::pdf::{MAX_FILES, MAX_FILE_BYTES, MAX_UPLOAD_BYTES};
use pipeline::status::Mode;

use crate::api;
use crate::components::format::bytes;
use pipeline::money::usd;

/// A file the user chose, with what is wrong with it (if anything) and its upload progress.
#[derive(Clone)]
struct Chosen {
    file: web_sys::File,
    name: String,
    size: u64,
    /// Checked from the file's first bytes, asynchronously: `None` until known.
    problem: Option<String>,
    checked: bool,
    /// 0.0 – 1.0 of this file's bytes sent.
    sent: f64,
}

/// Whether the file really starts like a PDF (not just its name or type).
async fn looks_like_pdf(file: &web_sys::File) -> bool {
    let Ok(head) = file.slice_with_i32_and_i32(0, 5) else {
        return false;
    };
    let Ok(buf) = wasm_bindgen_futures::JsFuture::from(head.array_buffer()).await else {
        return false;
    };
    js_sys::Uint8Array::new(&buf).to_vec() == b"%PDF-"
}

/// Drop up to 100 PDFs (or pick them): each is checked here first — a PDF, not empty, at most
/// 20 MB, 95 MB in all — then sent with per-file progress; the upload's page follows its files.
#[component]
pub fn Upload() -> impl IntoView {
    let chosen = RwSignal::new_local(Vec::<Chosen>::new());
    let over = RwSignal::new(false);
    let mode = RwSignal::new(Mode::Batch);
    let template = RwSignal::new("summary".to_string());
    let sending = RwSignal::new(false);
    let error = RwSignal::new(None::<String>);
    let input_ref = NodeRef::<leptos::html::Input>::new();
    let navigate = use_navigate();

    let add = move |list: web_sys::FileList| {
        error.set(None);
        let start = chosen.with_untracked(Vec::len);
        for i in 0..list.length() {
            let Some(file) = list.item(i) else { continue };
            let size = file.size() as u64;
            let name = file.name();
            let problem = if size == 0 {
                Some("empty".to_string())
            } else if size > MAX_FILE_BYTES {
                Some(format!("larger than {} MB", MAX_FILE_BYTES >> 20))
            } else {
                None
            };
            chosen.update(|c| {
                c.push(Chosen {
                    file: file.clone(),
                    name,
                    size,
                    checked: problem.is_some(),
                    problem,
                    sent: 0.0,
                })
            });
            let index = start + i as usize;
            spawn_local(async move {
                let pdf = looks_like_pdf(&file).await;
                chosen.update(|c| {
                    if let Some(f) = c.get_mut(index) {
                        if !pdf && f.problem.is_none() {
                            f.problem = Some("not a PDF".into());
                        }
                        f.checked = true;
                    }
                });
            });
        }
    };
    let total_bytes = move || chosen.with(|c| c.iter().map(|f| f.size).sum::<u64>());
    let blocking = move || -> Option<String> {
        chosen.with(|c| {
            if c.is_empty() {
                return Some("choose between 1 and 100 PDFs".into());
            }
            if c.len() > MAX_FILES {
                return Some(format!(
                    "{} files chosen: send between 1 and {MAX_FILES} at a time",
                    c.len()
                ));
            }
            if let Some(f) = c.iter().find(|f| f.problem.is_some()) {
                return Some(format!(
                    "{} is {}: remove it to upload",
                    f.name,
                    f.problem.clone().unwrap_or_default()
                ));
            }
            if c.iter().any(|f| !f.checked) {
                return Some("checking the files…".into());
            }
            let total: u64 = c.iter().map(|f| f.size).sum();
            (total > MAX_UPLOAD_BYTES).then(|| {
                format!(
                    "{} in all: an upload may carry at most {} MB",
                    bytes(total),
                    MAX_UPLOAD_BYTES >> 20
                )
            })
        })
    };
    let send = move || {
        if blocking().is_some() || sending.get_untracked() {
            return;
        }
        sending.set(true);
        error.set(None);
        let files: Vec<(web_sys::File, String)> =
            chosen.with_untracked(|c| c.iter().map(|f| (f.file.clone(), f.name.clone())).collect());
        // Each file's share of the body, in order, to turn bytes sent into per-file progress.
        let sizes: Vec<f64> = files.iter().map(|(f, _)| f.size()).collect();
        let navigate = navigate.clone();
        spawn_local(async move {
            let on_progress = move |sent: f64, _total: f64| {
                chosen.update(|c| {
                    let mut start = 0.0;
                    for (f, size) in c.iter_mut().zip(&sizes) {
                        f.sent = if *size <= 0.0 {
                            1.0
                        } else {
                            ((sent - start) / size).clamp(0.0, 1.0)
                        };
                        start += size;
                    }
                });
            };
            let answer = api::upload_pdfs(
                &files,
                mode.get_untracked(),
                &template.get_untracked(),
                on_progress,
            )
            .await;
            sending.set(false);
            match answer {
                Ok(ack) => {
                    chosen.set(Vec::new());
                    navigate(&format!("/ui/batches/{}", ack.batch_id), Default::default());
                }
                Err(e) => error.set(Some(e.to_string())),
            }
        });
    };
    let open_picker = move || {
        if let Some(input) = input_ref.get() {
            input.click();
        }
    };
    let past = LocalResource::new(api::list_batches);

    view! {
        <section class="page" data-testid="page-upload">
            <h1>"Upload PDFs"</h1>
            <p class="muted">
                "Drop up to 100 PDFs (20 MB each, 95 MB in all). Each one is summarized and its key \
                 facts extracted on the bulk lane, so a big upload never slows interactive work."
            </p>
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
            <Show when=move || chosen.with(|c| !c.is_empty())>
                <table class="grid" data-testid="chosen-files">
                    <thead><tr><th>"File"</th><th class="num">"Size"</th><th>"Upload"</th><th></th></tr></thead>
                    <tbody>
                        {move || chosen.get().into_iter().enumerate().map(|(i, f)| view! {
                            <tr data-testid="chosen-file">
                                <td>{f.name.clone()}</td>
                                <td class="num">{bytes(f.size)}</td>
                                <td>
                                    {match &f.problem {
                                        Some(p) => view! { <span class="error" data-testid="file-problem">{p.clone()}</span> }.into_any(),
                                        None => view! {
                                            <progress max="100" value=format!("{:.0}", f.sent * 100.0) data-testid="file-progress"></progress>
                                        }.into_any(),
                                    }}
                                </td>
                                <td>
                                    <button class="link" on:click=move |_| chosen.update(|c| { if i < c.len() { c.remove(i); } })>"remove"</button>
                                </td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
                <p class="muted">{move || format!("{} file(s), {} in all", chosen.with(Vec::len), bytes(total_bytes()))}</p>
            </Show>
            <div class="row">
                <label>"Mode "
                    <select data-testid="upload-mode" on:change=move |ev| {
                        mode.set(if event_target_value(&ev) == "sync" { Mode::Sync } else { Mode::Batch })
                    }>
                        <option value="batch" selected>"batch (half price)"</option>
                        <option value="sync">"sync"</option>
                    </select>
                </label>
                <label>"Template "
                    <select data-testid="upload-template" on:change=move |ev| template.set(event_target_value(&ev))>
                        <option value="summary" selected>"summary"</option>
                        <option value="brief">"brief"</option>
                    </select>
                </label>
                <button
                    data-testid="upload-submit"
                    disabled=move || blocking().is_some() || sending.get()
                    on:click=move |_| send()
                >
                    {move || if sending.get() { "Uploading…" } else { "Upload" }}
                </button>
            </div>
            <p class="muted" data-testid="upload-hint">{move || blocking().filter(|_| chosen.with(|c| !c.is_empty()))}</p>
            <p class="error" data-testid="upload-error">{move || error.get()}</p>
            <h2>"Past uploads"</h2>
            {move || match past.get() {
                None => view! { <p class="muted">"Loading…"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
                Some(Ok(list)) if list.items.is_empty() => view! { <p class="muted" data-testid="no-uploads">"No uploads yet."</p> }.into_any(),
                Some(Ok(list)) => view! {
                    <table class="grid" data-testid="past-uploads">
                        <thead><tr><th>"Upload"</th><th>"Mode"</th><th class="num">"Done"</th><th class="num">"Cost"</th></tr></thead>
                        <tbody>
                            {list.items.into_iter().map(|b| view! {
                                <tr>
                                    <td><a href=format!("/ui/batches/{}", b.id)><code>{b.id[..8].to_string()}</code></a></td>
                                    <td>{b.mode.as_str()}</td>
                                    <td class="num">{format!("{}/{}", b.done, b.total)}</td>
                                    <td class="num">{usd(b.cost_micros)}</td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                }.into_any(),
            }}
        </section>
    }
}
