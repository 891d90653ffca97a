//! Time is configuration: every delay of the product is a Worker var, grouped in three profiles.
//!
//! - production: the values in `wrangler.toml` (checked against [`Timing::production`] by a test
//!   in `xtask`);
//! - demo: what `cargo xtask dev` runs, lively enough to watch batches flush and complete within a
//!   minute;
//! - test: what the end-to-end suites run, seconds rather than minutes, so a job reaches the DLQ in
//!   seconds.

use serde::{Deserialize, Serialize};

/// Var names, as they appear in `wrangler.toml` `[vars]`.
pub mod var {
    pub const BACKOFF_BASE_S: &str = "BACKOFF_BASE_S";
    pub const BACKOFF_CAP_S: &str = "BACKOFF_CAP_S";
    pub const BULK_DELAY_S: &str = "BULK_DELAY_S";
    pub const RECONCILE_AFTER_S: &str = "RECONCILE_AFTER_S";
    pub const BATCH_FLUSH_SIZE: &str = "BATCH_FLUSH_SIZE";
    pub const BATCH_FLUSH_AGE_S: &str = "BATCH_FLUSH_AGE_S";
    pub const CALL_TIMEOUT_MS: &str = "CALL_TIMEOUT_MS";
    pub const SLO_SYNC_P95_S: &str = "SLO_SYNC_P95_S";
    pub const SLO_SYNC_WAIT_S: &str = "SLO_SYNC_WAIT_S";
    pub const SLO_BATCH_GRACE_S: &str = "SLO_BATCH_GRACE_S";
    pub const SLO_BATCH_IN_BATCH_S: &str = "SLO_BATCH_IN_BATCH_S";
    pub const WEBHOOK_RETRY_BASE_S: &str = "WEBHOOK_RETRY_BASE_S";
    pub const CRON_PERIOD_S: &str = "CRON_PERIOD_S";
    pub const ROUTE_SYNC_S: &str = "ROUTE_SYNC_S";
    pub const ROUTE_RESCUE_S: &str = "ROUTE_RESCUE_S";
    pub const ROUTE_MARGIN_S: &str = "ROUTE_MARGIN_S";
    pub const ROUTE_DEFAULT_BATCH_S: &str = "ROUTE_DEFAULT_BATCH_S";
}

/// Every tunable delay and size of the pipeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timing {
    /// First retry delay; attempt n waits `min(base·2^(n−1), cap)`.
    pub backoff_base_s: u32,
    pub backoff_cap_s: u32,
    /// Delivery delay of the bulk lane.
    pub bulk_delay_s: u32,
    /// A row `queued` or `running` longer than this is re-enqueued by the cron reconciler.
    pub reconcile_after_s: u32,
    /// Bulk batch-mode jobs are flushed into one Message Batch at this many…
    pub batch_flush_size: u32,
    /// …or when the oldest has waited this long.
    pub batch_flush_age_s: u32,
    /// Timeout of one synchronous Messages API call.
    pub call_timeout_ms: u32,
    /// Sync path SLO: a p95 end-to-end latency above this warns.
    pub slo_sync_p95_s: u32,
    /// Sync path SLO: a job waiting for its call longer than this warns (counted from when its
    /// lane lets it run: the bulk lane's delivery delay is by design).
    pub slo_sync_wait_s: u32,
    /// Batch path SLO: a job still accumulating this long past the flush age warns (the cron
    /// flushes once a minute, so a job may wait up to a run past the flush age).
    pub slo_batch_grace_s: u32,
    /// Batch path SLO: a job inside its Message Batch longer than this warns, well before the
    /// API expires the batch 24 hours after its creation (see `ops::metrics::BATCH_EXPIRY_MS`).
    pub slo_batch_in_batch_s: u32,
    /// A failed webhook attempt n is retried after `base · 4^(n−1)`, at most 12 hours
    /// (`webhooks::retry_delay_s`).
    pub webhook_retry_base_s: u32,
    /// How often the cron runs (its trigger in `wrangler.toml`): a batch job accumulates for
    /// at most the flush age plus one period.
    pub cron_period_s: u32,
    /// Deadline routing (`crate::routing::Policy`): what a job sent straight to sync needs
    /// before its deadline; a closer deadline is refused at submission.
    pub route_sync_s: u32,
    /// What a batch job moved to sync needs: its batch's cancel to end, then a sync call.
    pub route_rescue_s: u32,
    /// Room on top of a batch's expected duration.
    pub route_margin_s: u32,
    /// How long a batch is expected to take before enough of ours were measured.
    pub route_default_batch_s: u32,
}

