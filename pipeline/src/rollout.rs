//! The rollout of the queue path: which users' `POST /api/claude` calls go through the queue —
//! deterministic per user, so a user never flips between paths while the percent stays put — and
//! the two paths side by side over a window: what an operator watches while moving
//! `QUEUE_ROLLOUT_PERCENT` (the seed's plan: 5 % → 50 % → 100 %, comparing p95, the failure rate
//! and the cost per call of each path for 48 hours before each step).

use serde::{Deserialize, Serialize};
use sha1::{Digest, Sha1};

use crate::money::UsdMicros;
use crate::ops::metrics::Percentiles;
use crate::status::{CallPath, Status};

/// One recorded call, as the rollout view reads it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct RolloutCall {
    pub path: CallPath,
    pub status: Status,
    pub created_at: i64,
    pub completed_at: Option<i64>,
    pub cost_micros: UsdMicros,
}

/// One path's figures over the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PathStats {
    /// Calls made (ended or not).
    pub calls: u32,
    /// Calls that ended (completed, failed, dead-lettered, expired, canceled).
    pub ended: u32,
    pub failed: u32,
    /// `failed / ended` (0 when none ended).
    pub failure_rate: f64,
    /// Request to answer, of the completed calls (ms).
    pub latency_ms: Percentiles,
    pub cost_micros: UsdMicros,
    /// `cost / ended` (0 when none ended).
    pub cost_per_call_micros: UsdMicros,
}

/// `GET /api/rollout`: both paths over `[from, to)`, with the rollout percent in force.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RolloutReport {
    pub from: i64,
    pub to: i64,
    pub percent: u32,
    pub direct: PathStats,
    pub queue: PathStats,
}

/// The figures of one path's calls.
pub fn path_stats<'a>(calls: impl Iterator<Item = &'a RolloutCall>) -> PathStats {
    let mut s = PathStats::default();
    let mut latencies = Vec::new();
    for c in calls {
        s.calls += 1;
        if !c.status.is_terminal() {
            continue;
        }
        s.ended += 1;
        s.cost_micros += c.cost_micros;
        match c.status {
            Status::Completed => {
                if let Some(done) = c.completed_at {
                    latencies.push((done - c.created_at).max(0));
                }
            }
            Status::Canceled => {}
            _ => s.failed += 1,
        }
    }
    if s.ended > 0 {
        s.failure_rate = s.failed as f64 / s.ended as f64;
        s.cost_per_call_micros = UsdMicros::new(s.cost_micros.micros() / s.ended as u64);
    }
    s.latency_ms = Percentiles::of(latencies);
    s
}

/// Both paths, side by side.
pub fn report(calls: &[RolloutCall], from: i64, to: i64, percent: u32) -> RolloutReport {
    let of = |p: CallPath| path_stats(calls.iter().filter(move |c| c.path == p));
    RolloutReport {
        from,
        to,
        percent,
        direct: of(CallPath::Direct),
        queue: of(CallPath::Queue),
    }
}

/// The user's bucket, 0–99: SHA-1 of the user id, first 4 bytes big-endian, mod 100.
pub fn bucket(user_id: &str) -> u32 {
    let d = Sha1::digest(user_id.as_bytes());
    u32::from_be_bytes([d[0], d[1], d[2], d[3]]) % 100
}

/// Whether the user is inside a rollout of `percent` (0 = nobody, 100 = everybody).
pub fn in_rollout(user_id: &str, percent: u32) -> bool {
    bucket(user_id) < percent.min(100)
}

/// Reads `QUEUE_ROLLOUT_PERCENT`: a whole number 0–100; anything else is 0, so a typo never
/// moves traffic.
pub fn parse_percent(raw: Option<&str>) -> u32 {
    raw.and_then(|v| v.trim().parse::<u32>().ok())
        .filter(|p| *p <= 100)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_bucket_is_sha1_first_four_bytes_big_endian_mod_100() {
        // SHA-1("abc") = a9993e36…: 0xa9993e36 = 2845392438, mod 100 = 38.
        assert_eq!(bucket("abc"), 38);
    }

    #[test]
    fn zero_is_nobody_and_hundred_is_everybody() {
        for u in ["alice", "bob", "anonymous", "x"] {
            assert!(!in_rollout(u, 0));
            assert!(in_rollout(u, 100));
        }
    }

    #[test]
    fn a_bad_percent_moves_nobody() {
        assert_eq!(parse_percent(Some("25")), 25);
        assert_eq!(parse_percent(Some("150")), 0);
        assert_eq!(parse_percent(Some("ten")), 0);
        assert_eq!(parse_percent(None), 0);
    }

    proptest! {
        #[test]
        fn raising_the_percent_never_removes_a_user(user in "[a-z0-9]{1,20}", p in 0u32..100) {
            if in_rollout(&user, p) {
                prop_assert!(in_rollout(&user, p + 1));
            }
        }
    }
}

#[cfg(test)]
mod report_tests {
    use super::*;

    fn call(path: CallPath, status: Status, ms: i64, cost: u64) -> RolloutCall {
        RolloutCall {
            path,
            status,
            created_at: 1_000,
            completed_at: status.is_terminal().then_some(1_000 + ms),
            cost_micros: UsdMicros::new(cost),
        }
    }

    #[test]
    fn each_path_counts_its_own_calls_failures_latency_and_cost() {
        let calls = [
            call(CallPath::Direct, Status::Completed, 800, 300),
            call(CallPath::Direct, Status::Completed, 1_200, 500),
            call(CallPath::Direct, Status::Failed, 50, 0),
            call(CallPath::Direct, Status::Running, 0, 0),
            call(CallPath::Queue, Status::Completed, 2_000, 400),
        ];
        let r = report(&calls, 0, 10_000, 5);
        assert_eq!((r.direct.calls, r.direct.ended, r.direct.failed), (4, 3, 1));
        assert!((r.direct.failure_rate - 1.0 / 3.0).abs() < 1e-9);
        assert_eq!(r.direct.latency_ms.p50, Some(800));
        assert_eq!(r.direct.latency_ms.p95, Some(1_200));
        assert_eq!(r.direct.cost_micros, 800);
        assert_eq!(r.direct.cost_per_call_micros, 266);
        assert_eq!((r.queue.calls, r.queue.failed), (1, 0));
        assert_eq!(r.queue.latency_ms.p50, Some(2_000));
        assert_eq!(r.percent, 5);
    }

    #[test]
    fn a_path_without_calls_reads_as_zeros_not_as_a_division_by_zero() {
        let r = report(&[], 0, 1, 0);
        assert_eq!(r.queue, PathStats::default());
        assert_eq!(r.direct.failure_rate, 0.0);
    }
}
