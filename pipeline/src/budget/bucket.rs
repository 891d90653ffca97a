//! One continuously refilling bucket, the three of a model class, the provider's limits, and
//! what a call needs of them — in exact integer units.

use serde::{Deserialize, Serialize};

use crate::anthropic::Usage;

/// Units of a bucket per token (or request): one minute in milliseconds.
pub const UNITS: u64 = 60_000;

/// A refused reservation is never told to come back sooner than this.
pub const MIN_RETRY_MS: u64 = 50;

/// One continuously refilling bucket: capacity `limit`, refilled at `limit` per minute.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bucket {
    /// Per minute; also the capacity.
    pub(super) limit: u64,
    /// Available, in units (1/60,000 token).
    pub(super) level: u64,
    /// Charged beyond what was available; the refill pays it back first.
    pub(super) debt: u64,
    /// When `level` was last brought up to date (epoch ms).
    pub(super) updated_at: i64,
    /// Net units charged since the bucket was made (reservations + reconciliations − refunds).
    pub(super) charged: u64,
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

    pub(super) fn capacity(&self) -> u64 {
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Limits {
    pub rpm: u64,
    pub itpm: u64,
    pub otpm: u64,
}

impl Default for Limits {
    /// The lowest figures the rate-limits page ever published (its old first tier). New
    /// organizations "may start in the Evaluation tier, with limits below the standard tiers"
    /// (platform.claude.com/docs/en/api/rate-limits, read 2026-12-06), unpublished, so the Start
    /// table would start too high; the headers of the first answer teach the real ones.
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

    pub(super) fn refill(&mut self, now: i64) {
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
    pub(super) fn of(self, f: Family) -> u64 {
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