impl Timing {
    pub fn production() -> Timing {
        Timing {
            backoff_base_s: 60,
            backoff_cap_s: 600,
            bulk_delay_s: 5,
            reconcile_after_s: 900,
            batch_flush_size: 1000,
            batch_flush_age_s: 3600,
            call_timeout_ms: 300_000,
            slo_sync_p95_s: 60,
            slo_sync_wait_s: 600,
            slo_batch_grace_s: 600,
            // Half the 24-hour expiry: most batches end within an hour (the batch-processing
            // guide), so a job inside one for 12 hours is late and still has time to be acted on.
            slo_batch_in_batch_s: 12 * 3600,
            webhook_retry_base_s: 30,
            cron_period_s: 60,
            // Two calls of the 300 s timeout and a backoff between them, with room to spare.
            route_sync_s: 900,
            // The batch-processing guide gives no bound on `canceling`: half an hour for the
            // cancel to end the batch, then the synchronous call.
            route_rescue_s: 1800,
            route_margin_s: 1800,
            // "Most batches finish in less than 1 hour" (the batch-processing guide,
            // https://docs.anthropic.com/en/docs/build-with-claude/batch-processing).
            route_default_batch_s: 3600,
        }
    }

    pub fn demo() -> Timing {
        Timing {
            backoff_base_s: 5,
            backoff_cap_s: 60,
            bulk_delay_s: 2,
            reconcile_after_s: 120,
            batch_flush_size: 50,
            batch_flush_age_s: 20,
            call_timeout_ms: 60_000,
            slo_sync_p95_s: 30,
            slo_sync_wait_s: 120,
            slo_batch_grace_s: 60,
            slo_batch_in_batch_s: 600,
            webhook_retry_base_s: 5,
            cron_period_s: 60,
            route_sync_s: 120,
            route_rescue_s: 60,
            route_margin_s: 30,
            route_default_batch_s: 60,
        }
    }

    pub fn test() -> Timing {
        Timing {
            backoff_base_s: 1,
            backoff_cap_s: 2,
            // Long enough for a person (or a browser test) to cancel a bulk job before it runs.
            bulk_delay_s: 3,
            reconcile_after_s: 20,
            batch_flush_size: 20,
            batch_flush_age_s: 3,
            call_timeout_ms: 5_000,
            slo_sync_p95_s: 2,
            slo_sync_wait_s: 10,
            slo_batch_grace_s: 10,
            slo_batch_in_batch_s: 30,
            webhook_retry_base_s: 1,
            // The suites trigger the cron themselves, about every second while they wait.
            cron_period_s: 1,
            route_sync_s: 10,
            route_rescue_s: 10,
            route_margin_s: 2,
            route_default_batch_s: 6,
        }
    }

    /// The profile as `(var name, value)` pairs, as written into a wrangler config.
    pub fn to_vars(&self) -> Vec<(&'static str, String)> {
        vec![
            (var::BACKOFF_BASE_S, self.backoff_base_s.to_string()),
            (var::BACKOFF_CAP_S, self.backoff_cap_s.to_string()),
            (var::BULK_DELAY_S, self.bulk_delay_s.to_string()),
            (var::RECONCILE_AFTER_S, self.reconcile_after_s.to_string()),
            (var::BATCH_FLUSH_SIZE, self.batch_flush_size.to_string()),
            (var::BATCH_FLUSH_AGE_S, self.batch_flush_age_s.to_string()),
            (var::CALL_TIMEOUT_MS, self.call_timeout_ms.to_string()),
            (var::SLO_SYNC_P95_S, self.slo_sync_p95_s.to_string()),
            (var::SLO_SYNC_WAIT_S, self.slo_sync_wait_s.to_string()),
            (var::SLO_BATCH_GRACE_S, self.slo_batch_grace_s.to_string()),
            (
                var::SLO_BATCH_IN_BATCH_S,
                self.slo_batch_in_batch_s.to_string(),
            ),
            (
                var::WEBHOOK_RETRY_BASE_S,
                self.webhook_retry_base_s.to_string(),
            ),
            (var::CRON_PERIOD_S, self.cron_period_s.to_string()),
            (var::ROUTE_SYNC_S, self.route_sync_s.to_string()),
            (var::ROUTE_RESCUE_S, self.route_rescue_s.to_string()),
            (var::ROUTE_MARGIN_S, self.route_margin_s.to_string()),
            (
                var::ROUTE_DEFAULT_BATCH_S,
                self.route_default_batch_s.to_string(),
            ),
        ]
    }

