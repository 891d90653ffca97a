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
    let mut checks = Vec::with_capacity(4);
    let mut cron_last_run_at = None;
    let mut queue_last_consumed_at = None;
    let mut queue_last_ping_sent_at = None;

    let t = now_ms();
    let d1 = async {
        let n = state.store.job_count().await?;
        cron_last_run_at = state.store.last_beat("cron").await?.map(|b| b.at as i64);
        if let Some(b) = state.store.last_beat("queue_high").await? {
            queue_last_consumed_at = Some(b.at as i64);
            queue_last_ping_sent_at = b.detail.and_then(|d| d.parse().ok());
        }
        Ok::<_, worker::Error>(format!("{n} jobs stored"))
    }
    .await;
    checks.push(check("d1", t, d1));

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
    checks.push(check("r2", t, r2));

    let t = now_ms();
    let budget = async {
        let v = state.budget.ping().await?;
        Ok(format!("TokenBudget answered: {v}"))
    }
    .await;
    checks.push(check("durable_object", t, budget));

    let t = now_ms();
    let queue = async {
        state.lanes.ping(t).await?;
        Ok("sent a ping to the high lane".to_string())
    }
    .await;
    checks.push(check("queue_high", t, queue));

    // The configured default and fallback models, against the catalog.
    checks.push(Check {
        name: "models".into(),
        ok: state.config.model_warnings.is_empty(),
        detail: if state.config.model_warnings.is_empty() {
            format!(
                "default {} and fallbacks [{}] are current",
                pipeline::models::DEFAULT_MODEL,
                state.config.model_chain.join(", ")
            )
        } else {
            state.config.model_warnings.join("; ")
        },
        latency_ms: 0,
    });
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
        cron_last_run_at,
        queue_last_consumed_at,
        queue_last_ping_sent_at,
        now: now_ms(),
    };
    // Users see only whether the service is up: which binding failed, how, and where the
    // calls go is for whoever can act on it.
    let report = if caller.is_admin() {
        report
    } else {
        HealthReport {
            anthropic: None,
            checks: Vec::new(),
            cron_last_run_at: None,
            queue_last_consumed_at: None,
            queue_last_ping_sent_at: None,
            ..report
        }
    };
    let status = if ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    Ok((status, Json(report)).into_response())
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
