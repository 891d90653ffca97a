//! The token budget kept by the `BUDGET` Durable Object: the provider's three per-minute limits
//! (requests, input tokens, output tokens) as continuously refilling buckets, per model class,
//! plus the per-lane in-flight slots of [`crate::lanes`].
//!
//! Before a call the consumer *reserves* an estimate (one request, the estimated input tokens,
//! `max_tokens` of output). A reservation is a lease with a time-to-live: it holds a lane slot
//! until the call is settled or the lease lapses, so a Worker that dies mid-call leaks nothing
//! (the tokens it took refill on their own, as the provider's do). After the call the consumer
//! *settles*: the estimate is replaced by the real usage (a refund, or a charge of the
//! difference), the `anthropic-ratelimit-*` headers teach the buckets the provider's real limits
//! and remaining counts, and a 429 pauses the model class until the reset it names.
//!
//! Arithmetic is exact integer arithmetic: a bucket's level is kept in units of 1/60,000 of a
//! token, so a bucket of `limit` tokens per minute refills exactly `limit` units per millisecond.
//! A bucket never goes negative: usage beyond what is available becomes a debt that the refill
//! pays back before anything new is granted.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::anthropic::Usage;
use crate::lanes::{LaneLimits, Slots};
use crate::status::Lane;

/// Units of a bucket per token (or request): one minute in milliseconds.
pub const UNITS: u64 = 60_000;

/// A refused reservation is never told to come back sooner than this.
pub const MIN_RETRY_MS: u64 = 50;

/// One continuously refilling bucket: capacity `limit`, refilled at `limit` per minute.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bucket {
    /// Per minute; also the capacity.
    limit: u64,
    /// Available, in units (1/60,000 token).
    level: u64,
    /// Charged beyond what was available; the refill pays it back first.
    debt: u64,
    /// When `level` was last brought up to date (epoch ms).
    updated_at: i64,
    /// Net units charged since the bucket was made (reservations + reconciliations − refunds).
    charged: u64,
}

impl Bucket {
    pub fn full(limit: u64, now: i64) -> Bucket {
        let limit = limit.max(1);
        Bucket {
            limit,
            level: limit * UNITS,
            debt: 0,
            updated_at: now,
            charged: 0,
        }
    }

    fn capacity(&self) -> u64 {
        self.limit * UNITS
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Whole tokens available now (after [`Bucket::refill`]).
    pub fn remaining(&self) -> u64 {
        self.level / UNITS
    }

    /// Whole tokens owed (usage beyond what was available).
    pub fn debt(&self) -> u64 {
        self.debt.div_ceil(UNITS)
    }

    /// Net tokens charged since the bucket was made.
    pub fn charged_tokens(&self) -> u64 {
        self.charged / UNITS
    }

    /// Brings the level up to `now`. Time never runs backwards for a bucket.
    pub fn refill(&mut self, now: i64) {
        if now <= self.updated_at {
            return;
        }
        let mut add = (now - self.updated_at) as u64 * self.limit;
        let pay = add.min(self.debt);
        self.debt -= pay;
        add -= pay;
        self.level = (self.level + add).min(self.capacity());
        self.updated_at = now;
    }

    /// Milliseconds until `n` tokens are available (0: now). A need larger than the whole bucket
    /// waits for a full bucket: it can never fit better than that.
    pub fn wait_ms(&self, n: u64) -> u64 {
        let need = (n * UNITS).min(self.capacity()) + self.debt;
        if self.level >= need {
            0
        } else {
            (need - self.level).div_ceil(self.limit)
        }
    }

    /// Charges `n` tokens; what is not available becomes debt.
    pub fn take(&mut self, n: u64) {
        let units = n * UNITS;
        self.charged += units;
        if units <= self.level {
            self.level -= units;
        } else {
            self.debt += units - self.level;
            self.level = 0;
        }
    }

    /// Gives `n` tokens back (pays debt first, never beyond capacity).
    pub fn give(&mut self, n: u64) {
        let mut units = n * UNITS;
        self.charged = self.charged.saturating_sub(units);
        let pay = units.min(self.debt);
        self.debt -= pay;
        units -= pay;
        self.level = (self.level + units).min(self.capacity());
    }

    /// The provider's limit replaces ours.
    pub fn set_limit(&mut self, limit: u64) {
        self.limit = limit.max(1);
        self.level = self.level.min(self.capacity());
    }

    /// The provider says fewer tokens remain than we think: believe it (never the other way,
    /// since our count already holds calls the provider has not seen yet).
    pub fn cap_remaining(&mut self, remaining: u64) {
        self.level = self.level.min(remaining * UNITS);
    }
}

/// The three limits of one model class, per minute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    pub rpm: u64,
    pub itpm: u64,
    pub otpm: u64,
}

