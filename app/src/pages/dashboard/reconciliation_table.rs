//! The reconciliation panel: our cost per UTC day and model beside what Anthropic's cost
//! report billed, the flagged lines first (`GET /api/reconciliation`).

use leptos::prelude::*;
use pipeline::money::UsdMicros;
use pipeline::ops::reconcile::ReconciliationRun;

use crate::components::format::when;

/// A signed difference in dollars.
fn signed(micros: i64) -> String {
    let sign = if micros < 0 {
        "−"
    } else if micros > 0 {
        "+"
    } else {
        ""
    };
    format!("{sign}{}", UsdMicros::new(micros.unsigned_abs()).usd())
}

#[component]
pub fn ReconciliationTable(r: ReconciliationRun) -> impl IntoView {
    let summary = if r.result.flagged == 0 {
        format!(
            "{} to {}: our figures and the bill agree (within 1 ¢ or 1 % per day and model)",
            r.from, r.to
        )
    } else {
        format!(
            "{} to {}: {} day and model lines differ from the bill — a wrong price, a lost job or \
             a call paid twice",
            r.from, r.to, r.result.flagged
        )
    };
    let class = if r.result.flagged == 0 { "ok" } else { "warn" };
    let mut lines = r.result.lines.clone();
    lines.sort_by_key(|l| (!l.flagged, std::cmp::Reverse(l.day.clone())));
    let rows = lines
        .into_iter()
        .map(|l| {
            let cls = if l.flagged { "warn" } else { "" };
            view! {
                <tr class=cls data-testid="recon-row" data-model=l.model.clone() data-day=l.day.clone()
                    data-flagged=l.flagged.to_string()>
                    <td>{l.day.clone()}</td>
                    <td>{l.model.clone()}</td>
                    <td class="num">{UsdMicros::new(l.ours_micros).usd()}</td>
                    <td class="num">{UsdMicros::new(l.billed_micros).usd()}</td>
                    <td class="num">{signed(l.diff_micros)}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <p class=class data-testid="recon-summary">{summary}</p>
        <table class="grid" data-testid="reconciliation">
            <caption>{format!(
                "Checked {} UTC — ours {}, billed {} (other costs {})",
                when(r.checked_at),
                UsdMicros::new(r.result.ours_micros).usd(),
                UsdMicros::new(r.result.billed_micros).usd(),
                UsdMicros::new(r.result.other_micros).usd()
            )}</caption>
            <thead><tr>
                <th scope="col">"Day"</th><th scope="col">"Model"</th>
                <th scope="col">"Ours"</th><th scope="col">"Billed"</th><th scope="col">"Billed − ours"</th>
            </tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
}
