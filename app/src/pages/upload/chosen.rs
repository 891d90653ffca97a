//! The files chosen on the upload page, and how a choice is added and checked.

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::checks::{FileCheck, HEAD_BYTES};

/// A file the user chose and what the page knows about it.
#[derive(Clone)]
pub struct Chosen {
    pub file: web_sys::File,
    pub check: FileCheck,
}

/// The chosen files (browser `File`s, so kept on this thread).
pub type ChosenList = RwSignal<Vec<Chosen>, LocalStorage>;

/// The file's first bytes (empty if they cannot be read).
async fn read_head(file: &web_sys::File) -> Vec<u8> {
    let Ok(head) = file.slice_with_i32_and_i32(0, HEAD_BYTES) else {
        return Vec::new();
    };
    match wasm_bindgen_futures::JsFuture::from(head.array_buffer()).await {
        Ok(buf) => js_sys::Uint8Array::new(&buf).to_vec(),
        Err(_) => Vec::new(),
    }
}

/// Adds the files to the list, then checks each from its first bytes, as the Worker will.
pub fn add(chosen: ChosenList, list: web_sys::FileList) {
    let start = chosen.with_untracked(Vec::len);
    for i in 0..list.length() {
        let Some(file) = list.item(i) else { continue };
        let check = FileCheck::new(&file.name(), file.size() as u64);
        chosen.update(|c| {
            c.push(Chosen {
                file: file.clone(),
                check,
            })
        });
        let index = start + i as usize;
        spawn_local(async move {
            let head = read_head(&file).await;
            chosen.update(|c| {
                if let Some(f) = c.get_mut(index) {
                    f.check.check(&head);
                }
            });
        });
    }
}