impl Default for Limits {
    /// The API's first usage tier for Sonnet-class models; the headers of the first answer
    /// teach the real ones.
    fn default() -> Self {
        Limits {
            rpm: 50,
            itpm: 30_000,
            otpm: 8_000,
        }
    }
}

/// Which of the three buckets (also the header families, in [`crate::anthropic::RATE_LIMIT_FAMILIES`] order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    Requests,
    InputTokens,
    OutputTokens,
}

impl Family {
    pub const ALL: [Family; 3] = [Family::Requests, Family::InputTokens, Family::OutputTokens];

    /// The `anthropic-ratelimit-…` header prefix.
    pub fn header(self) -> &'static str {
        match self {
            Family::Requests => "anthropic-ratelimit-requests",
            Family::InputTokens => "anthropic-ratelimit-input-tokens",
            Family::OutputTokens => "anthropic-ratelimit-output-tokens",
        }
    }
}

/// The buckets of one model class.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Buckets {
    pub requests: Bucket,
    pub input: Bucket,
    pub output: Bucket,
    /// A 429 stops every reservation of the class until then.
    pub paused_until: i64,
}

impl Buckets {
    pub fn new(l: &Limits, now: i64) -> Buckets {
        Buckets {
            requests: Bucket::full(l.rpm, now),
            input: Bucket::full(l.itpm, now),
            output: Bucket::full(l.otpm, now),
            paused_until: 0,
        }
    }

    pub fn get(&mut self, f: Family) -> &mut Bucket {
        match f {
            Family::Requests => &mut self.requests,
            Family::InputTokens => &mut self.input,
            Family::OutputTokens => &mut self.output,
        }
    }

    fn refill(&mut self, now: i64) {
        for f in Family::ALL {
            self.get(f).refill(now);
        }
    }
}

/// What a call is expected to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Need {
    /// Input tokens that count toward the input limit (estimated before; cache reads excluded
    /// after).
    pub input: u64,
    pub output: u64,
}

impl Need {
    fn of(self, f: Family) -> u64 {
        match f {
            Family::Requests => 1,
            Family::InputTokens => self.input,
            Family::OutputTokens => self.output,
        }
    }

    /// What a call really used, as the provider counts it: cache reads do not count toward
    /// input tokens per minute; cache writes do.
    pub fn used(usage: &Usage) -> Need {
        Need {
            input: usage.input_tokens as u64 + usage.cache_creation_input_tokens as u64,
            output: usage.output_tokens as u64,
        }
    }
}

/// The model class whose limits a model shares, pooled as the provider pools them: the
/// catalog's rate-limit group (an alias and its snapshot are one class; Opus 4.8 … 4.5 share
/// one pool), or the model itself when the catalog does not know it.
pub fn class_of(model: &str) -> String {
    crate::models::find(model)
        .map(|m| m.rate_group.to_owned())
        .unwrap_or_else(|| model.to_owned())
}

/// A request for a reservation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reserve {
    pub job_id: String,
    pub lane: Lane,
    pub model: String,
    pub need: Need,
    pub ttl_ms: i64,
}

/// The answer to a reservation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    pub granted: bool,
    /// When refused: when it will fit.
    pub retry_after_ms: u64,
    /// When refused: what was short (`lane`, `paused`, `requests`, `input_tokens`,
    /// `output_tokens`).
    pub limited_by: Option<String>,
}

/// One limit family as the provider reported it on an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reported {
    pub family: Family,
    pub limit: Option<u64>,
    pub remaining: Option<u64>,
    /// Epoch ms.
    pub reset_at: Option<i64>,
}

