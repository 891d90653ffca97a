//! The DLQ consumer: a job whose message ran out of the queue's own retries is marked
//! dead-lettered and announced (`crate::alerts::announce`). It never calls Claude and never fails.

use pipeline::outcome::Failure;
use pipeline::retry::dead_letter_reason;
use pipeline::status::Transition;

use crate::config::now_ms;
use crate::services::AppState;
use crate::store::lifecycle::Scope;

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
        Ok(Some(row)) => crate::alerts::announce(state, row).await,
        Ok(None) => {}
        Err(e) => worker::console_error!("dead-lettering {id} failed: {e}"),
    }
}
