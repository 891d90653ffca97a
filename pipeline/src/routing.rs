//! Deadline-aware routing (issue 20, part 1): a job that says when its answer is needed, instead
//! of choosing a mode, goes through the Message Batches API (half price) while its deadline can
//! still be met with a margin, and is moved to a synchronous call before it is at risk.
//!
//! The decisions only; the Worker measures the inputs (how long our own batches take, per model)
//! and carries the answers out.
//!
//! Facts from the Message Batches docs these rules rest on
//! (<https://docs.anthropic.com/en/docs/build-with-claude/batch-processing>, read 2026-12-01):
//! - most batches end within an hour, and a batch expires 24 hours after its creation, its
//!   unfinished requests answered `expired` (so no estimate may exceed 24 h);
//! - cancelling applies to a whole batch, not to one of its requests: the batch goes
//!   `canceling`, then `ended`, and each request is answered `succeeded` (it had run: paid, and
//!   usable), `canceled` (never run: not billed), `errored` or `expired`.
//!
//! So moving a job to sync never pays twice: the batch holding the job is cancelled, and the job
//! waits for its own result line. `succeeded` settles it with the batch's answer (paid once, at
//! the batch price); only `canceled` (not billed) sends it to a synchronous call. The time that
//! takes — cancel, the batch ending, the call — is [`Policy::rescue_ms`], kept free before every
//! batch job's deadline.

/// How the router is tuned (Worker vars, per timing profile).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// What a job moved to sync needs before its deadline: the batch's cancel to end, the
    /// queue's delivery and one synchronous call with a retry.
    pub rescue_ms: u64,
    /// What a job sent straight to sync needs: delivery and one call with a retry. A deadline
    /// closer than this is refused at submission.
    pub sync_ms: u64,
    /// Extra room on top of a batch's expected duration.
    pub margin_ms: u64,
    /// How long a batch is expected to take while fewer than [`Policy::min_samples`] of ours
    /// have ended for the model: an hour, the docs' "most batches" figure.
    pub default_batch_ms: u64,
    /// Batches of a model measured before their p95 replaces the default.
    pub min_samples: u32,
    /// The longest a batch job accumulates before its batch is submitted (the flush age, plus
    /// one cron period).
    pub accumulate_ms: u64,
}

/// The Message Batches API's 24-hour expiry: no batch is expected to take longer.
pub const BATCH_EXPIRY_MS: u64 = 24 * 3600 * 1000;

/// Batches of a model measured before their p95 is trusted over the default.
pub const MIN_SAMPLES: u32 = 5;

/// How many of a model's most recent batches the p95 is taken over.
pub const WINDOW: u32 = 50;

/// How long our own batches of one model have taken, from submission to end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BatchDurations {
    /// Batches measured (ended, over the window the Worker keeps).
    pub samples: u32,
    /// Their 95th percentile, submission to `ended`.
    pub p95_ms: u64,
}

impl Policy {
    /// The policy of a timing profile: its `ROUTE_*` vars, and the longest accumulation (the
    /// flush age and one cron period).
    pub fn of(t: &crate::timing::Timing) -> Policy {
        let ms = |s: u32| u64::from(s) * 1000;
        Policy {
            rescue_ms: ms(t.route_rescue_s),
            sync_ms: ms(t.route_sync_s),
            margin_ms: ms(t.route_margin_s),
            default_batch_ms: ms(t.route_default_batch_s),
            min_samples: MIN_SAMPLES,
            accumulate_ms: ms(t.batch_flush_age_s) + ms(t.cron_period_s),
        }
    }

    /// How long a batch of this model is expected to take: the p95 of ours once there are
    /// enough of them, the default before; never past the API's expiry.
    pub fn expected_batch_ms(&self, measured: BatchDurations) -> u64 {
        let expected = if measured.samples >= self.min_samples {
            measured.p95_ms
        } else {
            self.default_batch_ms
        };
        expected.min(BATCH_EXPIRY_MS)
    }
}

impl BatchDurations {
    /// The nearest-rank 95th percentile of these durations (ms, any order).
    pub fn of(durations: &[u64]) -> BatchDurations {
        if durations.is_empty() {
            return BatchDurations::default();
        }
        let mut sorted = durations.to_vec();
        sorted.sort_unstable();
        let rank = (sorted.len() * 95).div_ceil(100).max(1);
        BatchDurations {
            samples: sorted.len() as u32,
            p95_ms: sorted[rank - 1],
        }
    }
}