    /// Reads the profile from vars. A missing var takes its production value; a var that is set
    /// but not a number is an error, so a typo in configuration is loud rather than silent.
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<Timing, String> {
        let defaults = Timing::production();
        let read = |name: &str, default: u32| -> Result<u32, String> {
            match get(name) {
                None => Ok(default),
                Some(v) => v
                    .trim()
                    .parse::<u32>()
                    .map_err(|_| format!("var {name} must be a whole number, got {v:?}")),
            }
        };
        let t = Timing {
            backoff_base_s: read(var::BACKOFF_BASE_S, defaults.backoff_base_s)?,
            backoff_cap_s: read(var::BACKOFF_CAP_S, defaults.backoff_cap_s)?,
            bulk_delay_s: read(var::BULK_DELAY_S, defaults.bulk_delay_s)?,
            reconcile_after_s: read(var::RECONCILE_AFTER_S, defaults.reconcile_after_s)?,
            batch_flush_size: read(var::BATCH_FLUSH_SIZE, defaults.batch_flush_size)?,
            batch_flush_age_s: read(var::BATCH_FLUSH_AGE_S, defaults.batch_flush_age_s)?,
            call_timeout_ms: read(var::CALL_TIMEOUT_MS, defaults.call_timeout_ms)?,
            slo_sync_p95_s: read(var::SLO_SYNC_P95_S, defaults.slo_sync_p95_s)?,
            slo_sync_wait_s: read(var::SLO_SYNC_WAIT_S, defaults.slo_sync_wait_s)?,
            slo_batch_grace_s: read(var::SLO_BATCH_GRACE_S, defaults.slo_batch_grace_s)?,
            slo_batch_in_batch_s: read(var::SLO_BATCH_IN_BATCH_S, defaults.slo_batch_in_batch_s)?,
            webhook_retry_base_s: read(var::WEBHOOK_RETRY_BASE_S, defaults.webhook_retry_base_s)?,
            cron_period_s: read(var::CRON_PERIOD_S, defaults.cron_period_s)?,
            route_sync_s: read(var::ROUTE_SYNC_S, defaults.route_sync_s)?,
            route_rescue_s: read(var::ROUTE_RESCUE_S, defaults.route_rescue_s)?,
            route_margin_s: read(var::ROUTE_MARGIN_S, defaults.route_margin_s)?,
            route_default_batch_s: read(
                var::ROUTE_DEFAULT_BATCH_S,
                defaults.route_default_batch_s,
            )?,
        };
        if t.backoff_cap_s < t.backoff_base_s {
            return Err(format!(
                "{} ({}) must not be below {} ({})",
                var::BACKOFF_CAP_S,
                t.backoff_cap_s,
                var::BACKOFF_BASE_S,
                t.backoff_base_s
            ));
        }
        // The reconciler re-enqueues rows untouched for this long: a job waiting for its retry
        // or still in its call must never look stuck, or it would be run twice.
        let longest_wait_s = t.backoff_cap_s.max(t.call_timeout_ms.div_ceil(1000));
        if t.reconcile_after_s <= longest_wait_s {
            return Err(format!(
                "{} ({}) must exceed both {} and the call timeout ({} s)",
                var::RECONCILE_AFTER_S,
                t.reconcile_after_s,
                var::BACKOFF_CAP_S,
                t.call_timeout_ms.div_ceil(1000)
            ));
        }
        if t.batch_flush_size == 0 {
            return Err(format!("{} must be at least 1", var::BATCH_FLUSH_SIZE));
        }
        Ok(t)
    }

    /// The per-path SLO thresholds the metrics row is judged by.
    pub fn slo(&self) -> Slo {
        let ms = |s: u32| s as i64 * 1000;
        Slo {
            sync_p95_ms: ms(self.slo_sync_p95_s),
            sync_wait_ms: ms(self.slo_sync_wait_s),
            bulk_delay_ms: ms(self.bulk_delay_s),
            batch_flush_age_ms: ms(self.batch_flush_age_s),
            batch_submit_ms: ms(self.batch_flush_age_s) + ms(self.slo_batch_grace_s),
            batch_in_batch_ms: ms(self.slo_batch_in_batch_s),
        }
    }

