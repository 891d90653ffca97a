//! The Usage & Cost Admin API's cost report, served from the simulator's own billing:
//! `GET /v1/organizations/cost_report`.
//!
//! As documented (<https://platform.claude.com/docs/en/api/admin/cost_report/retrieve> and the
//! Usage and Cost API guide, read 2026-12-02): an Admin API key (`sk-ant-admin…`) in
//! `x-api-key` — a standard key is refused — and `anthropic-version`; `starting_at` (RFC 3339,
//! required), `ending_at` (exclusive; default now), `bucket_width` `1d` only, `group_by[]`
//! `workspace_id` and/or `description`, `limit` 1–31 buckets (default 7), `page` from the last
//! answer's `next_page`. One bucket per UTC day, oldest first, days without cost included with
//! empty `results`; `amount` is in cents as a decimal string, `currency` `USD`.
//!
//! Simplification: a day's token cost is one line per model and service tier (`token_type`
//! null), where the API splits it further by token type; a reader that sums a model's lines
//! reads the same total either way. Without `group_by[]=description` the lines carry no model,
//! as documented: one line per day.

use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::anthropic::ErrorType;
use pipeline::clock::{format_rfc3339, parse_rfc3339};
use serde_json::{json, Value};

use crate::clock::now_ms;
use crate::errors::SimError;
use crate::state::Sim;

const DAY_MS: i64 = 86_400_000;

/// Micro-dollars as cents in a decimal string (`"12.3456"` is $0.123456).
fn cents(micros: u64) -> String {
    format!("{}.{:04}", micros / 10_000, micros % 10_000)
}

pub async fn cost_report(
    State(sim): State<Sim>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let answer = report(&sim, &headers, query.as_deref().unwrap_or_default());
    let mut inner = sim.lock();
    match answer {
        Ok(v) => {
            inner.stats.call("cost_report", 200);
            Json(v).into_response()
        }
        Err(e) => {
            inner.stats.call("cost_report", e.status);
            e.into_response()
        }
    }
}

fn report(sim: &Sim, headers: &HeaderMap, query: &str) -> Result<Value, SimError> {
    crate::auth::check_headers(sim, headers)?;
    let key = headers
        .get("x-api-key")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if !key.starts_with("sk-ant-admin") {
        return Err(SimError::new(
            ErrorType::AuthenticationError,
            "the Admin API requires an Admin API key (sk-ant-admin…)",
        ));
    }
    let mut starting_at = None;
    let mut ending_at = None;
    let mut limit = 7i64;
    let mut page = None;
    let mut by_description = false;
    for (k, v) in form_urlencoded::parse(query.as_bytes()) {
        let v = v.into_owned();
        match k.as_ref() {
            "starting_at" => starting_at = Some(v),
            "ending_at" => ending_at = Some(v),
            "bucket_width" if v == "1d" => {}
            "bucket_width" => {
                return Err(SimError::invalid(format!(
                    "bucket_width: \"{v}\" is not supported (only \"1d\")"
                )))
            }
            "limit" => {
                limit = v
                    .parse::<i64>()
                    .ok()
                    .filter(|n| (1..=31).contains(n))
                    .ok_or_else(|| SimError::invalid("limit: must be from 1 to 31"))?
            }
            "page" => page = Some(v),
            "group_by[]" => match v.as_str() {
                "description" => by_description = true,
                "workspace_id" => {}
                other => {
                    return Err(SimError::invalid(format!(
                        "group_by: \"{other}\" is not a valid option"
                    )))
                }
            },
            _ => {}
        }
    }
    let day_of = |name: &str, v: &str| {
        parse_rfc3339(v)
            .map(|t| t.div_euclid(DAY_MS))
            .ok_or_else(|| SimError::invalid(format!("{name}: must be an RFC 3339 time")))
    };
    let start = match (&page, &starting_at) {
        (Some(p), _) => p
            .strip_prefix("page_")
            .and_then(|d| d.parse::<i64>().ok())
            .ok_or_else(|| SimError::invalid("page: not a page this endpoint gave"))?,
        (None, Some(s)) => day_of("starting_at", s)?,
        (None, None) => return Err(SimError::invalid("starting_at: Field required")),
    };
    let end = match &ending_at {
        Some(e) => {
            let t = parse_rfc3339(e)
                .ok_or_else(|| SimError::invalid("ending_at: must be an RFC 3339 time"))?;
            // Exclusive: a bucket is in when it starts before `ending_at`.
            (t + DAY_MS - 1).div_euclid(DAY_MS)
        }
        None => now_ms().div_euclid(DAY_MS) + 1,
    };
    if end <= start && page.is_none() {
        return Err(SimError::invalid("ending_at: must be after starting_at"));
    }
    let last = end.min(start + limit);
    let inner = sim.lock();
    let mut data = Vec::new();
    for day in start..last {
        let mut results = Vec::new();
        let lines = inner.stats.daily.iter().filter(|((d, _, _), _)| *d == day);
        if by_description {
            for ((_, model, batch), micros) in lines {
                let tier = if *batch { "batch" } else { "standard" };
                results.push(json!({
                    "currency": "USD",
                    "amount": cents(*micros),
                    "workspace_id": null,
                    "description": format!("{model} usage ({tier})"),
                    "cost_type": "tokens",
                    "context_window": "0-200k",
                    "model": model,
                    "service_tier": tier,
                    "token_type": null,
                }));
            }
        } else {
            let total: u64 = lines.map(|(_, m)| m).sum();
            if total > 0 {
                results.push(json!({
                    "currency": "USD",
                    "amount": cents(total),
                    "workspace_id": null,
                    "description": null,
                    "cost_type": null,
                    "context_window": null,
                    "model": null,
                    "service_tier": null,
                    "token_type": null,
                }));
            }
        }
        data.push(json!({
            "starting_at": format_rfc3339(day * DAY_MS),
            "ending_at": format_rfc3339((day + 1) * DAY_MS),
            "results": results,
        }));
    }
    let has_more = last < end;
    Ok(json!({
        "data": data,
        "has_more": has_more,
        "next_page": has_more.then(|| format!("page_{last}")),
    }))
}