/// Reads the `anthropic-ratelimit-*` headers of an answer.
pub fn reported(get: impl Fn(&str) -> Option<String>) -> Vec<Reported> {
    let num = |name: String| get(&name).and_then(|v| v.trim().parse::<u64>().ok());
    Family::ALL
        .iter()
        .filter_map(|&family| {
            let h = family.header();
            let r = Reported {
                family,
                limit: num(format!("{h}-limit")),
                remaining: num(format!("{h}-remaining")),
                reset_at: get(&format!("{h}-reset"))
                    .and_then(|v| crate::clock::parse_rfc3339(v.trim())),
            };
            (r.limit.is_some() || r.remaining.is_some() || r.reset_at.is_some()).then_some(r)
        })
        .collect()
}

/// How a reserved call ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settle {
    pub job_id: String,
    /// The model that answered (after a fallback, maybe not the one reserved).
    pub model: Option<String>,
    /// What the call used, if it was answered; `None` refunds the tokens (an error answer
    /// is not billed). The request itself stays counted.
    pub used: Option<Need>,
    /// The provider's rate-limit headers.
    #[serde(default)]
    pub reported: Vec<Reported>,
    /// A 429: its `retry-after`, in seconds.
    pub rate_limited_for_s: Option<u32>,
}

impl Settle {
    /// No call was made (the job was not claimed, or was answered before): the tokens go back.
    pub fn unused(job_id: &str, model: &str) -> Settle {
        Settle {
            job_id: job_id.to_owned(),
            model: Some(model.to_owned()),
            used: None,
            reported: Vec::new(),
            rate_limited_for_s: None,
        }
    }

    /// After a Messages call for `model`: on an answer, its usage and the model that answered;
    /// on a 429, its `retry-after`; and whatever rate-limit headers came back.
    pub fn after_call(
        job_id: &str,
        model: &str,
        result: &Result<crate::anthropic::Message, crate::retry::CallOutcome>,
        reported: Vec<Reported>,
    ) -> Settle {
        let mut s = Settle::unused(job_id, model);
        s.reported = reported;
        match result {
            Ok(m) => {
                s.used = Some(Need::used(&m.usage));
                s.model = Some(m.model.clone());
            }
            Err(crate::retry::CallOutcome::Http {
                status: 429,
                retry_after_s,
                ..
            }) => s.rate_limited_for_s = *retry_after_s,
            // Answered and billed though unreadable: its usage counts, as far as it can be read.
            Err(crate::retry::CallOutcome::Undecodable { raw, .. }) => {
                s.used = crate::anthropic::Usage::from_raw_answer(raw).map(|u| Need::used(&u));
            }
            Err(_) => {}
        }
        s
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Lease {
    class: String,
    need: Need,
    expires_at: i64,
}

/// The whole budget: what the Durable Object keeps (and persists).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Budget {
    /// The configured starting limits of every class (vars); learned limits replace them.
    configured: Option<Limits>,
    classes: BTreeMap<String, Buckets>,
    leases: BTreeMap<String, Lease>,
    slots: Slots,
    /// Reservations granted and refused, and 429s reported, since the object was made.
    pub granted: u64,
    pub refused: u64,
    pub rate_limited: u64,
}

/// The budget's settings, from vars.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    pub limits: Limits,
    pub lanes: LaneLimits,
    /// Off: token buckets are tracked but never refuse (the documented switch for comparing
    /// with and without the budget); lane slots still hold.
    pub enforce: bool,
}

impl Budget {
    /// Applies the configured limits: a change of configuration resets learned limits.
    fn configure(&mut self, limits: Limits, now: i64) {
        if self.configured != Some(limits) {
            self.configured = Some(limits);
            for b in self.classes.values_mut() {
                *b = Buckets::new(&limits, now);
            }
        }
    }

    fn class(&mut self, class: &str, now: i64) -> &mut Buckets {
        let limits = self.configured.unwrap_or_default();
        let b = self
            .classes
            .entry(class.to_owned())
            .or_insert_with(|| Buckets::new(&limits, now));
        b.refill(now);
        b
    }

    fn expire(&mut self, now: i64) {
        self.leases.retain(|_, l| l.expires_at > now);
    }

