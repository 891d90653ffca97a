//! The production headroom: each entry point's highest use of each per-invocation limit over
//! the last day (`pipeline::envelope::headroom`), the tightest first.

use leptos::prelude::*;
use pipeline::decimal::fixed;
use pipeline::envelope::headroom::Peak;
use pipeline::envelope::Figure;

use crate::components::format::{bytes, seconds};

/// A share at or past this many per cent is shown as a warning (the envelope suite's goal).
const WARN_PCT: f64 = 80.0;

/// A figure's amount for people.
fn amount(figure: Figure, n: u64) -> String {
    match figure {
        Figure::MemoryBytes => bytes(n),
        Figure::WallMs => seconds(n as i64),
        _ => n.to_string(),
    }
}

/// One row per entry point and figure, with the peak, the limit and the share.
#[component]
pub fn HeadroomTable(peaks: Vec<Peak>) -> impl IntoView {
    let empty = peaks.is_empty();
    view! {
        <table class="grid" data-testid="headroom">
            <thead><tr><th>"Entry point"</th><th>"Limit"</th><th class="num">"Peak, last day"</th><th class="num">"Of"</th><th class="num">"Share"</th></tr></thead>
            <tbody>
                {empty.then(|| view! { <tr><td colspan="5" class="muted">"No invocation recorded yet."</td></tr> })}
                {peaks.into_iter().map(|p| {
                    let class = if p.share_pct >= WARN_PCT { "warn" } else { "" };
                    view! {
                        <tr data-testid="headroom-row" data-entry=p.entry.as_str() data-figure=p.figure.as_str() class=class>
                            <td>{p.entry.as_str()}</td>
                            <td>{p.figure.as_str().replace('_', " ")}</td>
                            <td class="num">{amount(p.figure, p.peak)}</td>
                            <td class="num">{amount(p.figure, p.limit)}</td>
                            <td class="num" data-testid="headroom-share">{format!("{} %", fixed(p.share_pct, 1))}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}
