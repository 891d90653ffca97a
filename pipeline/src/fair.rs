//! Fair shares of a lane across users, weighted by tokens.
//!
//! A queue delivers in arrival order, so a user who queued 500 jobs would otherwise be served
//! 500 times before the job another user queued a moment later. The lane consumers therefore
//! treat a delivered message as the right to run *one* new job of its lane, not necessarily its
//! own: [`plan`] gives each of a queue batch's messages the job of the user who was served least
//! over the last minute — in tokens granted by the budget, divided by the user's weight (an
//! admin's setting, 1 by default) — and the message's own job is sent to the lane again. Within
//! a user, jobs keep their order. A user alone on the lane still takes all of it: fairness only
//! reorders, it never leaves capacity idle.
//!
//! Only new jobs (never attempted) are reordered: a retry waits its own backoff with its own
//! message.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The window of [`Recent`]: a minute, in six slots of ten seconds.
const SLOT_MS: i64 = 10_000;
const SLOTS: usize = 6;

/// Tokens a user was granted over the last minute (a sliding window of six 10-second slots), as
/// the budget object keeps it per user.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recent {
    /// The slot number (`at_ms / 10 s`) of `tokens[0]`, the newest.
    newest: i64,
    tokens: [u64; SLOTS],
}

impl Recent {
    /// Moves the window to `now`: slots older than a minute are dropped.
    fn roll(&mut self, now: i64) {
        let slot = now.div_euclid(SLOT_MS);
        let shift = (slot - self.newest).clamp(0, SLOTS as i64) as usize;
        if shift > 0 {
            self.tokens.rotate_right(shift);
            self.tokens[..shift].fill(0);
            self.newest = slot;
        }
    }

    /// Counts `tokens` granted at `now`.
    pub fn add(&mut self, tokens: u64, now: i64) {
        self.roll(now);
        self.tokens[0] = self.tokens[0].saturating_add(tokens);
    }

    /// Tokens granted over the minute before `now`.
    pub fn total(&mut self, now: i64) -> u64 {
        self.roll(now);
        self.tokens.iter().sum()
    }
}

/// A user's oldest new job on a lane, as the store finds it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Candidate {
    pub id: String,
    pub user_id: String,
    pub created_at: i64,
    /// The user's share weight (1 unless an admin set another; 0 reads as 1).
    pub weight: u32,
}

/// What a queue batch's messages run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Delivered jobs that run on their own message.
    pub own: Vec<String>,
    /// `(delivered, other)`: the delivered job's message runs `other` instead; the delivered job
    /// is sent to its lane again.
    pub swaps: Vec<(String, String)>,
}

/// The order of service: least tokens per unit of weight first, then the oldest job.
fn key(c: &Candidate, usage: &BTreeMap<String, u64>) -> (u128, i64) {
    let used = usage.get(&c.user_id).copied().unwrap_or(0) as u128;
    (used * 1_000 / c.weight.max(1) as u128, c.created_at)
}

