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
//!
//! # Layout
//! - `bucket`: buckets, limits, families and needs (the exact arithmetic).
//! - `wire`: reservations, grants, reported limits, settlements.
//! - this file: the budget itself — classes, leases, lane slots — and its views.

mod bucket;
mod routes;
mod wire;

pub use bucket::*;
pub use routes::{BreakerView, Breakers, Tripped};
pub use wire::*;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::lanes::{LaneLimits, Slots};
use crate::models::providers::Provider;
use crate::status::Lane;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Lease {
    class: String,
    need: Need,
    expires_at: i64,
    /// The route the call was granted on.
    #[serde(default)]
    route: Provider,
}

/// The whole budget: what the Durable Object keeps (and persists).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Budget {
    /// The configured starting limits of every class (vars); learned limits replace them.
    configured: Option<Limits>,
    classes: BTreeMap<String, Buckets>,
    leases: BTreeMap<String, Lease>,
    slots: Slots,
    /// Tokens granted per user over the last minute, for fair shares ([`crate::fair`]).
    #[serde(default)]
    recent: BTreeMap<String, crate::fair::Recent>,
    /// A circuit breaker per route and model (`{route}/{model}`), fed by every settlement.
    #[serde(default)]
    breakers: Breakers,
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
    /// When a route's breaker opens and how it recovers.
    pub breaker: crate::breaker::Policy,
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

    /// Reserves `r.need` for one call on `r.lane`, on the first of `r.routes` whose breaker
    /// lets it through, or says when it will fit.
    pub fn reserve(&mut self, r: &Reserve, s: &Settings, now: i64) -> Grant {
        self.configure(s.limits, now);
        self.expire(now);
        if let Some(lease) = self.leases.get_mut(&r.job_id) {
            // A redelivery of a job that holds a reservation: renew, never charge twice.
            lease.expires_at = now + r.ttl_ms;
            let route = lease.route;
            self.slots
                .acquire(r.lane, &r.job_id, now, r.ttl_ms, &s.lanes);
            self.granted += 1;
            return Grant::on(route, false);
        }
        let (route, admit) = match self.breakers.pick((&r.routes, &r.model), &s.breaker, now) {
            Ok(picked) => picked,
            Err(wait_ms) => {
                self.refused += 1;
                return Grant::refused(wait_ms.max(MIN_RETRY_MS), "breaker");
            }
        };
        let class = class_on(route, &r.model);
        if s.enforce {
            if let Some(refusal) = self.short(&class, r, now) {
                self.refused += 1;
                return refusal;
            }
        }
        let slot = self
            .slots
            .acquire(r.lane, &r.job_id, now, r.ttl_ms, &s.lanes);
        if !slot.granted {
            self.refused += 1;
            return Grant::refused(slot.retry_after_ms.max(MIN_RETRY_MS), "lane");
        }
        let b = self.class(&class, now);
        for f in Family::ALL {
            b.get(f).take(r.need.of(f));
        }
        let probe = self
            .breakers
            .let_through((route, &r.model), admit, now, &s.breaker);
        self.leases.insert(
            r.job_id.clone(),
            Lease {
                class,
                need: r.need,
                expires_at: now + r.ttl_ms,
                route,
            },
        );
        if let Some(user) = &r.user {
            let tokens = r.need.input + r.need.output;
            self.recent
                .entry(user.clone())
                .or_default()
                .add(tokens, now);
        }
        self.granted += 1;
        Grant::on(route, probe)
    }

    /// The refusal of a reservation `class` cannot hold now (paused after a 429, or short of
    /// requests or tokens), if it cannot.
    fn short(&mut self, class: &str, r: &Reserve, now: i64) -> Option<Grant> {
        let b = self.class(class, now);
        let mut wait = 0;
        let mut short = "";
        if b.paused_until > now {
            wait = (b.paused_until - now) as u64;
            short = "paused";
        }
        for f in Family::ALL {
            let w = b.get(f).wait_ms(r.need.of(f));
            if w > wait {
                wait = w;
                short = match f {
                    Family::Requests => "requests",
                    Family::InputTokens => "input_tokens",
                    Family::OutputTokens => "output_tokens",
                };
            }
        }
        (wait > 0).then(|| Grant::refused(wait.max(MIN_RETRY_MS), short))
    }

    /// Settles a reservation: releases its lane slot, replaces the estimate by the real usage,
    /// learns from the provider's headers, and pauses the class after a 429. Settling a job
    /// without a live lease (it lapsed) still learns from the headers but charges nothing:
    /// the lapsed estimate stands for the call.
    ///
    /// The call's signal goes to its route's breaker; answers what that changed.
    pub fn settle(&mut self, s: &Settle, settings: &Settings, now: i64) -> Option<Tripped> {
        self.configure(settings.limits, now);
        self.slots.release(&s.job_id, now);
        let tripped = self.breakers.record(
            (s.route, s.model.as_deref()),
            s.signal,
            &settings.breaker,
            now,
        );
        let lease = self.leases.remove(&s.job_id);
        let class = s
            .model
            .as_deref()
            .map(|m| class_on(s.route, m))
            .or_else(|| lease.as_ref().map(|l| l.class.clone()));
        let Some(class) = class else {
            return tripped;
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
        tripped
    }

    /// The tokens each of `users` was granted over the last minute (0 for one never seen);
    /// users whose window emptied are forgotten.
    pub fn usage(&mut self, users: &[String], now: i64) -> BTreeMap<String, u64> {
        self.recent.retain(|_, r| r.total(now) > 0);
        users
            .iter()
            .map(|u| {
                let t = self.recent.get_mut(u).map_or(0, |r| r.total(now));
                (u.clone(), t)
            })
            .collect()
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
            breakers: self.breakers.views(&s.breaker, now),
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
    /// Each route's breaker per model, for every pair that has seen a call.
    #[serde(default)]
    pub breakers: Vec<BreakerView>,
    pub granted: u64,
    pub refused: u64,
    pub rate_limited: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ClassView {
    pub class: String,
    pub requests: BucketView,
    pub input_tokens: BucketView,
    pub output_tokens: BucketView,
    pub paused_for_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BucketView {
    pub limit: u64,
    pub remaining: u64,
    pub debt: u64,
    /// Net tokens (or requests) charged since the budget was made.
    pub charged: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LaneView {
    pub in_flight: u32,
    pub limit: u32,
}

#[cfg(test)]
mod tests;