    /// Delay before delivery `attempt` (the first delivery is attempt 1) is retried:
    /// `min(base·2^(attempt−1), cap)`, or the server's `retry-after` when that is longer.
    pub fn backoff_s(&self, attempt: u32, retry_after_s: Option<u32>) -> u32 {
        let exp = attempt.saturating_sub(1).min(31);
        let ours = self
            .backoff_base_s
            .saturating_mul(1u32 << exp)
            .min(self.backoff_cap_s);
        ours.max(retry_after_s.unwrap_or(0))
    }
}

/// The per-path SLO thresholds, in ms (`Timing::slo` makes them from the timing profile).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Slo {
    /// Sync: a p95 end-to-end latency above this warns.
    pub sync_p95_ms: i64,
    /// Sync: the oldest job waiting for its call, above this, warns.
    pub sync_wait_ms: i64,
    /// The bulk lane's delivery delay: a sync job on the bulk lane waits it by design, so its
    /// wait is counted from when the lane lets it run.
    pub bulk_delay_ms: i64,
    /// Batch: accumulating jobs are sent in a Message Batch once the oldest is this old…
    pub batch_flush_age_ms: i64,
    /// …and one still accumulating this long after its creation warns (the flush age and a
    /// grace for the cron's minute).
    pub batch_submit_ms: i64,
    /// Batch: a job inside its Message Batch this long warns (before the Message Batches API
    /// ends it, 24 hours after its creation).
    pub batch_in_batch_ms: i64,
}

impl Default for Slo {
    fn default() -> Slo {
        Timing::production().slo()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn production_backoff_is_60_s_doubling_to_a_600_s_cap() {
        let t = Timing::production();
        let delays: Vec<u32> = (1..=6).map(|n| t.backoff_s(n, None)).collect();
        assert_eq!(delays, [60, 120, 240, 480, 600, 600]);
    }

    #[test]
    fn a_longer_retry_after_wins_over_our_backoff() {
        let t = Timing::production();
        assert_eq!(t.backoff_s(1, Some(90)), 90);
        assert_eq!(t.backoff_s(3, Some(90)), 240);
    }

    #[test]
    fn every_profile_survives_a_round_trip_through_vars() {
        for t in [Timing::production(), Timing::demo(), Timing::test()] {
            let vars = t.to_vars();
            let back = Timing::from_vars(|name| {
                vars.iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.clone())
            })
            .unwrap();
            assert_eq!(back, t);
        }
    }

    #[test]
    fn missing_vars_fall_back_to_production() {
        assert_eq!(Timing::from_vars(|_| None).unwrap(), Timing::production());
    }

    #[test]
    fn a_var_that_is_not_a_number_is_an_error_naming_it() {
        let err = Timing::from_vars(|n| (n == var::BULK_DELAY_S).then(|| "5s".to_string()));
        assert!(err.unwrap_err().contains("BULK_DELAY_S"));
    }

    #[test]
    fn a_reconcile_window_shorter_than_a_retry_wait_is_refused() {
        let err = Timing::from_vars(|n| (n == var::RECONCILE_AFTER_S).then(|| "60".to_string()));
        assert!(err.unwrap_err().contains("RECONCILE_AFTER_S"));
    }

    #[test]
    fn the_test_profile_reaches_the_dlq_within_seconds() {
        let t = Timing::test();
        // High lane: 5 retries after the first delivery.
        let total: u32 = (1..=5).map(|n| t.backoff_s(n, None)).sum();
        assert!(total <= 15, "{total}");
    }

    proptest! {
        #[test]
        fn backoff_is_bounded_by_the_cap_or_retry_after(
            base in 1u32..1000, extra in 0u32..10_000, attempt in 0u32..100, ra in proptest::option::of(0u32..100_000)
        ) {
            let t = Timing { backoff_base_s: base, backoff_cap_s: base + extra, ..Timing::production() };
            let d = t.backoff_s(attempt, ra);
            prop_assert!(d <= t.backoff_cap_s.max(ra.unwrap_or(0)));
            prop_assert!(d >= base.min(t.backoff_cap_s));
        }

        #[test]
        fn backoff_never_shrinks_as_attempts_grow(base in 1u32..1000, extra in 0u32..10_000, attempt in 1u32..100) {
            let t = Timing { backoff_base_s: base, backoff_cap_s: base + extra, ..Timing::production() };
            prop_assert!(t.backoff_s(attempt + 1, None) >= t.backoff_s(attempt, None));
        }
    }
}
