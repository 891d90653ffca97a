use leptos::prelude::*;
use pipeline::ops::budgets::{BudgetSetting, DailyBudget};
use pipeline::ops::usage::UsageReport;

use crate::api::{self, ApiError};
use crate::components::chart::{Bar, BarChart};
use crate::components::download::save_text;
use crate::components::layout::{is_admin, Health};
use pipeline::money::{parse_dollars, usd};

/// The range (and, for admins, the user) a report is asked for; empty means the Worker's
/// default (the last 30 days, the caller).
#[derive(Debug, Clone, Default, PartialEq)]
struct Range {
    from: String,
    to: String,
    user: String,
}

/// Your tokens and cost by day and by model, the savings from batches and caching, today's
/// budget, and CSV export; admins can look at any user and set their daily budget.
#[component]
pub fn Usage() -> impl IntoView {
    let admin = is_admin(expect_context::<Health>());
    let from = RwSignal::new(String::new());
    let to = RwSignal::new(String::new());
    let user = RwSignal::new(String::new());
    let applied = RwSignal::new(Range::default());
    let save = Action::new_local(|s: &BudgetSetting| {
        let s = s.clone();
        async move { api::set_budget(&s).await }
    });
    let report = LocalResource::new(move || {
        let r = applied.get();
        save.version().track();
        async move { api::usage(&r.from, &r.to, &r.user).await }
    });
    // The date inputs show the range the Worker chose when none was typed.
    Effect::new(move |_| {
        if let Some(Ok(r)) = report.get() {
            if from.get_untracked().is_empty() {
                from.set(r.from.clone());
            }
            if to.get_untracked().is_empty() {
                to.set(r.to);
            }
        }
    });
    let csv = Action::new_local(move |_: &()| {
        let r = applied.get_untracked();
        // Named after what the Worker resolved (its defaults included).
        let name = match report.get_untracked() {
            Some(Ok(rep)) => format!("usage-{}-{}-{}.csv", rep.user_id, rep.from, rep.to),
            _ => format!("usage-{}-{}-{}.csv", r.user, r.from, r.to),
        };
        async move {
            let text = api::usage_csv(&r.from, &r.to, &r.user)
                .await
                .map_err(|e| e.to_string())?;
            save_text(&name, &text, "text/csv")
        }
    });
    let error = move || {
        let report_error = report.get().and_then(|r| r.err()).map(|e| e.to_string());
        report_error.or_else(|| csv.value().get().and_then(|r| r.err()))
    };
    view! {
        <section class="page" data-testid="page-usage">
            <h1>"Usage"</h1>
            <form class="filters" on:submit=move |ev| {
                ev.prevent_default();
                applied.set(Range {
                    from: from.get(),
                    to: to.get(),
                    user: if admin() { user.get().trim().to_string() } else { String::new() },
                });
            }>
                <label class="filter">"From"
                    <input type="date" data-testid="usage-from" prop:value=from
                        on:input=move |ev| from.set(event_target_value(&ev)) />
                </label>
                <label class="filter">"To"
                    <input type="date" data-testid="usage-to" prop:value=to
                        on:input=move |ev| to.set(event_target_value(&ev)) />
                </label>
                <Show when=admin>
                    <label class="filter">"User"
                        <input data-testid="usage-user" size="14" placeholder="you" prop:value=user
                            on:input=move |ev| user.set(event_target_value(&ev)) />
                    </label>
                </Show>
                <button type="submit" class="primary" data-testid="usage-apply">"Apply"</button>
                <button type="button" class="secondary" data-testid="usage-csv"
                    disabled=move || csv.pending().get()
                    on:click=move |_| { csv.dispatch(()); }>
                    "Download CSV"
                </button>
            </form>
            {move || error().map(|e| view! { <p class="error" data-testid="usage-error">{e}</p> })}
            {move || match report.get() {
                None => view! { <p class="muted">"Loading…"</p> }.into_any(),
                Some(Ok(r)) => view! { <ReportView r=r /> }.into_any(),
                Some(Err(_)) => ().into_any(),
            }}
            <Show when=admin>
                <BudgetForm report=report user=user save=save />
            </Show>
        </section>
    }
}

