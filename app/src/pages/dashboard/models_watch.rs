//! The catalog watch (`pipeline::models::watch`): what the last check of the API's model list
//! found, and this week's jobs on deprecated models with their retirement dates.

use leptos::prelude::*;
use pipeline::models::watch::{Level, WatchView};

use crate::components::format::when;

/// The notices of the last check, then one row per deprecated model.
#[component]
pub fn ModelsWatch(w: WatchView) -> impl IntoView {
    let checked = match &w.report {
        Some(r) => format!(
            "Last checked {} UTC: the API lists {} models.",
            when(r.checked_at),
            r.listed
        ),
        None => "Not checked yet: the cron reads the API's model list once a day \
                 (POST /api/models/check reads it now)."
            .to_string(),
    };
    let quiet = w.notices.is_empty();
    view! {
        <p class="muted" data-testid="models-checked">{checked}</p>
        <ul class="alerts" data-testid="models-notices">
            {quiet.then(|| view! { <li class="muted">"The catalog matches the API's list."</li> })}
            {w.notices.into_iter().map(|n| {
                let class = match n.level { Level::Warning => "alert", Level::Info => "notice" };
                let level = match n.level { Level::Warning => "warning", Level::Info => "info" };
                view! { <li class=class data-testid="models-notice" data-level=level data-model=n.model>{n.text}</li> }
            }).collect_view()}
        </ul>
        <table class="grid" data-testid="models-deprecated">
            <thead><tr><th>"Deprecated model"</th><th>"Since"</th><th>"Retires"</th><th class="num">"Jobs, last 7 days"</th></tr></thead>
            <tbody>
                {w.deprecated.is_empty().then(|| view! { <tr><td colspan="4" class="muted">"No catalog model is deprecated."</td></tr> })}
                {w.deprecated.into_iter().map(|d| {
                    let model = d.model.clone();
                    view! {
                    <tr data-testid="models-deprecated-row" data-model=model>
                        <td>{d.model}</td>
                        <td>{d.deprecated_on}</td>
                        <td>{d.retires_on.unwrap_or_else(|| "—".into())}</td>
                        <td class="num" data-testid="models-deprecated-jobs">{d.jobs_this_week}</td>
                    </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}