    /// Reserves `r.need` for one call on `r.lane`, or says when it will fit.
    pub fn reserve(&mut self, r: &Reserve, s: &Settings, now: i64) -> Grant {
        self.configure(s.limits, now);
        self.expire(now);
        let class = class_of(&r.model);
        if let Some(lease) = self.leases.get_mut(&r.job_id) {
            // A redelivery of a job that holds a reservation: renew, never charge twice.
            lease.expires_at = now + r.ttl_ms;
            self.slots
                .acquire(r.lane, &r.job_id, now, r.ttl_ms, &s.lanes);
            self.granted += 1;
            return Grant {
                granted: true,
                retry_after_ms: 0,
                limited_by: None,
            };
        }
        if s.enforce {
            let b = self.class(&class, now);
            let mut wait = 0;
            let mut short = None;
            if b.paused_until > now {
                wait = (b.paused_until - now) as u64;
                short = Some("paused");
            }
            for f in Family::ALL {
                let w = b.get(f).wait_ms(r.need.of(f));
                if w > wait {
                    wait = w;
                    short = Some(match f {
                        Family::Requests => "requests",
                        Family::InputTokens => "input_tokens",
                        Family::OutputTokens => "output_tokens",
                    });
                }
            }
            if wait > 0 {
                self.refused += 1;
                return Grant {
                    granted: false,
                    retry_after_ms: wait.max(MIN_RETRY_MS),
                    limited_by: short.map(String::from),
                };
            }
        }
        let slot = self
            .slots
            .acquire(r.lane, &r.job_id, now, r.ttl_ms, &s.lanes);
        if !slot.granted {
            self.refused += 1;
            return Grant {
                granted: false,
                retry_after_ms: slot.retry_after_ms.max(MIN_RETRY_MS),
                limited_by: Some("lane".into()),
            };
        }
        let b = self.class(&class, now);
        for f in Family::ALL {
            b.get(f).take(r.need.of(f));
        }
        self.leases.insert(
            r.job_id.clone(),
            Lease {
                class,
                need: r.need,
                expires_at: now + r.ttl_ms,
            },
        );
        self.granted += 1;
        Grant {
            granted: true,
            retry_after_ms: 0,
            limited_by: None,
        }
    }

    /// Settles a reservation: releases its lane slot, replaces the estimate by the real usage,
    /// learns from the provider's headers, and pauses the class after a 429. Settling a job
    /// without a live lease (it lapsed) still learns from the headers but charges nothing:
    /// the lapsed estimate stands for the call.
    pub fn settle(&mut self, s: &Settle, settings: &Settings, now: i64) {
        self.configure(settings.limits, now);
        self.slots.release(&s.job_id);
        let lease = self.leases.remove(&s.job_id);
        let class = s
            .model
            .as_deref()
            .map(class_of)
            .or_else(|| lease.as_ref().map(|l| l.class.clone()));
        let Some(class) = class else {
            return;
        };
        if let Some(lease) = &lease {
            let used = s.used.unwrap_or(Need {
                input: 0,
                output: 0,
            });
            // The estimate was charged to the reserved class; the difference goes there too.
            let b = self.class(&lease.class, now);
            for f in [Family::InputTokens, Family::OutputTokens] {
                let (est, real) = (lease.need.of(f), used.of(f));
                if real > est {
                    b.get(f).take(real - est);
                } else {
                    b.get(f).give(est - real);
                }
            }
        }
        let b = self.class(&class, now);
        for r in &s.reported {
            let bucket = b.get(r.family);
            if let Some(limit) = r.limit {
                bucket.set_limit(limit);
            }
            if let Some(remaining) = r.remaining {
                bucket.cap_remaining(remaining);
            }
        }
        if let Some(after_s) = s.rate_limited_for_s {
            // Until the retry-after, or the latest reset the provider named, whichever is later.
            let mut until = now + after_s as i64 * 1000;
            for r in &s.reported {
                if r.remaining == Some(0) {
                    until = until.max(r.reset_at.unwrap_or(0));
                }
            }
            b.paused_until = b.paused_until.max(until);
            self.rate_limited += 1;
        }
    }

