//! Who spends what (admins): every user's cost, tokens and jobs over the page's range, top
//! spenders first; a name shows that user's usage above.

use leptos::prelude::*;
use pipeline::ops::spenders::SpendersReport;

use super::range_form::Range;
use crate::api;
use crate::components::download::save_text;
use crate::components::fetched::fetched;
use crate::components::format::percent;

/// The spenders of the applied range; picking a user applies their usage.
#[component]
pub fn Spenders(applied: RwSignal<Range>, user: RwSignal<String>) -> impl IntoView {
    let report = LocalResource::new(move || {
        let r = applied.get();
        async move { api::spenders(&r.from, &r.to).await }
    });
    let csv = Action::new_local(move |_: &()| {
        let r = applied.get_untracked();
        async move {
            let text = api::spenders_csv(&r.from, &r.to)
                .await
                .map_err(|e| e.to_string())?;
            save_text(
                &format!("spenders-{}-{}.csv", r.from, r.to),
                &text,
                "text/csv",
            )
        }
    });
    let pick = move |name: String| {
        user.set(name.clone());
        applied.update(|r| r.user = name);
    };
    view! {
        <h2>"Who spends what"</h2>
        <div class="toolbar">
            <button data-testid="spenders-csv" on:click=move |_| { csv.dispatch(()); }>"Download CSV"</button>
        </div>
        {move || csv.value().get().and_then(|r| r.err()).map(|e| view! {
            <p class="error" data-testid="spenders-error">{e}</p>
        })}
        {fetched(report, "Loading spenders…", "spenders-error", move |r| view! { <SpendersTable r=r pick=pick /> })}
    }
}

#[component]
fn SpendersTable(r: SpendersReport, pick: impl Fn(String) + Copy + 'static) -> impl IntoView {
    let empty = r.users.is_empty();
    let others = (r.others > 0).then(|| view! {
        <p class="muted" data-testid="spenders-others">{format!("and {} more users", r.others)}</p>
    });
    view! {
        <table class="grid" data-testid="spenders">
            <thead>
                <tr>
                    <th class="num">"#"</th><th>"User"</th><th>"Models"</th><th class="num">"Jobs"</th>
                    <th class="num">"Input"</th><th class="num">"Output"</th><th class="num">"Cost"</th>
                    <th class="num">"Share"</th>
                </tr>
            </thead>
            <tbody>
                {empty.then(|| view! { <tr><td colspan="8" class="muted">"No jobs in this range."</td></tr> })}
                {r.users.into_iter().map(|u| {
                    let name = u.user_id.clone();
                    let row_user = u.user_id.clone();
                    let models = u.models.iter().map(|m| format!("{} {}", m.model, m.totals.spend.cost_micros.usd())).collect::<Vec<_>>().join(" · ");
                    let t = u.totals;
                    view! {
                        <tr data-testid="spender-row" data-user=row_user>
                            <td class="num">{u.rank}</td>
                            <td><button class="link" data-testid="spender-user" on:click=move |_| pick(name.clone())>{u.user_id}</button></td>
                            <td class="muted">{models}</td>
                            <td class="num">{t.jobs}</td><td class="num">{t.spend.input_tokens}</td>
                            <td class="num">{t.spend.output_tokens}</td>
                            <td class="num" data-testid="spender-cost">{t.spend.cost_micros.usd()}</td>
                            <td class="num">{percent(u.share)}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
        {others}
    }
}