/// Why a job took the path it took (stored with the job, shown on its page).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// The deadline leaves room for accumulation, the expected batch, the margin and a rescue.
    DeadlineAllowsBatch,
    /// The deadline is too close for a batch but not for a synchronous call.
    DeadlineTooCloseForBatch,
    /// The batch ran late: the job was moved before its deadline was at risk.
    BatchRanLate,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::DeadlineAllowsBatch => "deadline_allows_batch",
            Reason::DeadlineTooCloseForBatch => "deadline_too_close_for_batch",
            Reason::BatchRanLate => "batch_ran_late",
        }
    }
}

/// The longest deadline a job may set: the API expires a batch 24 hours after its creation,
/// and a job's deadline may run a little past a day (a week: nothing waits longer).
pub const MAX_DEADLINE_S: u64 = 7 * 24 * 3600;

/// A producer's `deadline_s` (seconds from `now_ms`) or `deadline_at` (RFC 3339), read from its
/// body: the deadline in epoch ms, or `None` when it sets neither. Both at once, or either with
/// `mode` (a deadline chooses the mode), is a 400 naming the field. Whether it can be met is
/// [`route`]'s answer ([`refusal`]).
pub fn parse_deadline(
    obj: &serde_json::Map<String, serde_json::Value>,
    now_ms: i64,
) -> Result<Option<i64>, crate::error::ApiError> {
    use serde_json::Value;
    let bad = |name: &str, msg: String| {
        crate::error::ApiError::bad_request("invalid_field", msg, Some(name))
    };
    let given = |name: &str| obj.get(name).is_some_and(|v| !v.is_null());
    let (name, deadline) = match (given("deadline_s"), given("deadline_at")) {
        (false, false) => return Ok(None),
        (true, true) => {
            return Err(bad(
                "deadline_at",
                "send either deadline_s or deadline_at, not both".into(),
            ))
        }
        (true, false) => {
            let s = obj["deadline_s"]
                .as_u64()
                .filter(|s| (1..=MAX_DEADLINE_S).contains(s))
                .ok_or_else(|| {
                    bad(
                        "deadline_s",
                        format!("deadline_s must be a whole number of seconds from 1 to {MAX_DEADLINE_S}"),
                    )
                })?;
            ("deadline_s", now_ms + s as i64 * 1000)
        }
        (false, true) => {
            let at = match &obj["deadline_at"] {
                Value::String(s) => crate::clock::parse_rfc3339(s),
                _ => None,
            }
            .ok_or_else(|| {
                bad(
                    "deadline_at",
                    "deadline_at must be an RFC 3339 time, such as 2026-12-01T18:00:00Z".into(),
                )
            })?;
            if at - now_ms > MAX_DEADLINE_S as i64 * 1000 {
                return Err(bad(
                    "deadline_at",
                    format!("deadline_at must be at most {MAX_DEADLINE_S} s from now"),
                ));
            }
            ("deadline_at", at)
        }
    };
    if given("mode") {
        return Err(bad(
            "mode",
            format!("send either mode or {name}: a deadline chooses the mode"),
        ));
    }
    Ok(Some(deadline))
}

/// The 400 of a deadline not even a synchronous call can meet ([`Route::Refuse`]'s figures).
pub fn refusal(left_ms: u64, needed_ms: u64) -> crate::error::ApiError {
    crate::error::ApiError::bad_request(
        "deadline_unreachable",
        format!(
            "the deadline is {} s away; even a synchronous call needs {} s, so it cannot be met",
            left_ms / 1000,
            needed_ms.div_ceil(1000)
        ),
        Some("deadline_s"),
    )
}

/// Where a job with a deadline goes at submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// Through a Message Batch; its batch must be cancelled at `rescue_at` (epoch ms) if the job
    /// has not ended by then.
    Batch { rescue_at: u64, reason: Reason },
    /// A synchronous call now.
    Sync { reason: Reason },
    /// Not even a synchronous call fits: a 400 at submission, with the figures.
    Refuse { left_ms: u64, needed_ms: u64 },
}

/// The route of a job submitted at `now` (epoch ms) whose answer is needed by `deadline`.
pub fn route(policy: &Policy, now: u64, deadline: u64, measured: BatchDurations) -> Route {
    let left_ms = deadline.saturating_sub(now);
    if left_ms < policy.sync_ms {
        return Route::Refuse {
            left_ms,
            needed_ms: policy.sync_ms,
        };
    }
    let batch_needs = policy.accumulate_ms
        + policy.expected_batch_ms(measured)
        + policy.margin_ms
        + policy.rescue_ms;
    if left_ms >= batch_needs {
        Route::Batch {
            rescue_at: deadline - policy.rescue_ms,
            reason: Reason::DeadlineAllowsBatch,
        }
    } else {
        Route::Sync {
            reason: Reason::DeadlineTooCloseForBatch,
        }
    }
}

