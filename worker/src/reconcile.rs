//! Reconciliation with Anthropic's bill (issue 20, part 3; `pipeline::ops::reconcile` decides):
//! with `ANTHROPIC_ADMIN_KEY` set, the cron compares, once a day, our cost per UTC day and
//! model (the usage rollup) with the organization's cost report (the Admin API), keeps the
//! result in the `reconciliation` heartbeat for the Dashboard, and raises an alert per flagged
//! line. `POST /api/reconciliation/run` does the same at once, over any range.

use pipeline::anthropic::admin::CostReport;
use pipeline::clock::{day_of, DAY_MS};
use pipeline::error::ApiError;
use pipeline::ops::reconcile::{
    compare, report_query, settled_day, ReconciliationRun, ReportError, Threshold,
};
use pipeline::outcome::describe;

use crate::config::now_ms;
use crate::error::AppError;
use crate::services::AppState;

/// The heartbeat that keeps the last run (its detail is the [`ReconciliationRun`] as JSON).
pub const BEAT: &str = "reconciliation";

/// Days the daily run covers, up to the last settled one: a week, so a late report line is
/// still seen.
const DAILY_DAYS: i64 = 7;

/// Pages of the report one run reads at most (31 days each).
const MAX_PAGES: usize = 4;

/// Compares days [`from_day`, `to_day`), keeps the result and alerts on each flagged line.
pub async fn run(
    state: &AppState,
    from_day: i64,
    to_day: i64,
) -> Result<ReconciliationRun, AppError> {
    let Some(key) = state.config.anthropic_admin_key.as_deref() else {
        return Err(ApiError::new(
            409,
            "not_configured",
            "reconciliation needs an Admin API key: set the ANTHROPIC_ADMIN_KEY secret",
            None,
        )
        .into());
    };
    let reports = cost_reports(&state.anthropic.with_key(key), from_day, to_day).await?;
    let ours = state.store.our_costs(from_day, to_day).await?;
    let threshold = Threshold::default();
    let result = compare(&ours, &reports, from_day, to_day, threshold).map_err(unreadable)?;
    let now = now_ms();
    let run = ReconciliationRun {
        checked_at: now,
        from: day_of(from_day * DAY_MS),
        to: day_of((to_day - 1) * DAY_MS),
        threshold_micros: threshold.abs_micros,
        threshold_permille: threshold.rel_permille,
        result,
    };
    let detail = serde_json::to_string(&run)
        .map_err(|e| ApiError::internal(format!("cannot encode the reconciliation: {e}")))?;
    state.store.beat(BEAT, now, &detail).await?;
    for line in run.result.lines.iter().filter(|l| l.flagged) {
        crate::alerts::reconciliation_alert(state, line).await?;
    }
    Ok(run)
}

/// The Admin API's cost report for days [`from_day`, `to_day`), at most [`MAX_PAGES`] pages.
async fn cost_reports(
    admin: &crate::anthropic::Anthropic,
    from_day: i64,
    to_day: i64,
) -> Result<Vec<CostReport>, AppError> {
    let mut reports = Vec::new();
    let mut page: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let report = admin
            .cost_report(&report_query(from_day, to_day, page.as_deref()))
            .await
            .map_err(|e| {
                ApiError::new(
                    502,
                    "upstream_error",
                    format!("the cost report could not be read: {}", describe(&e)),
                    None,
                )
            })?;
        let more = report.has_more;
        page = report.next_page.clone();
        reports.push(report);
        if !more || page.is_none() {
            break;
        }
    }
    Ok(reports)
}

/// A cost report the comparison cannot read: a 502 saying what is wrong with it.
fn unreadable(e: ReportError) -> AppError {
    let what = match e {
        ReportError::Currency(c) => format!("a line in {c}, not USD"),
        ReportError::Amount(a) => format!("an amount that is not a number: {a:?}"),
        ReportError::Day(d) => format!("a bucket that does not start on a date: {d:?}"),
    };
    ApiError::new(
        502,
        "upstream_error",
        format!("the cost report has {what}"),
        None,
    )
    .into()
}

/// The last run kept, if any.
pub async fn last(state: &AppState) -> worker::Result<Option<ReconciliationRun>> {
    Ok(state
        .store
        .last_beat(BEAT)
        .await?
        .and_then(|b| b.detail)
        .and_then(|d| serde_json::from_str(&d).ok()))
}

/// The cron's daily run: once the last settled day is not covered by the last run, the week up
/// to it. Nothing without an Admin API key.
pub async fn daily(state: &AppState, now: i64) {
    if state.config.anthropic_admin_key.is_none() {
        return;
    }
    let settled = settled_day(now);
    let covered = match last(state).await {
        Ok(last) => last.and_then(|r| pipeline::clock::parse_day(&r.to)),
        Err(e) => {
            worker::console_error!("reconciliation: reading the last run failed: {e}");
            return;
        }
    };
    if covered.is_some_and(|ms| ms.div_euclid(DAY_MS) >= settled) {
        return;
    }
    match run(state, settled - DAILY_DAYS + 1, settled + 1).await {
        Ok(r) => worker::console_log!(
            "reconciliation: {} to {}: ours ${}, billed ${}, {} flagged",
            r.from,
            r.to,
            pipeline::money::UsdMicros::new(r.result.ours_micros).dollars(),
            pipeline::money::UsdMicros::new(r.result.billed_micros).dollars(),
            r.result.flagged
        ),
        Err(e) => worker::console_error!("reconciliation failed: {}", e.0.body.error),
    }
}
