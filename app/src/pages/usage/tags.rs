//! Cost by tag: each `key=value` tag's jobs, tokens and cost over the page's range, dearest
//! first — the caller's own jobs, the chosen user's (admins), or every user's (admins, no user).

use leptos::prelude::*;
use pipeline::ops::tag_usage::TagsReport;

use super::range_form::Range;
use crate::api;
use crate::components::fetched::fetched;

#[component]
pub fn TagUsage(applied: RwSignal<Range>) -> impl IntoView {
    let report = LocalResource::new(move || {
        let r = applied.get();
        async move { api::tag_usage(&r.from, &r.to, &r.user).await }
    });
    let caps = LocalResource::new(api::tag_budgets);
    view! {
        <h2>"Cost by tag"</h2>
        {fetched(report, "Loading tags…", "tags-error", move |r| view! { <TagTable r=r /> })}
        {fetched(caps, "Loading tag caps…", "tag-caps-error", move |c| view! { <TagCaps caps=c /> })}
    }
}

/// The tags' daily caps and what their jobs committed today (set by admins with
/// `PUT /api/usage/tags/budget`).
#[component]
fn TagCaps(caps: Vec<pipeline::ops::budgets::TagBudgetView>) -> impl IntoView {
    (!caps.is_empty()).then(|| view! {
        <table class="grid" data-testid="tag-caps">
            <caption>"Daily caps per tag (UTC): a job that would take a tag past its cap is refused"</caption>
            <thead><tr><th>"Tag"</th><th class="num">"Cap"</th><th class="num">"Committed today"</th><th class="num">"Left"</th></tr></thead>
            <tbody>
                {caps.into_iter().map(|c| {
                    let tag = c.tag.clone();
                    view! {
                        <tr data-testid="tag-cap-row" data-tag=tag>
                            <td><code>{c.tag}</code></td>
                            <td class="num">{c.daily_cap_micros.usd()}</td>
                            <td class="num">{c.committed_micros.usd()}</td>
                            <td class="num">{c.left_micros.usd()}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    })
}

#[component]
pub fn TagTable(r: TagsReport) -> impl IntoView {
    let whose = match &r.user_id {
        Some(u) => format!("Jobs of {u}; a job with two tags counts under each."),
        None => "Every user's jobs; a job with two tags counts under each.".to_owned(),
    };
    let empty = r.tags.is_empty();
    view! {
        <p class="muted" data-testid="tags-whose">{whose}</p>
        <table class="grid" data-testid="tag-usage">
            <thead>
                <tr>
                    <th class="num">"#"</th><th>"Tag"</th><th>"Models"</th><th class="num">"Jobs"</th>
                    <th class="num">"Input"</th><th class="num">"Output"</th><th class="num">"Cost"</th>
                </tr>
            </thead>
            <tbody>
                {empty.then(|| view! {
                    <tr><td colspan="7" class="muted">"No tagged jobs in this range (jobs take "<code>"tags"</code>", e.g. team=search)."</td></tr>
                })}
                {r.tags.into_iter().map(|t| {
                    let models = t.models.iter().map(|m| format!("{} {}", m.model, m.totals.spend.cost_micros.usd())).collect::<Vec<_>>().join(" · ");
                    let totals = t.totals;
                    let tag = t.tag.clone();
                    view! {
                        <tr data-testid="tag-row" data-tag=tag>
                            <td class="num">{t.rank}</td>
                            <td><code>{t.tag}</code></td>
                            <td class="muted">{models}</td>
                            <td class="num">{totals.jobs}</td><td class="num">{totals.spend.input_tokens}</td>
                            <td class="num">{totals.spend.output_tokens}</td>
                            <td class="num" data-testid="tag-cost">{totals.spend.cost_micros.usd()}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}