/// What the cron does with a Message Batch still running, given the earliest `rescue_at` of the
/// jobs inside it that have not ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Watch {
    /// Nothing yet.
    Wait,
    /// Cancel the batch: a job in it is about to be at risk.
    Cancel,
}

pub fn watch(now: u64, earliest_rescue_at: Option<u64>) -> Watch {
    match earliest_rescue_at {
        Some(at) if now >= at => Watch::Cancel,
        _ => Watch::Wait,
    }
}

/// A job that was still waiting for its accumulation to be flushed at its `rescue_at`: it never
/// reached the API, so it goes to sync at once (nothing to cancel, nothing paid).
pub fn accumulated_past_rescue(now: u64, rescue_at: Option<u64>) -> bool {
    rescue_at.is_some_and(|at| now >= at)
}

/// One request's line in the results of a batch, as far as routing cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineResult {
    Succeeded,
    Canceled,
    Errored,
    Expired,
}

/// What becomes of a job once its batch has ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterBatch {
    /// The batch's usual outcome rules apply (`batching`): its answer settles it (paid once, at
    /// the batch price), an error is retried, and a job without a deadline is treated as
    /// before.
    Usual,
    /// Not run (canceled, or expired: not billed), and its deadline no longer allows a batch:
    /// a synchronous call now, recorded as moved.
    MoveToSync { reason: Reason },
    /// Not run, but its deadline still allows a batch (its batch was cancelled for another
    /// job's sake): back to accumulation, with a new rescue time.
    Reaccumulate { rescue_at: u64 },
}

/// The job's `deadline` (epoch ms, if it has one) and its result line, at `now`.
pub fn after_batch(
    policy: &Policy,
    now: u64,
    deadline: Option<u64>,
    measured: BatchDurations,
    line: LineResult,
) -> AfterBatch {
    let Some(deadline) = deadline else {
        return AfterBatch::Usual;
    };
    match line {
        LineResult::Succeeded | LineResult::Errored => AfterBatch::Usual,
        LineResult::Canceled | LineResult::Expired => {
            match route(policy, now, deadline, measured) {
                Route::Batch { rescue_at, .. } => AfterBatch::Reaccumulate { rescue_at },
                // Too late even for sync: it still gets its answer, as soon as possible, and the
                // deadline counts as missed.
                Route::Sync { .. } | Route::Refuse { .. } => AfterBatch::MoveToSync {
                    reason: Reason::BatchRanLate,
                },
            }
        }
    }
}

/// Whether an ended job met its deadline.
pub fn met(deadline: u64, completed_at: u64) -> bool {
    completed_at <= deadline
}

/// Whether a job with a `deadline` met it, as its view says: `Some(true)` once it completed by
/// then, `Some(false)` once it ended otherwise (late, failed, canceled) or the deadline passed
/// while it still runs, `None` while it may still make it.
pub fn deadline_met(
    deadline: i64,
    completed_at: Option<i64>,
    ended: bool,
    now: i64,
) -> Option<bool> {
    match completed_at {
        Some(at) => Some(at <= deadline),
        None if ended || now > deadline => Some(false),
        None => None,
    }
}

/// `GET /api/routing` (the Dashboard's routing panel): the deadline jobs created over the last
/// `days`, how they were routed, the deadlines met, and what routing saved.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RoutingReport {
    pub days: u32,
    /// Jobs that set a deadline (those retention still keeps).
    pub jobs: u64,
    /// Answered by a Message Batch.
    pub by_batch: u64,
    /// Sent straight to a synchronous call (the deadline was too close for a batch).
    pub by_sync: u64,
    /// Moved from their batch (or its accumulation) to a synchronous call before the deadline.
    pub moved: u64,
    pub met: u64,
    /// Ended late, or not completed, or still running past the deadline.
    pub missed: u64,
    /// What all of them cost.
    pub cost_micros: crate::money::UsdMicros,
    /// What the batch-answered ones would have cost more as synchronous calls: the Message
    /// Batches API bills half the standard price ("50% discount", pricing page:
    /// <https://docs.anthropic.com/en/docs/about-claude/pricing#batch-processing>), so this is
    /// what they cost at the batch price.
    pub saved_micros: crate::money::UsdMicros,
    /// The router's settings in force (seconds).
    pub sync_s: u64,
    pub rescue_s: u64,
    pub margin_s: u64,
    pub default_batch_s: u64,
}

#[cfg(test)]
mod tests;
