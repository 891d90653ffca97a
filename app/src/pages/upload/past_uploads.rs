//! The caller's earlier uploads.

use leptos::prelude::*;

use crate::api;
use crate::components::fetched::fetched;
use crate::components::format::short_id;

/// The newest uploads, each linking to its page, with its mode, progress and cost.
#[component]
pub fn PastUploads() -> impl IntoView {
    let past = LocalResource::new(api::list_batches);
    view! {
        {fetched(past, "Loading…", "past-uploads-error", move |list| if list.items.is_empty() {
                        view! { <p class="muted" data-testid="no-uploads">"No uploads yet."</p> }.into_any()
                    } else {
                        view! {
                            <table class="grid" data-testid="past-uploads">
                                <thead><tr><th>"Upload"</th><th>"Mode"</th><th class="num">"Done"</th><th class="num">"Cost"</th></tr></thead>
                                <tbody>
                                    {list.items.into_iter().map(|b| view! {
                                        <tr>
                                            <td><a href=format!("/ui/batches/{}", b.id)><code>{short_id(&b.id)}</code></a></td>
                                            <td>{b.mode.as_str()}</td>
                                            <td class="num">{format!("{}/{}", b.done, b.total)}</td>
                                            <td class="num">{b.cost_micros.usd()}</td>
                                        </tr>
                                    }).collect_view()}
                                </tbody>
                            </table>
                        }.into_any()
                    })}
    }
}