    /// The buckets as they stand at `now`, for `GET /api/budget`.
    pub fn view(&mut self, s: &Settings, now: i64) -> BudgetView {
        self.configure(s.limits, now);
        self.expire(now);
        let classes = self
            .classes
            .iter_mut()
            .map(|(name, b)| {
                b.refill(now);
                let fam = |b: &Bucket| BucketView {
                    limit: b.limit(),
                    remaining: b.remaining(),
                    debt: b.debt(),
                    charged: b.charged_tokens(),
                };
                ClassView {
                    class: name.clone(),
                    requests: fam(&b.requests),
                    input_tokens: fam(&b.input),
                    output_tokens: fam(&b.output),
                    paused_for_ms: (b.paused_until - now).max(0) as u64,
                }
            })
            .collect();
        let lane = |l: Lane, slots: &mut Slots| LaneView {
            in_flight: slots.in_flight(l, now),
            limit: s.lanes.of(l),
        };
        BudgetView {
            enforce: s.enforce,
            configured: s.limits,
            classes,
            high: lane(Lane::High, &mut self.slots),
            bulk: lane(Lane::Bulk, &mut self.slots),
            reservations: self.leases.len() as u64,
            granted: self.granted,
            refused: self.refused,
            rate_limited: self.rate_limited,
        }
    }
}

