//! The operator's effects: the cron's metrics row and DLQ alert, failure classification, daily
//! spending and its budgets. The decisions are `pipeline::ops`; this module runs the queries.

use pipeline::clock::DAY_MS;
use pipeline::ops::budgets::{self, DailyBudget};
use pipeline::ops::dlq::SqlValue;
use pipeline::ops::failures::ErrorClass;
use pipeline::ops::metrics::{
    dlq_crossing, BudgetCharge, EndedJob, Metrics, MetricsInput, PendingGroup,
};
use pipeline::ops::sql;
use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::{D1Database, Env};

use crate::config::{now_ms, Config, DB};
use crate::db;
use crate::jobs::num;

/// The most ended jobs one metrics row reads (its percentiles are over these).
const MAX_ENDED: i64 = 20_000;
/// Metrics rows are kept this long.
const KEEP_METRICS_MS: i64 = 7 * DAY_MS;

/// The cron's part: classify new failures, write the metrics row, raise the DLQ alert.
pub async fn cron(env: &Env, config: &Config) -> worker::Result<Metrics> {
    let db = env.d1(DB)?;
    classify(&db).await?;
    let metrics = compute(env, &db).await?;
    store(&db, &metrics).await?;
    dlq_alert(&db, config, metrics.dead_letters_now).await?;
    Ok(metrics)
}

/// Fills `error_class` of failed and dead-lettered jobs that have none yet.
pub async fn classify(db: &D1Database) -> worker::Result<usize> {
    #[derive(Deserialize)]
    struct Row {
        id: String,
        error: Option<String>,
    }
    let rows: Vec<Row> = db.prepare(sql::UNCLASSIFIED).all().await?.results()?;
    if rows.is_empty() {
        return Ok(0);
    }
    let statements = rows
        .iter()
        .map(|r| {
            let class = ErrorClass::of(r.error.as_deref().unwrap_or_default());
            db.prepare("UPDATE jobs SET error_class = ?2 WHERE id = ?1")
                .bind(&[r.id.as_str().into(), class.as_str().into()])
        })
        .collect::<worker::Result<Vec<_>>>()?;
    db.batch(statements).await?;
    Ok(rows.len())
}

/// The previous metrics row, if any.
async fn latest(db: &D1Database) -> worker::Result<Option<Metrics>> {
    #[derive(Deserialize)]
    struct Row {
        body: String,
    }
    let row: Option<Row> = db
        .prepare("SELECT body FROM metrics ORDER BY at DESC LIMIT 1")
        .first(None)
        .await?;
    Ok(row.and_then(|r| serde_json::from_str(&r.body).ok()))
}

/// Computes the figures of the window since the previous row (at most 10 minutes, at least 1).
pub async fn compute(env: &Env, db: &D1Database) -> worker::Result<Metrics> {
    let at = now_ms();
    let previous = latest(db).await?;
    let window_ms = previous
        .as_ref()
        .map(|p| (at - p.at).clamp(60_000, 600_000))
        .unwrap_or(60_000);
    let ended: Vec<EndedJob> = db
        .prepare(sql::ENDED)
        .bind(&[num(at - window_ms), num(at), num(MAX_ENDED)])?
        .all()
        .await?
        .results()?;
    let pending: Vec<PendingGroup> = db.prepare(sql::PENDING).all().await?.results()?;
    let dead_now = count(db, sql::DEAD_NOW).await?;
    let budget = match crate::lanes::state(env).await {
        Ok(view) => view
            .classes
            .iter()
            .map(|c| BudgetCharge {
                class: c.class.clone(),
                requests: c.requests.charged,
                input_tokens: c.input_tokens.charged,
                output_tokens: c.output_tokens.charged,
                rpm: c.requests.limit,
                itpm: c.input_tokens.limit,
                otpm: c.output_tokens.limit,
            })
            .collect(),
        Err(e) => {
            worker::console_error!("metrics: the budget did not answer: {e}");
            Vec::new()
        }
    };
    Ok(Metrics::compute(&MetricsInput {
        at,
        window_ms,
        ended: &ended,
        pending: &pending,
        dead_letters_now: dead_now,
        budget: &budget,
        previous: previous.as_ref(),
    }))
}

/// The `n` of a `SELECT COUNT(*) AS n …` without parameters (e.g. `sql::DEAD_NOW`).
pub async fn count(db: &D1Database, query: &str) -> worker::Result<u64> {
    #[derive(Deserialize)]
    struct N {
        n: f64,
    }
    let n: Option<N> = db.prepare(query).first(None).await?;
    Ok(n.map(|n| n.n as u64).unwrap_or(0))
}

async fn store(db: &D1Database, m: &Metrics) -> worker::Result<()> {
    let body = serde_json::to_string(m).map_err(|e| worker::Error::RustError(e.to_string()))?;
    db.batch(vec![
        db.prepare("INSERT OR REPLACE INTO metrics (at, body) VALUES (?1, ?2)")
            .bind(&[num(m.at), body.into()])?,
        db.prepare("DELETE FROM metrics WHERE at < ?1")
            .bind(&[num(m.at - KEEP_METRICS_MS)])?,
    ])
    .await?;
    Ok(())
}

