//! Deadline routing's effects (`pipeline::routing` decides): a job's route at submission, the
//! cron's rescue of the jobs whose batch runs late, and what a rescued batch's lines become.
//!
//! Never paying twice rests on the order: the batch is cancelled (not the job), and each job
//! waits for its own result line — `succeeded` settles it at the batch price, `canceled` (not
//! billed) sends it to one synchronous call. The cancel itself does not end anything.

use std::collections::HashMap;

use pipeline::anthropic::BatchResult;
use pipeline::routing::{self, AfterBatch, BatchDurations, LineResult, Policy, Route};
use pipeline::status::{Lane, Mode};

use crate::error::AppError;
use crate::services::AppState;
use crate::store::jobs::Routed;
use crate::store::JobRow;

/// The router's tuning, from the timing profile.
pub fn policy(state: &AppState) -> Policy {
    Policy::of(&state.config.timing)
}

/// How long this model's batches take, measured from ours.
pub async fn measured(state: &AppState, model: &str) -> worker::Result<BatchDurations> {
    Ok(BatchDurations::of(
        &state.store.batch_durations(model).await?,
    ))
}

/// The route of a job that set a deadline (`None` without one): its mode, and what is stored
/// with it. A deadline not even a synchronous call can meet is the 400, before anything is
/// stored.
pub async fn at_submission(
    state: &AppState,
    model: &str,
    deadline_at: Option<i64>,
    now: i64,
) -> Result<Option<(Mode, Routed)>, AppError> {
    let Some(deadline) = deadline_at else {
        return Ok(None);
    };
    let policy = policy(state);
    let (now_u, deadline_u) = (now.max(0) as u64, deadline.max(0) as u64);
    // Refused without a read when not even a synchronous call fits.
    let quick = routing::route(&policy, now_u, deadline_u, BatchDurations::default());
    let measured = match quick {
        Route::Refuse { left_ms, needed_ms } => {
            return Err(routing::refusal(left_ms, needed_ms).into())
        }
        _ => measured(state, model).await?,
    };
    Ok(Some(
        match routing::route(&policy, now_u, deadline_u, measured) {
            Route::Refuse { left_ms, needed_ms } => {
                return Err(routing::refusal(left_ms, needed_ms).into())
            }
            Route::Batch { rescue_at, reason } => (
                Mode::Batch,
                Routed {
                    deadline_at: deadline,
                    rescue_at: Some(rescue_at as i64),
                    reason,
                },
            ),
            Route::Sync { reason } => (
                Mode::Sync,
                Routed {
                    deadline_at: deadline,
                    rescue_at: None,
                    reason,
                },
            ),
        },
    ))
}

/// The cron's rescue: cancels each batch (of those read in its round trip) holding a job past
/// its rescue time, and moves the jobs still accumulating past theirs to the high lane.
pub async fn rescue(state: &AppState, due: Vec<String>, now: i64) {
    for batch in due {
        match state.anthropic.cancel_batch(&batch).await {
            Ok(_) => {
                worker::console_log!("routing: batch {batch} cancelled for a deadline");
                if let Err(e) = state.store.mark_rescued(&batch, now).await {
                    worker::console_error!("routing: batch {batch} cancelled, not recorded: {e}");
                }
            }
            Err(e) => worker::console_error!(
                "routing: cancelling batch {batch} failed: {}",
                pipeline::outcome::describe(&e)
            ),
        }
    }
    match state.store.reroute_accumulated(now, MOVED_PER_RUN).await {
        Ok(ids) if ids.is_empty() => {}
        Ok(ids) => {
            let unsent = state.lanes.send_many(Lane::High, &ids).await;
            // Unsent ones stay queued: the reconciler sends them after its window.
            worker::console_log!(
                "routing: {} accumulating jobs moved to sync ({} not sent)",
                ids.len(),
                unsent.len()
            );
        }
        Err(e) => worker::console_error!("routing: moving accumulating jobs failed: {e}"),
    }
}

/// The most accumulating jobs one cron run moves to sync (one `sendBatch`).
const MOVED_PER_RUN: u32 = 100;

/// What a result line that did not succeed makes of a job that set a deadline, or of a job
/// whose batch was cancelled for another's deadline (`rescued`). `None`: the batch's usual
/// rules apply (`pipeline::batching::line_outcome`).
pub struct Lines<'a> {
    state: &'a AppState,
    policy: Policy,
    rescued: bool,
    measured: HashMap<String, BatchDurations>,
}

/// A line's routing outcome.
pub enum Rerouted {
    /// To a synchronous call now (send it to the high lane once written).
    ToSync,
    /// Back to the accumulation, with a new rescue time (if it has a deadline).
    Reaccumulate(Option<i64>),
}

impl<'a> Lines<'a> {
    pub fn new(state: &'a AppState, rescued: bool) -> Lines<'a> {
        Lines {
            state,
            policy: policy(state),
            rescued,
            measured: HashMap::new(),
        }
    }

    pub async fn outcome(
        &mut self,
        row: &JobRow,
        result: &BatchResult,
        now: i64,
    ) -> worker::Result<Option<Rerouted>> {
        let line = match result {
            BatchResult::Canceled => LineResult::Canceled,
            BatchResult::Expired => LineResult::Expired,
            _ => return Ok(None),
        };
        let Some(deadline) = row.deadline_at else {
            // Canceled for another job's deadline, not by its user: it waits for a new batch.
            return Ok((self.rescued && line == LineResult::Canceled)
                .then_some(Rerouted::Reaccumulate(None)));
        };
        let model = row.model.as_deref().unwrap_or_default().to_owned();
        let measured = match self.measured.get(&model) {
            Some(m) => *m,
            None => {
                let m = measured(self.state, &model).await?;
                self.measured.insert(model, m);
                m
            }
        };
        let (now, deadline) = (now.max(0) as u64, deadline.max(0) as u64);
        Ok(
            match routing::after_batch(&self.policy, now, Some(deadline), measured, line) {
                AfterBatch::Usual => None,
                AfterBatch::MoveToSync { .. } => Some(Rerouted::ToSync),
                AfterBatch::Reaccumulate { rescue_at } => {
                    Some(Rerouted::Reaccumulate(Some(rescue_at as i64)))
                }
            },
        )
    }
}
