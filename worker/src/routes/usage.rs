//! Per-user usage: `GET /api/usage` (tokens and cost by day and model, totals, savings, the
//! daily budget), `GET /api/usage.csv` (the same rows as CSV), `PUT /api/usage/budget` (admins:
//! a user's daily cap and soft threshold).

use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::ops::budgets::BudgetSetting;
use pipeline::ops::sql;
use pipeline::ops::usage::{UsageGroup, UsageQuery, UsageReport};
use serde::Deserialize;
use wasm_bindgen::JsValue;

use crate::config::{now_ms, DB};
use crate::error::AppError;
use crate::identity::Caller;
use crate::jobs::num;
use crate::routes::{json_body, AppState};

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
    let db = state.env.d1(DB)?;
    let groups: Vec<UsageGroup> = db
        .prepare(sql::USAGE)
        .bind(&[q.user_id.as_str().into(), num(q.from_ms), num(q.to_ms)])?
        .all()
        .await?
        .results()?;
    let budget = crate::ops::daily_budget(&db, &q.user_id, now).await?;
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
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{name}\""),
            ),
        ],
        r.to_csv(),
    )
        .into_response())
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
    let amount = |v: Option<u64>| v.map(|n| num(n as i64)).unwrap_or(JsValue::NULL);
    let db = state.env.d1(DB)?;
    if s.daily_cap_micros.is_none() && s.soft_micros.is_none() {
        db.prepare("DELETE FROM user_budgets WHERE user_id = ?1")
            .bind(&[s.user_id.as_str().into()])?
            .run()
            .await?;
    } else {
        db.prepare(
            "INSERT INTO user_budgets (user_id, daily_cap_micros, soft_micros, updated_at) \
             VALUES (?1, ?2, ?3, ?4) ON CONFLICT(user_id) DO UPDATE SET \
             daily_cap_micros = excluded.daily_cap_micros, soft_micros = excluded.soft_micros, \
             updated_at = excluded.updated_at",
        )
        .bind(&[
            s.user_id.as_str().into(),
            amount(s.daily_cap_micros),
            amount(s.soft_micros),
            num(now_ms()),
        ])?
        .run()
        .await?;
    }
    Ok(Json(s).into_response())
}
