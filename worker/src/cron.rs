//! The scheduled handler. It runs every minute in production (and is triggered by the dev tooling
//! and the tests locally); for now it records its heartbeat, later it polls batches, reconciles
//! stuck rows, writes metrics and flushes bulk accumulations.

use worker::{Env, ScheduledEvent};

use crate::config::{now_ms, Config, DB};
use crate::db;

pub async fn run(event: &ScheduledEvent, env: &Env) {
    let detail = format!("cron {}", event.cron());
    let result = async { db::beat(&env.d1(DB)?, "cron", now_ms(), &detail).await }.await;
    if let Err(e) = result {
        worker::console_error!("cron heartbeat failed: {e}");
    }
    match Config::from_env(env) {
        Ok(config) => match crate::batches::poll(env, &config).await {
            Ok(report) if !report.errors.is_empty() => {
                worker::console_error!("batch poll: {:?}", report.errors)
            }
            Ok(_) => {}
            Err(e) => worker::console_error!("batch poll failed: {e}"),
        },
        Err(e) => worker::console_error!("cron: configuration error: {e}"),
    }
}