/// Which jobs the messages of `delivered` (new jobs, in delivery order) run: the first
/// `delivered.len()` of `candidates` (each user's oldest new job on the lane) in the order of
/// service, given each user's recent `usage` in tokens. A delivered job among those runs on its
/// own message; the other messages take the other chosen jobs; a message left without one runs
/// its own job.
pub fn plan(delivered: &[String], candidates: &[Candidate], usage: &BTreeMap<String, u64>) -> Plan {
    let mut ordered: Vec<&Candidate> = candidates.iter().collect();
    ordered.sort_by_key(|c| key(c, usage));
    let chosen: Vec<&str> = ordered
        .iter()
        .take(delivered.len())
        .map(|c| c.id.as_str())
        .collect();
    let mut others = chosen
        .iter()
        .filter(|id| !delivered.iter().any(|d| d == *id))
        .map(|id| id.to_string());
    let mut p = Plan::default();
    for d in delivered {
        if chosen.contains(&d.as_str()) {
            p.own.push(d.clone());
        } else if let Some(other) = others.next() {
            p.swaps.push((d.clone(), other));
        } else {
            p.own.push(d.clone());
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn c(id: &str, user: &str, at: i64, weight: u32) -> Candidate {
        Candidate {
            id: id.into(),
            user_id: user.into(),
            created_at: at,
            weight,
        }
    }

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_whales_messages_run_the_jobs_of_users_served_less() {
        let usage = BTreeMap::from([("whale".to_string(), 90_000)]);
        let candidates = [
            c("w1", "whale", 1, 1),
            c("a1", "ann", 50, 1),
            c("b1", "bob", 60, 1),
        ];
        let p = plan(&ids(&["w7", "w8", "w9"]), &candidates, &usage);
        assert_eq!(
            p.swaps,
            vec![
                ("w7".into(), "a1".into()),
                ("w8".into(), "b1".into()),
                ("w9".into(), "w1".into())
            ],
            "the small users first, then the whale's oldest"
        );
        assert!(p.own.is_empty());
    }

    #[test]
    fn a_user_alone_on_the_lane_keeps_all_of_it() {
        let usage = BTreeMap::from([("whale".to_string(), 1_000_000)]);
        let p = plan(&ids(&["w2", "w3"]), &[c("w2", "whale", 2, 1)], &usage);
        assert_eq!(p.own, ids(&["w2", "w3"]));
        assert!(p.swaps.is_empty());
    }

    #[test]
    fn a_weight_of_two_is_served_as_if_it_had_used_half() {
        let usage = BTreeMap::from([("gold".to_string(), 1_000), ("lead".to_string(), 600)]);
        let candidates = [c("g1", "gold", 9, 2), c("l1", "lead", 1, 1)];
        let p = plan(&ids(&["x"]), &candidates, &usage);
        assert_eq!(p.swaps, vec![("x".into(), "g1".into())]);
    }

    #[test]
    fn among_equals_the_oldest_job_goes_first() {
        let p = plan(
            &ids(&["b2"]),
            &[c("b1", "bob", 5, 1), c("a1", "ann", 3, 1)],
            &BTreeMap::new(),
        );
        assert_eq!(p.swaps, vec![("b2".into(), "a1".into())]);
    }

    #[test]
    fn the_window_forgets_what_is_older_than_a_minute() {
        let mut r = Recent::default();
        r.add(100, 0);
        r.add(50, 35_000);
        assert_eq!(r.total(59_999), 150);
        assert_eq!(r.total(60_000), 50, "the first slot left the window");
        assert_eq!(r.total(1_000_000), 0);
        r.add(7, 1_000_000);
        assert_eq!(r.total(1_000_001), 7);
    }

    proptest! {
        #[test]
        fn every_message_runs_one_job_and_no_job_runs_twice(
            delivered in proptest::collection::btree_set(0u8..40, 0..6),
            users in proptest::collection::vec((0u8..40, 0u8..5, 0i64..100, 0u32..4), 0..12),
            used in proptest::collection::vec(0u64..10_000, 5),
        ) {
            let delivered: Vec<String> = delivered.into_iter().map(|d| format!("j{d}")).collect();
            // One candidate per user, each a distinct job, as the store gives them.
            let (mut seen_users, mut seen_jobs) = (std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
            let candidates: Vec<Candidate> = users
                .into_iter()
                .filter(|(j, u, _, _)| seen_users.insert(*u) && seen_jobs.insert(*j))
                .map(|(j, u, at, w)| c(&format!("j{j}"), &format!("u{u}"), at, w))
                .collect();
            let usage: BTreeMap<String, u64> =
                used.iter().enumerate().map(|(i, t)| (format!("u{i}"), *t)).collect();
            let p = plan(&delivered, &candidates, &usage);
            prop_assert_eq!(p.own.len() + p.swaps.len(), delivered.len());
            let mut run: Vec<&String> = p.own.iter().chain(p.swaps.iter().map(|(_, o)| o)).collect();
            let n = run.len();
            run.sort();
            run.dedup();
            prop_assert_eq!(run.len(), n, "no job runs twice");
            for (d, o) in &p.swaps {
                prop_assert!(delivered.contains(d) && !delivered.contains(o));
            }
        }
    }
}
