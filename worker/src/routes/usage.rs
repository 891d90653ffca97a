//! Per-user usage: `GET /api/usage` (tokens and cost by day and model, totals, savings, the
//! daily budget), `GET /api/usage.csv` (the same rows as CSV), `PUT /api/usage/budget` (admins:
//! a user's daily cap and soft threshold), `GET /api/usage/spenders[.csv]` (admins: every user's
//! cost, tokens and jobs by model, top spenders first), `GET /api/usage/tags[.csv]` (cost by
//! `key=value` tag: a user's own jobs, or every user's for admins).

use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::ops::budgets::BudgetSetting;
use pipeline::ops::spenders::{parse_limit, SpendersReport};
use pipeline::ops::tag_usage::TagsReport;
use pipeline::ops::usage::{UsageQuery, UsageReport};
use serde::Deserialize;

use super::admission::json_body;
use crate::config::now_ms;
use crate::error::AppError;
use crate::identity::Caller;
use crate::services::AppState;

#[derive(Deserialize)]
pub struct UsageParams {
    from: Option<String>,
    to: Option<String>,
    user: Option<String>,
}

async fn report(
    state: &AppState,
    caller: &Caller,
    p: &UsageParams,
) -> Result<UsageReport, AppError> {
    let now = now_ms();
    let q = UsageQuery::parse(
        p.from.as_deref(),
        p.to.as_deref(),
        p.user.as_deref(),
        caller.0.user_id.as_str(),
        caller.0.is_admin(),
        now,
    )?;
    let groups = state.store.usage(&q.user_id, q.from_ms, q.to_ms).await?;
    let budget = state.store.budget(&q.user_id, now).await?;
    Ok(UsageReport::build(&q, &groups, budget))
}

#[worker::send]
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Query(p): Query<UsageParams>,
) -> Result<Response, AppError> {
    Ok(Json(report(&state, &caller, &p).await?).into_response())
}

#[worker::send]
pub async fn csv(
    State(state): State<AppState>,
    caller: Caller,
    Query(p): Query<UsageParams>,
) -> Result<Response, AppError> {
    let r = report(&state, &caller, &p).await?;
    let name = format!("usage-{}-{}-{}.csv", r.user_id, r.from, r.to);
    Ok(csv_download(&name, r.to_csv()))
}

/// A CSV answer the browser saves as `name`.
fn csv_download(name: &str, text: String) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{name}\""),
            ),
        ],
        text,
    )
        .into_response()
}

#[derive(Deserialize)]
pub struct TagParams {
    from: Option<String>,
    to: Option<String>,
    user: Option<String>,
    limit: Option<String>,
}

/// Users see their own jobs' tags; admins every user's, or one user's with `?user=`.
async fn tags_report(
    state: &AppState,
    caller: &Caller,
    p: &TagParams,
) -> Result<TagsReport, AppError> {
    let now = now_ms();
    let admin = caller.0.is_admin();
    let q = UsageQuery::parse(
        p.from.as_deref(),
        p.to.as_deref(),
        p.user.as_deref(),
        caller.0.user_id.as_str(),
        admin,
        now,
    )?;
    let everyone = admin && p.user.as_deref().is_none_or(str::is_empty);
    let user = (!everyone).then_some(q.user_id);
    let limit = parse_limit(p.limit.as_deref())?;
    let groups = state
        .store
        .tag_usage(user.as_deref(), q.from_ms, q.to_ms)
        .await?;
    Ok(TagsReport::build(&groups, user, q.from_ms, q.to_ms, limit))
}

/// Cost by tag: each `key=value` tag's tokens, cost and jobs by model over the days.
#[worker::send]
pub async fn tags(
    State(state): State<AppState>,
    caller: Caller,
    Query(p): Query<TagParams>,
) -> Result<Response, AppError> {
    Ok(Json(tags_report(&state, &caller, &p).await?).into_response())
}

