//! The sync and batch paths side by side: each judged by its own SLOs, so a Message Batch
//! waiting its hour never colours the sync path's figures.

use leptos::prelude::*;
use pipeline::ops::metrics::Metrics;

use super::series::{batch_rows, sync_rows, Row};

/// Both paths' panels of the latest row.
#[component]
pub fn Paths(l: Metrics) -> impl IntoView {
    view! {
        <div class="paths">
            <PathPanel name="sync" title="Sync path (Messages API)" rows=sync_rows(&l) />
            <PathPanel name="batch" title="Batch path (Message Batches)" rows=batch_rows(&l) />
        </div>
    }
}

/// One path: a figure per row, `over` on the rows past their SLO.
#[component]
fn PathPanel(name: &'static str, title: &'static str, rows: Vec<Row>) -> impl IntoView {
    view! {
        <div class="path-panel" data-testid=format!("path-{name}")>
            <h3>{title}</h3>
            <table class="grid">
                <tbody>
                    {rows.into_iter().map(|r| view! {
                        <tr class:over=r.over data-testid="path-row" data-metric=r.metric>
                            <th>{r.label}</th>
                            <td class="num">{r.value}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}
