//! The usage report's table by day and model.

use leptos::prelude::*;
use pipeline::ops::usage::UsageRow;

/// One row per day and model: jobs, the four token counts and the cost.
#[component]
pub fn UsageTable(rows: Vec<UsageRow>) -> impl IntoView {
    let empty = rows.is_empty();
    view! {
        <table class="grid" data-testid="usage-table">
            <thead>
                <tr>
                    <th>"Day"</th><th>"Model"</th><th class="num">"Jobs"</th><th class="num">"Input"</th>
                    <th class="num">"Output"</th><th class="num">"Cache write"</th>
                    <th class="num">"Cache read"</th><th class="num">"Cost"</th>
                </tr>
            </thead>
            <tbody>
                {empty.then(|| view! { <tr><td colspan="8" class="muted">"No jobs in this range."</td></tr> })}
                {rows.into_iter().map(|row| {
                    let t = row.totals;
                    view! {
                        <tr data-testid="usage-row">
                            <td>{row.day}</td><td>{row.model}</td>
                            <td class="num">{t.jobs}</td><td class="num">{t.spend.input_tokens}</td>
                            <td class="num">{t.spend.output_tokens}</td><td class="num">{t.spend.cache_write_tokens}</td>
                            <td class="num">{t.spend.cache_read_tokens}</td><td class="num">{t.spend.cost_micros.usd()}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}
