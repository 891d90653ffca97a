//! The DLQ consumer: a job whose message ran out of the queue's own retries is marked
//! dead-lettered and announced. It never calls Claude and never fails.

use pipeline::ops::failures::Failure;
use pipeline::retry::dead_letter_reason;
use pipeline::status::Transition;

use crate::config::now_ms;
use crate::services::AppState;
use crate::store::lifecycle::Scope;
use crate::store::JobRow;

/// Marks a dead-lettered job (its last retry's reason restated as the end) and announces it —
/// once: a job that ended meanwhile (the guard refuses it) is neither changed nor announced.
pub async fn dead_letter(state: &AppState, id: &str) {
    let marked = async {
        let Some(mut row) = state.store.job(id).await? else {
            return Ok(None);
        };
        let failure = Failure::new(dead_letter_reason(
            row.error.as_deref(),
            row.attempts.max(0) as u32,
        ));
        let mark = state.store.dead_letter(
            Transition::DeadLetterQueued,
            id,
            &failure,
            now_ms(),
            Scope::Sync,
        )?;
        let changed = state.store.run_one(mark).await?;
        row.error = Some(failure.reason);
        Ok::<_, worker::Error>((changed > 0).then_some(row))
    }
    .await;
    match marked {
        Ok(Some(row)) => announce(state, row).await,
        Ok(None) => {}
        Err(e) => worker::console_error!("dead-lettering {id} failed: {e}"),
    }
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
async fn announce(state: &AppState, row: JobRow) {
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
        job_id: row.id,
        user_id: row.user_id,
        kind: row.kind,
        created_at: row.created_at,
        error,
    };
    if let Err(e) = crate::anthropic::post_json(&state.meter, url, &event).await {
        // Swallowed: the notification is best effort, the row already says what happened.
        worker::console_error!("dead letter {id}: webhook failed: {e}");
    }
}
