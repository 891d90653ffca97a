//! Per-lane in-flight limits, enforced by the `BUDGET` Durable Object so that the lanes' asymmetry
//! (high 10, bulk 3) holds even where the queue runtime ignores `max_concurrency` (locally).
//! A slot is a lease with a time-to-live: a Worker that dies mid-call does not leak it.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::status::Lane;

/// How many calls each lane may have in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaneLimits {
    pub high: u32,
    pub bulk: u32,
}

impl Default for LaneLimits {
    /// The queues' `max_concurrency` in `wrangler.toml`.
    fn default() -> Self {
        LaneLimits { high: 10, bulk: 3 }
    }
}

impl LaneLimits {
    pub fn of(&self, lane: Lane) -> u32 {
        match lane {
            Lane::High => self.high,
            Lane::Bulk => self.bulk,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Lease {
    lane: Lane,
    expires_at: i64,
}

/// The slots in use, by job id.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slots {
    leases: HashMap<String, Lease>,
}

/// The answer to a request for a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    pub granted: bool,
    /// When refused: try again after this long.
    pub retry_after_ms: u64,
    pub in_flight: u32,
    pub limit: u32,
}

impl Slots {
    fn expire(&mut self, now: i64) {
        self.leases.retain(|_, l| l.expires_at > now);
    }

    /// Calls in flight on `lane` at `now`.
    pub fn in_flight(&mut self, lane: Lane, now: i64) -> u32 {
        self.expire(now);
        self.leases.values().filter(|l| l.lane == lane).count() as u32
    }

    /// Takes a slot on `lane` for `job` until `now + ttl_ms`, if one is free. Asking again for
    /// a job that holds a slot renews it (a redelivery never takes two).
    pub fn acquire(
        &mut self,
        lane: Lane,
        job: &str,
        now: i64,
        ttl_ms: i64,
        limits: &LaneLimits,
    ) -> Grant {
        self.expire(now);
        let limit = limits.of(lane);
        let held = self.leases.get(job).is_some_and(|l| l.lane == lane);
        let in_flight = self.leases.values().filter(|l| l.lane == lane).count() as u32;
        if held || in_flight < limit {
            self.leases.insert(
                job.to_owned(),
                Lease {
                    lane,
                    expires_at: now + ttl_ms,
                },
            );
            let in_flight = if held { in_flight } else { in_flight + 1 };
            return Grant {
                granted: true,
                retry_after_ms: 0,
                in_flight,
                limit,
            };
        }
        // The soonest a lease can lapse on its own; a release usually comes much earlier.
        let soonest = self
            .leases
            .values()
            .filter(|l| l.lane == lane)
            .map(|l| l.expires_at - now)
            .min()
            .unwrap_or(0);
        Grant {
            granted: false,
            retry_after_ms: soonest.clamp(1_000, 60_000) as u64,
            in_flight,
            limit,
        }
    }

    /// Gives the job's slot back (nothing happens if it holds none).
    pub fn release(&mut self, job: &str) {
        self.leases.remove(job);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_bulk_lane_admits_three_and_the_high_lane_is_unaffected() {
        let mut s = Slots::default();
        let l = LaneLimits::default();
        for i in 0..3 {
            assert!(s.acquire(Lane::Bulk, &format!("b{i}"), 0, 1000, &l).granted);
        }
        let refused = s.acquire(Lane::Bulk, "b3", 0, 1000, &l);
        assert!(!refused.granted);
        assert!(refused.retry_after_ms >= 1000);
        assert!(s.acquire(Lane::High, "h0", 0, 1000, &l).granted);
        s.release("b0");
        assert!(s.acquire(Lane::Bulk, "b3", 0, 1000, &l).granted);
    }

    #[test]
    fn a_lease_lapses_so_a_dead_worker_does_not_leak_its_slot() {
        let mut s = Slots::default();
        let l = LaneLimits { high: 1, bulk: 1 };
        assert!(s.acquire(Lane::High, "a", 0, 1000, &l).granted);
        assert!(!s.acquire(Lane::High, "b", 999, 1000, &l).granted);
        assert!(s.acquire(Lane::High, "b", 1000, 1000, &l).granted);
    }

    #[test]
    fn asking_again_for_the_same_job_renews_rather_than_takes_a_second_slot() {
        let mut s = Slots::default();
        let l = LaneLimits { high: 1, bulk: 1 };
        assert!(s.acquire(Lane::High, "a", 0, 1000, &l).granted);
        assert!(s.acquire(Lane::High, "a", 500, 1000, &l).granted);
        assert_eq!(s.in_flight(Lane::High, 500), 1);
        assert_eq!(s.in_flight(Lane::High, 1400), 1, "renewed until 1500");
    }

    proptest! {
        #[test]
        fn in_flight_never_exceeds_the_limit(ops in proptest::collection::vec((any::<bool>(), 0u8..20, any::<bool>(), 0i64..50), 1..200)) {
            let mut s = Slots::default();
            let l = LaneLimits { high: 4, bulk: 2 };
            let mut now = 0;
            for (bulk, job, release, step) in ops {
                now += step;
                let lane = if bulk { Lane::Bulk } else { Lane::High };
                let job = format!("j{job}");
                if release { s.release(&job) } else { s.acquire(lane, &job, now, 100, &l); }
                prop_assert!(s.in_flight(Lane::High, now) <= 4);
                prop_assert!(s.in_flight(Lane::Bulk, now) <= 2);
            }
        }
    }
}