/// `GET /api/budget`: every class's buckets and the lanes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BudgetView {
    pub enforce: bool,
    pub configured: Limits,
    pub classes: Vec<ClassView>,
    pub high: LaneView,
    pub bulk: LaneView,
    /// Calls reserved and not yet settled.
    pub reservations: u64,
    pub granted: u64,
    pub refused: u64,
    pub rate_limited: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassView {
    pub class: String,
    pub requests: BucketView,
    pub input_tokens: BucketView,
    pub output_tokens: BucketView,
    pub paused_for_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BucketView {
    pub limit: u64,
    pub remaining: u64,
    pub debt: u64,
    /// Net tokens (or requests) charged since the budget was made.
    pub charged: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaneView {
    pub in_flight: u32,
    pub limit: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const M: &str = "claude-sonnet-5-5";

    fn settings(rpm: u64, itpm: u64, otpm: u64) -> Settings {
        Settings {
            limits: Limits { rpm, itpm, otpm },
            lanes: LaneLimits {
                high: 100,
                bulk: 100,
            },
            enforce: true,
        }
    }

    fn reserve(job: &str, input: u64, output: u64) -> Reserve {
        Reserve {
            job_id: job.into(),
            lane: Lane::High,
            model: M.into(),
            need: Need { input, output },
            ttl_ms: 60_000,
        }
    }

    fn settle(job: &str, used: Option<(u64, u64)>) -> Settle {
        Settle {
            job_id: job.into(),
            model: None,
            used: used.map(|(input, output)| Need { input, output }),
            reported: vec![],
            rate_limited_for_s: None,
        }
    }

    #[test]
    fn a_bucket_refills_its_limit_per_minute_exactly() {
        let mut b = Bucket::full(60, 0);
        b.take(60);
        assert_eq!(b.remaining(), 0);
        assert_eq!(b.wait_ms(1), 1_000);
        b.refill(1_000);
        assert_eq!(b.remaining(), 1);
        b.refill(120_000);
        assert_eq!(b.remaining(), 60, "never beyond capacity");
    }

    #[test]
    fn usage_beyond_the_level_is_debt_paid_back_before_anything_new() {
        let mut b = Bucket::full(60, 0);
        b.take(70);
        assert_eq!((b.remaining(), b.debt()), (0, 10));
        assert_eq!(b.wait_ms(1), 11_000);
        b.refill(10_000);
        assert_eq!((b.remaining(), b.debt()), (0, 0));
    }

    #[test]
    fn a_reservation_that_does_not_fit_says_when_it_will() {
        let mut budget = Budget::default();
        let s = settings(60, 1_000, 1_000);
        assert!(budget.reserve(&reserve("a", 900, 10), &s, 0).granted);
        let g = budget.reserve(&reserve("b", 400, 10), &s, 0);
        assert!(!g.granted);
        assert_eq!(g.limited_by.as_deref(), Some("input_tokens"));
        // 300 tokens at 1,000 per minute: 18 s.
        assert_eq!(g.retry_after_ms, 18_000);
        assert!(budget.reserve(&reserve("b", 400, 10), &s, 18_000).granted);
    }

    #[test]
    fn settling_refunds_the_unused_estimate_and_cache_reads_do_not_count() {
        let mut budget = Budget::default();
        let s = settings(60, 10_000, 1_000);
        assert!(budget.reserve(&reserve("a", 2_000, 1_000), &s, 0).granted);
        let usage = Usage {
            input_tokens: 100,
            output_tokens: 200,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 1_900,
            cache_creation: None,
        };
        let mut st = settle("a", None);
        st.used = Some(Need::used(&usage));
        budget.settle(&st, &s, 0);
        let v = budget.view(&s, 0);
        assert_eq!(v.classes[0].input_tokens.remaining, 9_900);
        assert_eq!(v.classes[0].output_tokens.remaining, 800);
        assert_eq!(v.classes[0].requests.remaining, 59);
        assert_eq!(v.reservations, 0);
    }

    #[test]
    fn an_error_answer_refunds_its_tokens_but_not_its_request() {
        let mut budget = Budget::default();
        let s = settings(60, 10_000, 1_000);
        budget.reserve(&reserve("a", 2_000, 1_000), &s, 0);
        budget.settle(&settle("a", None), &s, 0);
        let v = budget.view(&s, 0);
        assert_eq!(v.classes[0].input_tokens.remaining, 10_000);
        assert_eq!(v.classes[0].requests.remaining, 59);
    }

    #[test]
    fn a_redelivered_job_renews_its_reservation_instead_of_paying_twice() {
        let mut budget = Budget::default();
        let s = settings(60, 10_000, 1_000);
        budget.reserve(&reserve("a", 2_000, 100), &s, 0);
        assert!(budget.reserve(&reserve("a", 2_000, 100), &s, 0).granted);
        assert_eq!(budget.view(&s, 0).classes[0].input_tokens.remaining, 8_000);
    }

    #[test]
    fn a_lapsed_lease_frees_its_slot_and_the_tokens_refill() {
        let mut budget = Budget::default();
        let mut s = settings(600, 10_000, 1_000);
        s.lanes = LaneLimits { high: 1, bulk: 1 };
        let mut r = reserve("a", 10_000, 10);
        r.ttl_ms = 5_000;
        assert!(budget.reserve(&r, &s, 0).granted);
        let g = budget.reserve(&reserve("b", 1, 1), &s, 1);
        assert_eq!(g.limited_by.as_deref(), Some("input_tokens"));
        // After a minute the dead worker's tokens are back and its slot is free.
        assert!(budget.reserve(&reserve("b", 1, 1), &s, 60_000).granted);
        assert_eq!(budget.view(&s, 60_000).reservations, 1);
    }

    #[test]
    fn the_lane_limit_holds_alongside_the_tokens() {
        let mut budget = Budget::default();
        let mut s = settings(600, 100_000, 100_000);
        s.lanes = LaneLimits { high: 2, bulk: 1 };
        assert!(budget.reserve(&reserve("a", 1, 1), &s, 0).granted);
        assert!(budget.reserve(&reserve("b", 1, 1), &s, 0).granted);
        let g = budget.reserve(&reserve("c", 1, 1), &s, 0);
        assert_eq!(g.limited_by.as_deref(), Some("lane"));
        budget.settle(&settle("a", Some((1, 1))), &s, 0);
        assert!(budget.reserve(&reserve("c", 1, 1), &s, 0).granted);
    }

    #[test]
    fn the_providers_headers_teach_limits_and_remaining() {
        let mut budget = Budget::default();
        let s = settings(50, 30_000, 8_000);
        budget.reserve(&reserve("a", 100, 100), &s, 0);
        let headers = [
            ("anthropic-ratelimit-requests-limit", "4000"),
            ("anthropic-ratelimit-requests-remaining", "3999"),
            ("anthropic-ratelimit-input-tokens-limit", "2000000"),
            ("anthropic-ratelimit-input-tokens-remaining", "1000"),
            (
                "anthropic-ratelimit-input-tokens-reset",
                "1970-01-01T00:00:01Z",
            ),
        ];
        let get = |k: &str| {
            headers
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        };
        let mut st = settle("a", Some((100, 100)));
        st.reported = reported(get);
        assert_eq!(st.reported.len(), 2);
        assert_eq!(st.reported[1].reset_at, Some(1_000));
        budget.settle(&st, &s, 0);
        let v = budget.view(&s, 0);
        let c = &v.classes[0];
        assert_eq!(c.requests.limit, 4_000);
        // The requests bucket kept our (lower) count of 49 rather than 3,999.
        assert_eq!(c.requests.remaining, 49);
        assert_eq!(c.input_tokens.limit, 2_000_000);
        assert_eq!(c.input_tokens.remaining, 1_000);
        assert_eq!(c.output_tokens.limit, 8_000);
    }

    #[test]
    fn a_429_pauses_the_class_until_the_reset_it_names() {
        let mut budget = Budget::default();
        let s = settings(50, 30_000, 8_000);
        budget.reserve(&reserve("a", 100, 100), &s, 0);
        let mut st = settle("a", None);
        st.rate_limited_for_s = Some(3);
        st.reported = vec![Reported {
            family: Family::OutputTokens,
            limit: Some(8_000),
            remaining: Some(0),
            reset_at: Some(7_500),
        }];
        budget.settle(&st, &s, 0);
        let g = budget.reserve(&reserve("b", 1, 1), &s, 1_000);
        assert_eq!(g.limited_by.as_deref(), Some("paused"));
        assert_eq!(g.retry_after_ms, 6_500);
        // Another model class is not paused.
        let mut other = reserve("c", 1, 1);
        other.model = "claude-haiku-4-5".into();
        assert!(budget.reserve(&other, &s, 1_000).granted);
        assert!(budget.reserve(&reserve("b", 1, 1), &s, 7_500).granted);
    }

    #[test]
    fn switched_off_the_budget_tracks_but_never_refuses_tokens() {
        let mut budget = Budget::default();
        let mut s = settings(1, 10, 10);
        s.enforce = false;
        for i in 0..5 {
            assert!(
                budget
                    .reserve(&reserve(&format!("j{i}"), 100, 100), &s, 0)
                    .granted
            );
        }
        assert_eq!(budget.view(&s, 0).classes[0].requests.debt, 4);
    }

    #[test]
    fn a_settlement_is_read_from_the_calls_outcome() {
        use crate::retry::CallOutcome;
        let limited = Err(CallOutcome::Http {
            status: 429,
            message: "slow down".into(),
            retry_after_s: Some(7),
        });
        let s = Settle::after_call("j", M, &limited, vec![]);
        assert_eq!((s.used, s.rate_limited_for_s), (None, Some(7)));
        let down = Err(CallOutcome::Timeout);
        assert_eq!(
            Settle::after_call("j", M, &down, vec![]),
            Settle::unused("j", M)
        );
        // An unreadable 200 was still billed: what it used counts against the buckets.
        let garbled = Err(CallOutcome::Undecodable {
            reason: "r".into(),
            raw: r#"{"content":{},"usage":{"input_tokens":10,"output_tokens":4}}"#.into(),
        });
        let s = Settle::after_call("j", M, &garbled, vec![]);
        assert_eq!(
            s.used,
            Some(Need {
                input: 10,
                output: 4
            })
        );
    }

    #[test]
    fn dated_models_share_their_class() {
        assert_eq!(
            class_of("claude-haiku-4-5"),
            class_of("claude-haiku-4-5-20251001")
        );
        assert_eq!(class_of("claude-opus-4-8"), class_of("claude-opus-4-5"));
        assert_ne!(class_of("claude-sonnet-5"), class_of(M));
        assert_ne!(class_of("claude-haiku-4-5"), class_of(M));
        assert_eq!(class_of("some-new-model"), "some-new-model");
    }

    /// Operations of the property tests: reserve (job, input, output), settle (job, real input,
    /// real output), or let time pass.
    #[derive(Debug, Clone)]
    enum Op {
        Reserve(u8, u64, u64),
        Settle(u8, u64, u64),
        Wait(i64),
    }

    fn ops() -> impl Strategy<Value = Vec<Op>> {
        let op = prop_oneof![
            (0u8..12, 0u64..3_000, 0u64..800).prop_map(|(j, i, o)| Op::Reserve(j, i, o)),
            (0u8..12, 0u64..3_000, 0u64..900).prop_map(|(j, i, o)| Op::Settle(j, i, o)),
            (0i64..5_000).prop_map(Op::Wait),
        ];
        proptest::collection::vec(op, 1..300)
    }

    proptest! {
        #[test]
        fn no_bucket_ever_goes_negative_or_beyond_its_capacity(ops in ops()) {
            let s = settings(30, 5_000, 2_000);
            let mut budget = Budget::default();
            let mut now = 0;
            for op in ops {
                match op {
                    Op::Reserve(j, i, o) => { budget.reserve(&reserve(&format!("j{j}"), i, o), &s, now); }
                    Op::Settle(j, i, o) => budget.settle(&settle(&format!("j{j}"), Some((i, o))), &s, now),
                    Op::Wait(ms) => now += ms,
                }
                for c in budget.classes.values() {
                    for b in [&c.requests, &c.input, &c.output] {
                        prop_assert!(b.level <= b.capacity());
                        prop_assert!(b.debt == 0 || b.level == 0, "debt only when empty");
                    }
                }
            }
        }

        #[test]
        fn reservations_never_exceed_the_limit_within_a_window(ops in ops()) {
            // Granted reservations, settled at their estimate: over any interval, what was granted
            // is at most one full bucket plus the refill of the interval.
            let s = settings(30, 5_000, 2_000);
            let mut budget = Budget::default();
            let mut now = 0;
            let mut grants: Vec<(i64, u64, u64)> = vec![];
            for op in ops {
                match op {
                    Op::Reserve(j, i, o) => {
                        let job = format!("j{j}");
                        let renewing = budget.leases.get(&job).is_some_and(|l| l.expires_at > now);
                        if budget.reserve(&reserve(&job, i, o), &s, now).granted && !renewing {
                            grants.push((now, i, o));
                        }
                    }
                    Op::Settle(j, _, _) => {
                        let job = format!("j{j}");
                        if let Some(l) = budget.leases.get(&job).cloned() {
                            budget.settle(&settle(&job, Some((l.need.input, l.need.output))), &s, now);
                        }
                    }
                    Op::Wait(ms) => now += ms,
                }
            }
            for (a, &(t0, _, _)) in grants.iter().enumerate() {
                let (mut reqs, mut input, mut output) = (0u64, 0u64, 0u64);
                for &(t, i, o) in &grants[a..] {
                    reqs += 1;
                    input += i.min(5_000);
                    output += o.min(2_000);
                    let window = (t - t0) as u64;
                    prop_assert!(reqs * 60_000 <= 30 * 60_000 + 30 * window);
                    prop_assert!(input * 60_000 <= 5_000 * 60_000 + 5_000 * window);
                    prop_assert!(output * 60_000 <= 2_000 * 60_000 + 2_000 * window);
                }
            }
        }

        #[test]
        fn reconciliation_is_exact(ops in ops()) {
            // Whatever the estimates, once every reservation is settled the buckets have been
            // charged exactly the real usage, and at the same instant they stand exactly where a
            // budget charged the real usage directly would.
            let s = settings(1_000, 1_000_000, 1_000_000);
            let mut budget = Budget::default();
            let mut direct = Budget::default();
            let mut real = (0u64, 0u64, 0u64);
            for op in ops {
                if let Op::Reserve(j, i, o) = op {
                    let job = format!("j{j}");
                    if budget.reserve(&reserve(&job, i, o), &s, 0).granted {
                        let (ri, ro) = (i / 2 + j as u64, o + j as u64);
                        budget.settle(&settle(&job, Some((ri, ro))), &s, 0);
                        direct.reserve(&reserve(&job, ri, ro), &s, 0);
                        direct.settle(&settle(&job, Some((ri, ro))), &s, 0);
                        real.0 += 1;
                        real.1 += ri;
                        real.2 += ro;
                    }
                }
            }
            let (a, b) = (budget.view(&s, 0), direct.view(&s, 0));
            prop_assert_eq!(&a.classes, &b.classes);
            if let Some(c) = a.classes.first() {
                prop_assert_eq!((c.requests.charged, c.input_tokens.charged, c.output_tokens.charged), real);
            }
        }
    }
}
