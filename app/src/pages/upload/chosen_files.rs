//! The table of files chosen for the next upload.

use leptos::prelude::*;
use pipeline::decimal::fixed;

use super::chosen::ChosenList;
use crate::components::format::bytes;

/// Each chosen file with its size and either its problem or its upload progress, a way to
/// remove it, and the count and total size.
#[component]
pub fn ChosenFiles(chosen: ChosenList) -> impl IntoView {
    let remove = move |i: usize| {
        chosen.update(|c| {
            if i < c.len() {
                c.remove(i);
            }
        })
    };
    let rows = move || {
        chosen.with(|c| {
            c.iter()
                .enumerate()
                .map(|(i, f)| {
                    let f = f.check.clone();
                    let state = match f.problem {
                        Some(p) => view! { <span class="error" data-testid="file-problem">{p}</span> }.into_any(),
                        None => view! {
                            <progress max="100" value=fixed(f.sent * 100.0, 0) data-testid="file-progress"></progress>
                        }
                        .into_any(),
                    };
                    view! {
                        <tr data-testid="chosen-file">
                            <td>{f.name}</td>
                            <td class="num">{bytes(f.size)}</td>
                            <td>{state}</td>
                            <td><button class="link" on:click=move |_| remove(i)>"remove"</button></td>
                        </tr>
                    }
                })
                .collect_view()
        })
    };
    let total = move || chosen.with(|c| c.iter().map(|f| f.check.size).sum::<u64>());
    view! {
        <table class="grid" data-testid="chosen-files">
            <thead><tr><th>"File"</th><th class="num">"Size"</th><th>"Upload"</th><th></th></tr></thead>
            <tbody>{rows}</tbody>
        </table>
        <p class="muted">{move || format!("{} file(s), {} in all", chosen.with(Vec::len), bytes(total()))}</p>
    }
}
