//! Pauses' effects: holding a delivered job back, releasing held jobs no pause holds any
//! more (after a resume, and in every cron run), and the DLQ alert's optional pause of the
//! lanes its dead letters came from. The decisions are `pipeline::pause`'s.

use pipeline::pause::{holding, Pause, Scope};
use pipeline::status::{Lane, Status};

use crate::services::AppState;

/// Sends back to their lanes the held jobs (a slice, oldest hold first) that no pause holds
/// any more; answers how many. A job whose send fails stays queued, not held: the reconciler
/// sends it after its window.
pub async fn release(state: &AppState, now: i64) -> worker::Result<usize> {
    let store = &state.store;
    let found = store
        .rounds(vec![vec![
            store.pauses_statement()?,
            store.held_statement()?,
        ]])
        .await?;
    let r = crate::store::group(&found, 0, "the release")?;
    let pauses = crate::store::pauses::pauses_of(&r[..1])?;
    let held = crate::store::pauses::held_of(&r[1])?;
    release_these(state, &pauses, &held, now).await
}

/// [`release`] from rows already read (the cron's round trip).
pub async fn release_these(
    state: &AppState,
    pauses: &[Pause],
    held: &[crate::store::pauses::Held],
    now: i64,
) -> worker::Result<usize> {
    let free: Vec<String> = held
        .iter()
        .filter(|h| {
            h.status != Status::Queued
                || holding(pauses, h.lane.as_str(), h.model.as_deref(), &h.user_id).is_none()
        })
        .map(|h| h.id.clone())
        .collect();
    if free.is_empty() {
        return Ok(0);
    }
    let released = state.store.release(&free, now).await?;
    for lane in Lane::ALL {
        let ids: Vec<String> = released
            .iter()
            .filter(|h| h.lane == lane && h.status == Status::Queued)
            .map(|h| h.id.clone())
            .collect();
        if ids.is_empty() {
            continue;
        }
        let unsent = state.lanes.send_many(lane, &ids).await;
        if !unsent.is_empty() {
            worker::console_error!(
                "release: {} of {} {} jobs not sent; the reconciler will",
                unsent.len(),
                ids.len(),
                lane.as_str()
            );
        }
    }
    Ok(released.len())
}

/// The DLQ alert's pause (`DLQ_ALERT_PAUSES = "on"`): every lane with open dead letters.
pub async fn pause_for_alert(state: &AppState, dead_now: u64, now: i64) -> worker::Result<()> {
    for lane in state.store.dead_letter_lanes().await? {
        let p = Pause {
            scope: Scope::Lane,
            value: lane.as_str().to_owned(),
            reason: Some(format!(
                "DLQ alert: {dead_now} dead {} (threshold {})",
                if dead_now == 1 { "letter" } else { "letters" },
                state.config.dlq_alert_threshold
            )),
            paused_by: "alert".into(),
            paused_at: now,
        };
        state.store.pause(&p).await?;
        worker::console_log!("DLQ alert paused the {} lane", lane.as_str());
    }
    Ok(())
}