/// The same report as CSV: one line per tag and model.
#[worker::send]
pub async fn tags_csv(
    State(state): State<AppState>,
    caller: Caller,
    Query(p): Query<TagParams>,
) -> Result<Response, AppError> {
    let r = tags_report(&state, &caller, &p).await?;
    let name = format!("tags-{}-{}.csv", r.from, r.to);
    Ok(csv_download(&name, r.to_csv()))
}

/// `PUT /api/usage/tags/budget` (admins): a tag's daily cap (`null` removes it).
#[worker::send]
pub async fn set_tag_budget(
    State(state): State<AppState>,
    Caller(caller): Caller,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    caller.require_admin("set tag budgets")?;
    json_body(&headers, &body, 4 * 1024)?;
    let s = pipeline::ops::budgets::TagBudgetSetting::parse(&body)?;
    state
        .store
        .set_tag_budget(&s.tag, s.daily_cap_micros, now_ms())
        .await?;
    Ok(Json(s).into_response())
}

/// `GET /api/usage/tags/budgets`: every tag's daily cap and what its jobs committed today.
#[worker::send]
pub async fn tag_budgets(
    State(state): State<AppState>,
    Caller(_caller): Caller,
) -> Result<Response, AppError> {
    Ok(Json(state.store.tag_budgets(None, now_ms()).await?).into_response())
}

/// Prompt-cache use per template and model: users see their own jobs; admins every user's, or
/// one user's with `?user=`.
#[worker::send]
pub async fn cache(
    State(state): State<AppState>,
    caller: Caller,
    Query(p): Query<TagParams>,
) -> Result<Response, AppError> {
    let now = now_ms();
    let admin = caller.0.is_admin();
    let q = UsageQuery::parse(
        p.from.as_deref(),
        p.to.as_deref(),
        p.user.as_deref(),
        caller.0.user_id.as_str(),
        admin,
        now,
    )?;
    let everyone = admin && p.user.as_deref().is_none_or(str::is_empty);
    let user = (!everyone).then_some(q.user_id);
    let sums = state
        .store
        .cache_use(user.as_deref(), q.from_ms, q.to_ms)
        .await?;
    let range = (
        pipeline::clock::day_of(q.from_ms),
        pipeline::clock::day_of(q.to_ms - 1),
    );
    Ok(Json(pipeline::ops::cache_use::CacheReport::build(
        range, user, &sums, now,
    ))
    .into_response())
}

#[derive(Deserialize)]
pub struct SpendersParams {
    from: Option<String>,
    to: Option<String>,
    limit: Option<String>,
}

async fn spenders_report(
    state: &AppState,
    caller: &Caller,
    p: &SpendersParams,
) -> Result<SpendersReport, AppError> {
    caller.0.require_admin("see every user's spend")?;
    let (from, to) = UsageQuery::range(p.from.as_deref(), p.to.as_deref(), now_ms())?;
    let limit = parse_limit(p.limit.as_deref())?;
    let groups = state.store.spenders(from, to).await?;
    Ok(SpendersReport::build(&groups, from, to, limit))
}

/// Who spends what: every user's cost, tokens and jobs by model over the days, top first.
#[worker::send]
pub async fn spenders(
    State(state): State<AppState>,
    caller: Caller,
    Query(p): Query<SpendersParams>,
) -> Result<Response, AppError> {
    Ok(Json(spenders_report(&state, &caller, &p).await?).into_response())
}

/// The same report as CSV: one line per user and model.
#[worker::send]
pub async fn spenders_csv(
    State(state): State<AppState>,
    caller: Caller,
    Query(p): Query<SpendersParams>,
) -> Result<Response, AppError> {
    let r = spenders_report(&state, &caller, &p).await?;
    let name = format!("spenders-{}-{}.csv", r.from, r.to);
    Ok(csv_download(&name, r.to_csv()))
}

/// Sets (or with nulls, removes) a user's daily cap and soft threshold.
#[worker::send]
pub async fn set_budget(
    State(state): State<AppState>,
    Caller(caller): Caller,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    caller.require_admin("set budgets")?;
    json_body(&headers, &body, 4 * 1024)?;
    let s = BudgetSetting::parse(&body)?;
    state.store.set_budget(&s, now_ms()).await?;
    Ok(Json(s).into_response())
}
