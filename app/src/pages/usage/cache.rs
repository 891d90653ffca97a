//! Prompt-cache use: per template and model, the share of prompt tokens read from the cache,
//! the tokens read, and what the cache saved over the page's range (`GET /api/usage/cache`).
//! The Dashboard shows the same table for every user's jobs.

use leptos::prelude::*;
use pipeline::decimal::fixed;
use pipeline::money::UsdMicros;
use pipeline::ops::cache_use::CacheReport;

use super::range_form::Range;
use crate::api;
use crate::components::fetched::fetched;

#[component]
pub fn CacheUse(applied: RwSignal<Range>) -> impl IntoView {
    let report = LocalResource::new(move || {
        let r = applied.get();
        async move { api::cache_use(&r.from, &r.to, &r.user).await }
    });
    view! {
        <h2>"Prompt cache"</h2>
        {fetched(report, "Loading cache use…", "cache-error", move |r| view! { <CacheTable r=r /> })}
    }
}

/// A signed amount: a negative saving is a cache that cost more than it saved.
fn signed(micros: i64) -> String {
    let sign = if micros < 0 { "−" } else { "" };
    format!("{sign}{}", UsdMicros::new(micros.unsigned_abs()).usd())
}

fn percent(rate: f64) -> String {
    format!("{} %", fixed(rate * 100.0, 1))
}

#[component]
pub fn CacheTable(r: CacheReport) -> impl IntoView {
    let summary = format!(
        "{} of {} prompt tokens read from the cache ({}), saving {} — reads cost a tenth of \
         input, writes 1.25× (5 minutes, sync) or 2× (1 hour, batches)",
        r.cache_read_tokens,
        r.prompt_tokens,
        percent(r.hit_rate),
        signed(r.saved_micros)
    );
    let empty = r.lines.is_empty();
    view! {
        <p class="muted" data-testid="cache-summary">{summary}</p>
        <table class="grid" data-testid="cache-use">
            <thead>
                <tr>
                    <th>"Template"</th><th>"Model"</th><th>"Mode"</th><th class="num">"Jobs"</th>
                    <th class="num">"Hit rate"</th><th class="num">"Read from cache"</th>
                    <th class="num">"Written"</th><th class="num">"Saved"</th>
                </tr>
            </thead>
            <tbody>
                {empty.then(|| view! {
                    <tr><td colspan="8" class="muted">"No jobs with prompts in this range."</td></tr>
                })}
                {r.lines.into_iter().map(|l| {
                    let saved = if l.unpriced { "not priced".to_owned() } else { signed(l.saved_micros) };
                    let (template, model) = (l.template.clone(), l.model.clone());
                    view! {
                        <tr data-testid="cache-row" data-template=template data-model=model>
                            <td>{l.template}</td><td>{l.model}</td><td>{l.mode}</td>
                            <td class="num">{l.jobs}</td>
                            <td class="num" data-testid="cache-hit-rate">{percent(l.hit_rate)}</td>
                            <td class="num">{l.cache_read_tokens}</td>
                            <td class="num">{l.cache_write_tokens}</td>
                            <td class="num" data-testid="cache-saved">{saved}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}
