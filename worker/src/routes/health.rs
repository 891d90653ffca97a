//! `GET /api/health`: touches D1, R2, the Durable Object and a queue, and says what it found —
//! to admins; users hear only whether the service is up.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::dto::{AnthropicTarget, Check, HealthReport};

use crate::config::now_ms;
use crate::error::AppError;
use crate::identity::Caller;
use crate::services::AppState;

/// Each probe writes, reads back and deletes its own object under this prefix: R2 allows one
/// write per second to the same key, and probes may come faster than that.
const PROBE_PREFIX: &str = "health/probe/";

// The Workers runtime is single-threaded and its futures are !Send; axum wants Send handlers.
#[worker::send]
pub async fn get(
    State(state): State<AppState>,
    Caller(caller): Caller,
) -> Result<Response, AppError> {
    // One at a time, each timed on its own: D1, R2, the budget object, the high lane.
    let (d1, beats) = probe_d1(&state).await;
    let checks = vec![
        d1,
        probe_r2(&state).await,
        probe_budget(&state).await,
        probe_queue(&state).await,
        models(&state),
    ];
    let ok = checks.iter().all(|c| c.ok);
    let report = HealthReport {
        ok,
        version: env!("CARGO_PKG_VERSION").into(),
        auth_mode: state.config.auth_mode,
        user_id: caller.user_id.as_str().into(),
        role: caller.role,
        anthropic: Some(AnthropicTarget {
            files_api: crate::files::enabled(&state),
            ..AnthropicTarget::describe(
                &state.config.anthropic_base_url,
                !state.config.anthropic_api_key.is_empty(),
            )
        }),
        checks,
        cron_last_run_at: beats.cron,
        queue_last_consumed_at: beats.consumed,
        queue_last_ping_sent_at: beats.pinged,
        now: now_ms(),
    };
    let status = match ok {
        true => StatusCode::OK,
        false => StatusCode::SERVICE_UNAVAILABLE,
    };
    Ok((status, Json(seen_by(report, &caller))).into_response())
}

/// Users see only whether the service is up: which binding failed, how, and where the calls go
/// is for whoever can act on it.
fn seen_by(report: HealthReport, caller: &pipeline::identity::Identity) -> HealthReport {
    if caller.is_admin() {
        return report;
    }
    HealthReport {
        anthropic: None,
        checks: Vec::new(),
        cron_last_run_at: None,
        queue_last_consumed_at: None,
        queue_last_ping_sent_at: None,
        ..report
    }
}

/// The last heartbeats D1 holds: the cron's run, the high lane's consumer and the ping it
/// answered.
#[derive(Default)]
struct Beats {
    cron: Option<i64>,
    consumed: Option<i64>,
    pinged: Option<i64>,
}

/// D1: the jobs stored, and the heartbeats.
async fn probe_d1(state: &AppState) -> (Check, Beats) {
    let t = now_ms();
    let mut beats = Beats::default();
    let d1 = async {
        let n = state.store.job_count().await?;
        beats.cron = state.store.last_beat("cron").await?.map(|b| b.at as i64);
        if let Some(b) = state.store.last_beat("queue_high").await? {
            beats.consumed = Some(b.at as i64);
            beats.pinged = b.detail.and_then(|d| d.parse().ok());
        }
        Ok::<_, worker::Error>(format!("{n} jobs stored"))
    }
    .await;
    (check("d1", t, d1), beats)
}

/// R2: a probe object of its own written, read back and deleted.
async fn probe_r2(state: &AppState) -> Check {
    let t = now_ms();
    let r2 = async {
        let key = format!("{PROBE_PREFIX}{}", crate::services::new_id()?);
        let written = format!("probe at {t}");
        state.blobs.put(&key, written.clone().into_bytes()).await?;
        let read = state.blobs.get(&key).await;
        state.blobs.delete(&key).await;
        let read = read?
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        if read != written {
            return Err(worker::Error::RustError(
                "read back a different object".into(),
            ));
        }
        Ok(format!("wrote and read back {} bytes", read.len()))
    }
    .await;
    check("r2", t, r2)
}

/// The `TokenBudget` Durable Object answers a ping.
async fn probe_budget(state: &AppState) -> Check {
    let t = now_ms();
    let pinged = state.budget.ping().await;
    check(
        "durable_object",
        t,
        pinged.map(|v| format!("TokenBudget answered: {v}")),
    )
}

/// The high lane takes a ping (its consumer records it as a heartbeat).
async fn probe_queue(state: &AppState) -> Check {
    let t = now_ms();
    let sent = state.lanes.ping(t).await;
    check(
        "queue_high",
        t,
        sent.map(|()| "sent a ping to the high lane".to_string()),
    )
}

/// The configured default and fallback models, against the catalog.
fn models(state: &AppState) -> Check {
    let warnings = &state.config.model_warnings;
    let detail = match warnings.is_empty() {
        true => format!(
            "default {} and fallbacks [{}] are current",
            pipeline::models::DEFAULT_MODEL,
            state.config.model_chain.join(", ")
        ),
        false => warnings.join("; "),
    };
    Check {
        name: "models".into(),
        ok: warnings.is_empty(),
        detail,
        latency_ms: 0,
    }
}

fn check(name: &str, started: i64, result: worker::Result<String>) -> Check {
    let (ok, detail) = match result {
        Ok(d) => (true, d),
        Err(e) => (false, e.to_string()),
    };
    Check {
        name: name.into(),
        ok,
        detail,
        latency_ms: now_ms() - started,
    }
}
