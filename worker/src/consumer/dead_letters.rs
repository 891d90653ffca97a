//! The DLQ consumer: a job whose message ran out of the queue's own retries is marked
//! dead-lettered and announced. It never calls Claude and never fails.

use pipeline::ops::failures::Failure;
use pipeline::retry::dead_letter_reason;

use crate::config::now_ms;
use crate::services::AppState;
use crate::store::lifecycle::Scope;

/// Marks a dead-lettered job (its last retry's reason restated as the end) and announces it.
pub async fn dead_letter(state: &AppState, id: &str) {
    let marked = async {
        let Some(row) = state.store.job(id).await? else {
            return Ok(());
        };
        let failure = Failure::new(dead_letter_reason(
            row.error.as_deref(),
            row.attempts.max(0) as u32,
        ));
        state
            .store
            .dead_letter(id, &failure, now_ms(), Scope::Sync)?
            .run()
            .await
            .map(|_| ())
    }
    .await;
    if let Err(e) = marked {
        worker::console_error!("dead-lettering {id} failed: {e}");
    }
    announce_dead_letter(state, id).await;
}

/// Calls the webhook about a dead-lettered job (best effort).
pub async fn announce_dead_letter(state: &AppState, id: &str) {
    let Some(url) = state.config.notify_webhook_url.as_deref() else {
        return;
    };
    let row = match state.store.job(id).await {
        Ok(Some(row)) => row,
        Ok(None) => return,
        Err(e) => {
            worker::console_error!("dead letter {id}: cannot load the row for the webhook: {e}");
            return;
        }
    };
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
        job_id: row.id,
        user_id: row.user_id,
        kind: row.kind,
        created_at: row.created_at,
        error,
    };
    if let Err(e) = crate::anthropic::post_json(url, &event).await {
        // Swallowed: the notification is best effort, the row already says what happened.
        worker::console_error!("dead letter {id}: webhook failed: {e}");
    }
}
