//! The operator's alerts: each recorded once under its key and posted to the notification
//! webhook (`NOTIFY_WEBHOOK_URL`, best effort) — dead letters past the threshold, a soft budget
//! passed, a reconciliation line off Anthropic's bill, and each dead-lettered job.

use pipeline::money::UsdMicros;
use serde::Serialize;

use crate::config::now_ms;
use crate::services::AppState;
use crate::store::JobRow;

/// Calls the webhook about dead letters that have just crossed the alert threshold (after the
/// cron's writes recorded the crossing).
pub async fn dlq_alert(state: &AppState, at: i64, dead_now: u64) -> worker::Result<()> {
    let threshold = state.config.dlq_alert_threshold;
    let payload = DlqThreshold {
        event: "dlq.threshold",
        dead_lettered: dead_now,
        threshold,
        text: format!(
            "claude-pipeline: {dead_now} jobs are dead-lettered (alert threshold {threshold})."
        ),
    };
    raise(state, &format!("dlq:{at}"), "dlq_threshold", &payload).await?;
    if state.config.dlq_alert_pauses {
        crate::pauses::pause_for_alert(state, dead_now, at).await?;
    }
    Ok(())
}

/// The webhook's message when the dead letters cross the alert threshold.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DlqThreshold {
    event: &'static str,
    dead_lettered: u64,
    threshold: u64,
    text: String,
}

/// The webhook's message when a user passes their soft daily threshold.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SoftThreshold<'a> {
    pub event: &'static str,
    pub user_id: &'a str,
    pub day: &'a str,
    pub spent_micros: UsdMicros,
    pub soft_micros: Option<UsdMicros>,
    pub text: String,
}

/// A reconciliation line past the threshold: one alert per day and model (`raise` keeps it
/// once), posted to the webhook.
pub async fn reconciliation_alert(
    state: &AppState,
    line: &pipeline::ops::reconcile::ReconLine,
) -> worker::Result<bool> {
    #[derive(Serialize)]
    struct Flagged<'a> {
        event: &'static str,
        day: &'a str,
        model: &'a str,
        ours_micros: u64,
        billed_micros: u64,
        diff_micros: i64,
        text: String,
    }
    let payload = Flagged {
        event: "reconciliation.flagged",
        day: &line.day,
        model: &line.model,
        ours_micros: line.ours_micros,
        billed_micros: line.billed_micros,
        diff_micros: line.diff_micros,
        text: format!(
            "claude-pipeline: Anthropic billed ${} for {} on {}, our own figures say ${}.",
            UsdMicros::new(line.billed_micros).dollars(),
            line.model,
            line.day,
            UsdMicros::new(line.ours_micros).dollars()
        ),
    };
    let key = format!("recon:{}:{}", line.day, line.model);
    raise(state, &key, "reconciliation", &payload).await
}

/// Records an alert under `key` (once: a second raise of the same key does nothing) and calls
/// the webhook with `payload` (best effort).
pub async fn raise<T: Serialize>(
    state: &AppState,
    key: &str,
    kind: &str,
    payload: &T,
) -> worker::Result<bool> {
    let detail =
        serde_json::to_string(payload).map_err(|e| worker::Error::RustError(e.to_string()))?;
    if !state
        .store
        .record_alert(key, now_ms(), kind, &detail)
        .await?
    {
        return Ok(false);
    }
    worker::console_log!("ALERT {kind}: {detail}");
    if let Some(url) = state.config.notify_webhook_url.as_deref() {
        if let Err(e) = crate::anthropic::post_json(&state.meter, url, payload).await {
            worker::console_error!("alert {key}: webhook failed: {e}");
        }
    }
    Ok(true)
}

/// Calls the webhook about a job another path dead-lettered (best effort).
pub async fn announce_dead_letter(state: &AppState, id: &str) {
    if state.config.notify_webhook_url.is_none() {
        return;
    }
    match state.store.job(id).await {
        Ok(Some(row)) => announce(state, row).await,
        Ok(None) => {}
        Err(e) => {
            worker::console_error!("dead letter {id}: cannot load the row for the webhook: {e}")
        }
    }
}

/// Posts the `job.failed` event of a dead-lettered row to the webhook, if one is set.
pub async fn announce(state: &AppState, row: JobRow) {
    let Some(url) = state.config.notify_webhook_url.as_deref() else {
        return;
    };
    let id = row.id.clone();
    let error = row
        .error
        .clone()
        .unwrap_or_else(|| "retries exhausted".into());
    let event = pipeline::dto::DeadLetterEvent {
        event: "job.failed".into(),
        text: format!(
            "claude-pipeline: {} job {} of {} was dead-lettered: {error}",
            row.kind, row.id, row.user_id
        ),
        job_id: row.id.into(),
        user_id: row.user_id.into(),
        kind: row.kind,
        created_at: row.created_at,
        error,
    };
    if let Err(e) = crate::anthropic::post_json(&state.meter, url, &event).await {
        // Swallowed: the notification is best effort, the row already says what happened.
        worker::console_error!("dead letter {id}: webhook failed: {e}");
    }
}