/// Totals, savings, today's budget, the chart of cost per day and the table by day and model.
#[component]
fn ReportView(r: UsageReport) -> impl IntoView {
    let t = r.totals;
    let unknown = (t.cost_unknown_jobs > 0).then(|| {
        format!(
            "{} jobs used a model without a price; their cost is not included",
            t.cost_unknown_jobs
        )
    });
    let bars = r
        .days
        .iter()
        .map(|d| Bar {
            label: d.day.get(5..).unwrap_or(&d.day).to_string(),
            value: d.cost_micros as f64,
            title: format!("{}: {} ({} jobs)", d.day, usd(d.cost_micros), d.jobs),
        })
        .collect::<Vec<_>>();
    let rows = r.rows;
    let empty = rows.is_empty();
    view! {
        <h2>{format!("{} · {} to {}", r.user_id, r.from, r.to)}</h2>
        <div class="kpis">
            <div class="kpi"><span class="kpi-label">"Cost"</span>
                <strong data-testid="usage-total-cost">{usd(t.cost_micros)}</strong></div>
            <div class="kpi"><span class="kpi-label">"Jobs"</span>
                <strong data-testid="usage-total-jobs">{t.jobs}</strong></div>
            <div class="kpi"><span class="kpi-label">"Saved by batches"</span>
                <strong data-testid="usage-saving-batch">{usd(r.savings.batch_micros)}</strong></div>
            <div class="kpi"><span class="kpi-label">"Saved by caching"</span>
                <strong data-testid="usage-saving-cache">{usd(r.savings.cache_micros)}</strong></div>
        </div>
        {unknown.map(|u| view! { <p class="muted">{u}</p> })}
        <dl class="facts">
            <dt>"Input tokens"</dt><dd data-testid="usage-tokens-input">{t.input_tokens}</dd>
            <dt>"Output tokens"</dt><dd data-testid="usage-tokens-output">{t.output_tokens}</dd>
            <dt>"Cache write tokens"</dt><dd data-testid="usage-tokens-cache-write">{t.cache_write_tokens}</dd>
            <dt>"Cache read tokens"</dt><dd data-testid="usage-tokens-cache-read">{t.cache_read_tokens}</dd>
            <dt>"Daily budget"</dt><dd data-testid="usage-budget">{budget_text(&r.budget)}</dd>
        </dl>
        <BarChart testid="usage-chart" title="Cost per day (UTC)" bars=bars bar_testid="usage-bar"
            y_fmt={|v| usd(v.round() as u64)} />
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
                            <td class="num">{t.jobs}</td><td class="num">{t.input_tokens}</td>
                            <td class="num">{t.output_tokens}</td><td class="num">{t.cache_write_tokens}</td>
                            <td class="num">{t.cache_read_tokens}</td><td class="num">{usd(t.cost_micros)}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}

/// "cap $5.000000 · soft $4.000000 · spent today $0.120000", or that there is none.
fn budget_text(b: &DailyBudget) -> String {
    let spent = format!("spent today {}", usd(b.spent_today_micros));
    if b.daily_cap_micros.is_none() && b.soft_micros.is_none() {
        return format!("none set · {spent}");
    }
    let amount = |v: Option<u64>| v.map_or_else(|| "none".to_string(), usd);
    format!(
        "cap {} · soft {} · {spent}",
        amount(b.daily_cap_micros),
        amount(b.soft_micros)
    )
}

/// Admins: a user's daily cap and soft threshold, typed in dollars (empty removes one).
#[component]
fn BudgetForm(
    report: LocalResource<Result<UsageReport, ApiError>>,
    /// The user typed in the filter, if any (else the report's user is meant).
    user: RwSignal<String>,
    save: Action<BudgetSetting, Result<BudgetSetting, ApiError>>,
) -> impl IntoView {
    let cap = RwSignal::new(String::new());
    let soft = RwSignal::new(String::new());
    let local_error = RwSignal::new(None::<String>);
    let target = move || {
        let typed = user.get().trim().to_string();
        if typed.is_empty() {
            report
                .get()
                .and_then(|r| r.ok())
                .map(|r| r.user_id)
                .unwrap_or_default()
        } else {
            typed
        }
    };
    // The fields start from the budget the report shows.
    Effect::new(move |_| {
        if let Some(Ok(r)) = report.get() {
            let plain = |v: Option<u64>| v.map(pipeline::money::dollars).unwrap_or_default();
            cap.set(plain(r.budget.daily_cap_micros));
            soft.set(plain(r.budget.soft_micros));
        }
    });
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let parsed = parse_dollars(&cap.get()).and_then(|c| Ok((c, parse_dollars(&soft.get())?)));
        match parsed {
            Ok((daily_cap_micros, soft_micros)) => {
                local_error.set(None);
                save.dispatch(BudgetSetting {
                    user_id: target(),
                    daily_cap_micros,
                    soft_micros,
                });
            }
            Err(e) => local_error.set(Some(e)),
        }
    };
    let result = move || {
        if let Some(e) = local_error.get() {
            return Some((e, "error"));
        }
        save.value().get().map(|r| match r {
            Ok(s) => (
                format!(
                    "saved for {}: cap {}, soft {}",
                    s.user_id,
                    s.daily_cap_micros.map_or_else(|| "none".into(), usd),
                    s.soft_micros.map_or_else(|| "none".into(), usd)
                ),
                "ok",
            ),
            Err(e) => (e.to_string(), "error"),
        })
    };
    view! {
        <form class="card form budget-form" on:submit=submit>
            <h2>"Daily budget for " {move || target()}</h2>
            <div class="row">
                <label>"Cap ($) "
                    <input data-testid="budget-cap" size="10" inputmode="decimal" placeholder="none"
                        prop:value=cap on:input=move |ev| cap.set(event_target_value(&ev)) />
                </label>
                <label>"Soft threshold ($) "
                    <input data-testid="budget-soft" size="10" inputmode="decimal" placeholder="none"
                        prop:value=soft on:input=move |ev| soft.set(event_target_value(&ev)) />
                </label>
            </div>
            <div class="actions">
                <button type="submit" data-testid="budget-save" disabled=move || save.pending().get()>
                    "Save budget"
                </button>
                {move || result().map(|(text, class)| view! {
                    <span class=class data-testid="budget-result">{text}</span>
                })}
            </div>
        </form>
    }
}
