//! The scheduled handler. It runs every minute in production (and is triggered by the dev tooling
//! and the tests locally): heartbeat, flush due bulk accumulations, resolve flushes of unknown
//! outcome, poll open batches, reconcile stuck rows, write the metrics row and raise the DLQ alert.

use worker::{Env, ScheduledEvent};

use crate::config::{now_ms, Config, DB};
use crate::{db, jobs};

pub async fn run(event: &ScheduledEvent, env: &Env) {
    let detail = format!("cron {}", event.cron());
    let result = async { db::beat(&env.d1(DB)?, "cron", now_ms(), &detail).await }.await;
    if let Err(e) = result {
        worker::console_error!("cron heartbeat failed: {e}");
    }
    let config = match Config::from_env(env) {
        Ok(c) => c,
        Err(e) => {
            worker::console_error!("cron: configuration error: {e}");
            return;
        }
    };
    if let Ok(db) = env.d1(DB) {
        crate::flush::flush_due(env, &config, &db, false).await;
        if let Err(e) = crate::flush::recover(&config, &db).await {
            worker::console_error!("flush recovery failed: {e}");
        }
    }
    match crate::batches::poll(env, &config).await {
        Ok(report) if !report.errors.is_empty() => {
            worker::console_error!("batch poll: {:?}", report.errors)
        }
        Ok(_) => {}
        Err(e) => worker::console_error!("batch poll failed: {e}"),
    }
    if let Err(e) = reconcile(env, &config).await {
        worker::console_error!("reconcile failed: {e}");
    }
    if let Err(e) = crate::ops::cron(env, &config).await {
        worker::console_error!("metrics failed: {e}");
    }
}

/// Expires stale queued jobs, and re-enqueues rows stuck in `queued` or `running` past
/// `RECONCILE_AFTER_S` (their message was lost to a restart, or the Worker died mid-call): the
/// guarded writes make a second delivery harmless.
async fn reconcile(env: &Env, config: &Config) -> worker::Result<()> {
    let db = env.d1(DB)?;
    let now = now_ms();
    let expired = jobs::expire_stale(&db, now).await?;
    let before = now - config.timing.reconcile_after_s as i64 * 1000;
    let stuck = jobs::take_stuck(&db, before, now, 100).await?;
    for (id, lane) in &stuck {
        if let Err(e) = crate::queues::send_job(env, config, *lane, id).await {
            worker::console_error!("reconcile: re-enqueue of {id} failed: {e}");
        }
    }
    if expired > 0 || !stuck.is_empty() {
        worker::console_log!(
            "reconcile: {} expired, {} re-enqueued",
            expired,
            stuck.len()
        );
        db::beat(&db, "reconciled", now, &stuck.len().to_string()).await?;
    }
    Ok(())
}
