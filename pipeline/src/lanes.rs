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
    /// When the slot was taken (`None` in state written before this field: an unknown age).
    #[serde(default)]
    since: Option<i64>,
}

/// The slots in use, by job id, and what the lanes have learned of how long a call holds one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slots {
    leases: HashMap<String, Lease>,
    /// Per lane, a moving average of how long a released slot was held (ms).
    #[serde(default)]
    held_ms: HashMap<Lane, u64>,
    /// Jobs refused a slot and not yet granted one, with when they were first refused: the
    /// order in which they are told to come back.
    #[serde(default)]
    waiting: HashMap<String, Waiter>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Waiter {
    lane: Lane,
    since: i64,
    /// Forgotten after this (a job that never asks again — canceled, expired — leaves).
    until: i64,
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

/// A refused job never comes back sooner than this, nor later than [`MAX_WAIT_MS`].
pub const MIN_WAIT_MS: i64 = 1_000;
pub const MAX_WAIT_MS: i64 = 60_000;
/// Waiting jobs remembered at most (the state is stored after every change, so it stays small).
pub const WAITING_CAP: usize = 1_000;

impl Slots {
    fn expire(&mut self, now: i64) {
        self.leases.retain(|_, l| l.expires_at > now);
        self.waiting.retain(|_, w| w.until > now);
    }

    /// Calls in flight on `lane` at `now`.
    pub fn in_flight(&mut self, lane: Lane, now: i64) -> u32 {
        self.expire(now);
        self.leases.values().filter(|l| l.lane == lane).count() as u32
    }

    /// How long a call on `lane` holds its slot, as learned from the slots given back.
    pub fn typical_hold_ms(&self, lane: Lane) -> Option<u64> {
        self.held_ms.get(&lane).copied()
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
        let held = self
            .leases
            .get(job)
            .filter(|l| l.lane == lane)
            .map(|l| l.since);
        let in_flight = self.leases.values().filter(|l| l.lane == lane).count() as u32;
        if held.is_some() || in_flight < limit {
            self.waiting.remove(job);
            self.leases.insert(
                job.to_owned(),
                Lease {
                    lane,
                    expires_at: now + ttl_ms,
                    since: held.unwrap_or(Some(now)),
                },
            );
            return Grant {
                granted: true,
                retry_after_ms: 0,
                in_flight: if held.is_some() {
                    in_flight
                } else {
                    in_flight + 1
                },
                limit,
            };
        }
        let since = self.waiting.get(job).map_or(now, |w| w.since);
        // Past the cap a newcomer is not recorded: every recorded waiter counts as ahead of it.
        if self.waiting.len() < WAITING_CAP || self.waiting.contains_key(job) {
            self.waiting.insert(
                job.to_owned(),
                Waiter {
                    lane,
                    since,
                    until: now + ttl_ms.max(MAX_WAIT_MS) * 2,
                },
            );
        }
        Grant {
            granted: false,
            retry_after_ms: self.wait_ms(lane, job, since, now, limit) as u64,
            in_flight,
            limit,
        }
    }

    /// When a refused `job` should ask again: when the lane's first slot is likely free
    /// ([`Slots::next_free_ms`]), plus a call's length for every full round of the lane's slots
    /// that the jobs refused before it will take first — so a crowd of waiting jobs comes back
    /// spread over the time the slots need, not all at once.
    fn wait_ms(&self, lane: Lane, job: &str, since: i64, now: i64, limit: u32) -> i64 {
        let ahead = self
            .waiting
            .iter()
            .filter(|(id, w)| w.lane == lane && (w.since, id.as_str()) < (since, job))
            .count() as i64;
        let next = self.next_free_ms(lane, now);
        let round = self.typical_hold_ms(lane).map_or(next, |t| t as i64);
        (next + ahead / i64::from(limit.max(1)) * round).clamp(MIN_WAIT_MS, MAX_WAIT_MS)
    }

    /// The soonest a slot of `lane` is likely to be given back: a lease's time-to-live bounds
    /// it, the lane's typical hold time (less the time held so far) estimates it, and with
    /// nothing learned yet a call is guessed to run as long again as it has run.
    fn next_free_ms(&self, lane: Lane, now: i64) -> i64 {
        let typical = self.typical_hold_ms(lane).map(|t| t as i64);
        self.leases
            .values()
            .filter(|l| l.lane == lane)
            .map(|l| {
                let age = l.since.map_or(0, |since| now - since);
                let guess = typical.map_or(age, |t| t - age).max(MIN_WAIT_MS);
                guess.min(l.expires_at - now)
            })
            .min()
            .unwrap_or(0)
    }

    /// Gives the job's slot back (nothing happens if it holds none) and learns how long it
    /// was held.
    pub fn release(&mut self, job: &str, now: i64) {
        self.waiting.remove(job);
        let Some(lease) = self.leases.remove(job) else {
            return;
        };
        let Some(took) = lease
            .since
            .filter(|since| *since <= now)
            .map(|since| (now - since) as u64)
        else {
            return;
        };
        // A moving average over about the last eight calls.
        self.held_ms
            .entry(lease.lane)
            .and_modify(|t| *t = (*t * 7 + took) / 8)
            .or_insert(took);
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
        s.release("b0", 0);
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

    #[test]
    fn a_refused_job_comes_back_when_a_call_usually_ends_not_when_its_lease_lapses() {
        let mut s = Slots::default();
        let l = LaneLimits { high: 1, bulk: 1 };
        let ttl = 300_000;
        assert!(s.acquire(Lane::Bulk, "a", 0, ttl, &l).granted);
        s.release("a", 2_000);
        assert_eq!(s.typical_hold_ms(Lane::Bulk), Some(2_000));
        assert!(s.acquire(Lane::Bulk, "b", 2_000, ttl, &l).granted);
        let refused = s.acquire(Lane::Bulk, "c", 2_500, ttl, &l);
        assert!(!refused.granted);
        assert_eq!(
            refused.retry_after_ms, 1_500,
            "2 s typical, 0.5 s held so far"
        );
        // A call running past the typical length is expected to end soon, never sooner than 1 s.
        assert_eq!(
            s.acquire(Lane::Bulk, "c", 9_000, ttl, &l).retry_after_ms,
            1_000
        );
    }

    #[test]
    fn with_nothing_learned_a_call_is_expected_to_run_as_long_again_within_its_lease() {
        let mut s = Slots::default();
        let l = LaneLimits { high: 1, bulk: 1 };
        assert!(s.acquire(Lane::Bulk, "a", 0, 10_000, &l).granted);
        assert_eq!(
            s.acquire(Lane::Bulk, "b", 3_000, 10_000, &l).retry_after_ms,
            3_000
        );
        assert_eq!(
            s.acquire(Lane::Bulk, "b", 8_000, 10_000, &l).retry_after_ms,
            2_000,
            "the lease lapses at 10 s"
        );
        assert_eq!(
            s.acquire(Lane::Bulk, "b", 100, 10_000, &l).retry_after_ms,
            1_000,
            "never sooner than 1 s"
        );
    }

    #[test]
    fn a_crowd_of_refused_jobs_is_spread_over_the_rounds_the_slots_need() {
        let mut s = Slots::default();
        let l = LaneLimits { high: 10, bulk: 2 };
        let ttl = 300_000;
        assert!(s.acquire(Lane::Bulk, "x", 0, ttl, &l).granted);
        s.release("x", 4_000);
        for j in ["a", "b"] {
            assert!(s.acquire(Lane::Bulk, j, 4_000, ttl, &l).granted);
        }
        let waits: Vec<u64> = (0..6)
            .map(|i| {
                s.acquire(Lane::Bulk, &format!("w{i}"), 5_000, ttl, &l)
                    .retry_after_ms
            })
            .collect();
        // The first slot frees in 3 s; each pair after the first waits one more call (4 s).
        assert_eq!(waits, [3_000, 3_000, 7_000, 7_000, 11_000, 11_000]);
        // Asking again keeps a job's place; a job that gets a slot leaves the line.
        s.release("a", 6_000);
        assert!(s.acquire(Lane::Bulk, "w0", 6_000, ttl, &l).granted);
        let again = s.acquire(Lane::Bulk, "w3", 6_000, ttl, &l).retry_after_ms;
        assert!(again < 7_000, "w3 moved up once w0 left the line: {again}");
        // The high lane's waiting line is its own.
        assert!(s.acquire(Lane::High, "h", 6_000, ttl, &l).granted);
    }

    proptest! {
        #[test]
        fn a_refusal_always_says_to_come_back_within_a_second_and_a_minute(ops in proptest::collection::vec((any::<bool>(), 0u8..20, any::<bool>(), 0i64..5_000, 1i64..400_000), 1..200)) {
            let mut s = Slots::default();
            let l = LaneLimits { high: 3, bulk: 1 };
            let mut now = 0;
            for (bulk, job, release, step, ttl) in ops {
                now += step;
                let lane = if bulk { Lane::Bulk } else { Lane::High };
                let job = format!("j{job}");
                if release {
                    s.release(&job, now);
                } else {
                    let g = s.acquire(lane, &job, now, ttl, &l);
                    if !g.granted {
                        prop_assert!((1_000..=60_000).contains(&g.retry_after_ms), "{g:?}");
                    }
                }
            }
        }
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
                if release { s.release(&job, now) } else { s.acquire(lane, &job, now, 100, &l); }
                prop_assert!(s.in_flight(Lane::High, now) <= 4);
                prop_assert!(s.in_flight(Lane::Bulk, now) <= 2);
            }
        }
    }
}