/// Calls the webhook once when the dead letters go from at most the threshold to above it.
async fn dlq_alert(db: &D1Database, config: &Config, dead_now: u64) -> worker::Result<()> {
    let was_above = db::last_beat(db, "dlq_above")
        .await?
        .and_then(|b| b.detail)
        .is_some_and(|d| d == "1");
    let (above, fire) = dlq_crossing(was_above, dead_now, config.dlq_alert_threshold);
    let now = now_ms();
    if above != was_above {
        db::beat(db, "dlq_above", now, if above { "1" } else { "0" }).await?;
    }
    if fire {
        let text = format!(
            "claude-pipeline: {dead_now} jobs are dead-lettered (alert threshold {}).",
            config.dlq_alert_threshold
        );
        raise(
            db,
            config,
            &format!("dlq:{now}"),
            "dlq_threshold",
            serde_json::json!({
                "event": "dlq.threshold",
                "deadLettered": dead_now,
                "threshold": config.dlq_alert_threshold,
                "text": text,
            }),
        )
        .await?;
    }
    Ok(())
}

/// Records an alert under `key` (once: a second raise of the same key does nothing) and calls
/// the webhook with `payload` (best effort).
pub async fn raise(
    db: &D1Database,
    config: &Config,
    key: &str,
    kind: &str,
    payload: serde_json::Value,
) -> worker::Result<bool> {
    let result = db
        .prepare(
            "INSERT INTO alerts (key, at, kind, detail) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT(key) DO NOTHING",
        )
        .bind(&[
            key.into(),
            num(now_ms()),
            kind.into(),
            payload.to_string().into(),
        ])?
        .run()
        .await?;
    let fresh = result
        .meta()?
        .and_then(|m| m.changes)
        .is_some_and(|n| n > 0);
    if !fresh {
        return Ok(false);
    }
    worker::console_log!("ALERT {kind}: {payload}");
    if let Some(url) = config.notify_webhook_url.as_deref() {
        if let Err(e) = crate::anthropic::post_json(url, &payload).await {
            worker::console_error!("alert {key}: webhook failed: {e}");
        }
    }
    Ok(true)
}

/// A user's daily budget and what they spent today (UTC).
pub async fn daily_budget(db: &D1Database, user: &str, now: i64) -> worker::Result<DailyBudget> {
    #[derive(Deserialize)]
    struct Caps {
        daily_cap_micros: Option<f64>,
        soft_micros: Option<f64>,
    }
    #[derive(Deserialize)]
    struct Spent {
        spent: f64,
    }
    let today = now.div_euclid(DAY_MS) * DAY_MS;
    let caps: Option<Caps> = db
        .prepare("SELECT daily_cap_micros, soft_micros FROM user_budgets WHERE user_id = ?1")
        .bind(&[user.into()])?
        .first(None)
        .await?;
    let spent: Option<Spent> = db
        .prepare(sql::SPENT)
        .bind(&[user.into(), num(today)])?
        .first(None)
        .await?;
    Ok(DailyBudget {
        daily_cap_micros: caps
            .as_ref()
            .and_then(|c| c.daily_cap_micros)
            .map(|v| v as u64),
        soft_micros: caps.as_ref().and_then(|c| c.soft_micros).map(|v| v as u64),
        spent_today_micros: spent.map(|s| s.spent as u64).unwrap_or(0),
    })
}

/// The producers' check before accepting a job: 429 once the user's daily cap is spent; the soft
/// threshold raises its alert (once per user and day). Users without a budget cost one indexed
/// lookup.
pub async fn admit(env: &Env, config: &Config, user: &str) -> Result<(), crate::error::AppError> {
    let db = env.d1(DB)?;
    let now = now_ms();
    let budget = daily_budget(&db, user, now).await?;
    if budget.daily_cap_micros.is_none() && budget.soft_micros.is_none() {
        return Ok(());
    }
    if budgets::soft_reached(budget.spent_today_micros, budget.soft_micros) {
        let day = pipeline::clock::day_of(now);
        let spent = pipeline::money::dollars(budget.spent_today_micros);
        let payload = serde_json::json!({
            "event": "usage.soft_threshold",
            "userId": user,
            "day": day,
            "spentMicros": budget.spent_today_micros,
            "softMicros": budget.soft_micros,
            "text": format!("claude-pipeline: {user} has spent ${spent} today, past the soft threshold."),
        });
        if let Err(e) = raise(
            &db,
            config,
            &format!("soft:{user}:{day}"),
            "soft_budget",
            payload,
        )
        .await
        {
            worker::console_error!("soft budget alert for {user}: {e}");
        }
    }
    budgets::check_daily_cap(budget.spent_today_micros, budget.daily_cap_micros)?;
    Ok(())
}

/// Binds text or numbers for the DLQ filter's parameters.
pub fn bind_values(values: &[SqlValue]) -> Vec<JsValue> {
    values
        .iter()
        .map(|v| match v {
            SqlValue::Text(s) => JsValue::from_str(s),
            SqlValue::Int(n) => num(*n),
        })
        .collect()
}
