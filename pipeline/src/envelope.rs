//! The production envelope: what one invocation may ask of the platform on Cloudflare's network,
//! and the plan every loop that works per item asks how much it may do in this invocation.
//!
//! `wrangler dev` enforces none of these limits (workers-sdk #4359), so a loop that is fine
//! locally can fail at the first real volume. Here the limits are data ([`Limits::of`]), the
//! work is costed per item ([`Cost`]), and [`shares`] divides an invocation's room between its
//! loops: what does not fit is left for the next run, never cut mid-item.
//!
//! Figures read on 2026-12-04 (stored copies of the official pages; the Workers limits page
//! "Last updated Jul 28, 2026" and its later versions):
//! - Workers, developers.cloudflare.com/workers/platform/limits/: subrequests per invocation —
//!   Free 50, plus 1,000 to Cloudflare services; Paid 10,000 by default, up to 10,000,000 with
//!   `[limits] subrequests` (developers.cloudflare.com/workers/wrangler/configuration/, "the
//!   free account maximum is 50 and the paid account maximum is 10,000,000"; raised from 1,000
//!   on 2026-02-11, changelog "Workers are no longer limited to 1000 subrequests"). "A
//!   subrequest is any request a Worker makes using the Fetch API or to Cloudflare services like
//!   R2, KV, or D1." Queue sends and Durable Object calls are not named on today's page (an
//!   older version named Durable Objects); they are counted here, the safe reading.
//! - CPU: Free 10 ms; Paid 30 s by default, up to 300,000 ms with `[limits] cpu_ms`; a cron
//!   with an interval under an hour 30 s. Memory: 128 MB per isolate, JS heap and wasm
//!   together. Simultaneous open connections: 6 per invocation waiting for response headers (a
//!   seventh waits; since 2026-04-09 a connection stops counting once its headers arrive).
//!   Wall time: a cron run, a queue consumer and a Durable Object alarm 15 minutes; an HTTP
//!   request or a Durable Object request none while the client stays connected. Startup: 1 s to
//!   parse and run the global scope (400 ms before 2025-10-10).
//! - D1, developers.cloudflare.com/d1/platform/limits/: queries per Worker invocation 1,000
//!   (Paid) / 50 (Free). The Workers page gives Cloudflare services 10,000 / 1,000; the two
//!   pages disagree, and the stricter D1 figure is used. One query inside `db.batch()` counts
//!   as one (the page applies the per-query limits "to each individual statement contained
//!   within a batch statement"; whether a batch counts once or per statement is not said —
//!   counted per statement here).

use std::fmt;

/// The Workers plan of the account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    Free,
    Paid,
}

/// What started an invocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// An HTTP request.
    Fetch,
    /// A queue consumer's batch.
    Queue,
    /// A cron trigger's run (every minute: under an hour's interval).
    Cron,
    /// A request to the Durable Object.
    DurableObject,
}

/// What `wrangler.toml` sets under `[limits]` (absent: the plan's default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Configured {
    pub subrequests: Option<u32>,
    pub cpu_ms: Option<u32>,
}

/// One invocation's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Every subrequest: fetches and calls to Cloudflare services.
    pub subrequests: u32,
    /// Fetches to the Internet (the Anthropic API, webhooks).
    pub fetches: u32,
    /// D1 queries.
    pub d1_queries: u32,
    /// Connections waiting for response headers at once.
    pub connections: u32,
    /// CPU time.
    pub cpu_ms: u32,
    /// Wall time; `None`: no limit while the caller stays connected.
    pub wall_ms: Option<u64>,
    /// Memory of the isolate (JS heap and wasm).
    pub memory_bytes: u64,
}

/// Startup: the global scope's parse and run (both plans).
pub const STARTUP_CPU_MS: u32 = 1_000;

const MB: u64 = 1_000_000;
const MINUTE_MS: u64 = 60_000;

/// A `[limits]` figure the plan does not allow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unallowed {
    pub key: &'static str,
    pub value: u32,
    pub max: u32,
}

impl fmt::Display for Unallowed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[limits] {} = {} is more than the plan allows ({})",
            self.key, self.value, self.max
        )
    }
}

impl Limits {
    /// The limits of an invocation started by `entry` on `plan`, with `configured`'s figures.
    pub fn of(plan: Plan, entry: Entry, configured: Configured) -> Result<Limits, Unallowed> {
        let (max_sub, default_sub, max_cpu, default_cpu) = match plan {
            Plan::Free => (50, 50, 10, 10),
            Plan::Paid => (10_000_000, 10_000, 300_000, 30_000),
        };
        let allowed = |key, value: Option<u32>, max, default| match value {
            Some(v) if v > max => Err(Unallowed { key, value: v, max }),
            Some(v) => Ok(v),
            None => Ok(default),
        };
        let external = allowed("subrequests", configured.subrequests, max_sub, default_sub)?;
        let cpu_ms = allowed("cpu_ms", configured.cpu_ms, max_cpu, default_cpu)?;
        let (subrequests, d1_queries) = match plan {
            // 50 to the Internet, and 1,000 more to Cloudflare services.
            Plan::Free => (external + 1_000, 50),
            Plan::Paid => (external, 1_000),
        };
        let cpu_ms = match (plan, entry) {
            (Plan::Paid, Entry::Cron) => cpu_ms.min(30_000),
            _ => cpu_ms,
        };
        let wall_ms = match entry {
            Entry::Queue | Entry::Cron => Some(15 * MINUTE_MS),
            Entry::Fetch | Entry::DurableObject => None,
        };
        Ok(Limits {
            subrequests,
            fetches: external,
            d1_queries,
            connections: 6,
            cpu_ms,
            wall_ms,
            memory_bytes: 128 * MB,
        })
    }

    /// The room these limits give, in [`Cost`]'s terms.
    pub fn room(&self) -> Room {
        Room {
            subrequests: self.subrequests as u64,
            fetches: self.fetches as u64,
            d1: self.d1_queries as u64,
        }
    }
}

/// What one item of work (or an invocation's own bookkeeping) asks of the platform.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cost {
    /// Fetches to the Internet.
    pub fetches: u32,
    /// D1 queries (statements).
    pub d1: u32,
    /// R2 operations.
    pub r2: u32,
    /// Queue sends.
    pub queue: u32,
    /// Durable Object requests.
    pub durable_object: u32,
}

impl Cost {
    /// Every subrequest it makes.
    pub fn subrequests(&self) -> u64 {
        [
            self.fetches,
            self.d1,
            self.r2,
            self.queue,
            self.durable_object,
        ]
        .iter()
        .map(|&n| n as u64)
        .sum()
    }

    /// `n` items of it.
    pub fn times(&self, n: u64) -> Room {
        Room {
            subrequests: self.subrequests() * n,
            fetches: self.fetches as u64 * n,
            d1: self.d1 as u64 * n,
        }
    }
}

impl std::ops::Add for Cost {
    type Output = Cost;
    fn add(self, o: Cost) -> Cost {
        Cost {
            fetches: self.fetches + o.fetches,
            d1: self.d1 + o.d1,
            r2: self.r2 + o.r2,
            queue: self.queue + o.queue,
            durable_object: self.durable_object + o.durable_object,
        }
    }
}

/// Room left in an invocation (or what some work takes of it), per limited figure.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Room {
    pub subrequests: u64,
    pub fetches: u64,
    pub d1: u64,
}

impl std::ops::Add for Room {
    type Output = Room;
    fn add(self, o: Room) -> Room {
        Room {
            subrequests: self.subrequests + o.subrequests,
            fetches: self.fetches + o.fetches,
            d1: self.d1 + o.d1,
        }
    }
}

impl Room {
    /// What is left after `used`; `None` if `used` does not fit.
    pub fn after(&self, used: Room) -> Option<Room> {
        Some(Room {
            subrequests: self.subrequests.checked_sub(used.subrequests)?,
            fetches: self.fetches.checked_sub(used.fetches)?,
            d1: self.d1.checked_sub(used.d1)?,
        })
    }

    /// How many items of `cost` fit (`u64::MAX` for a cost of nothing).
    pub fn fits(&self, cost: &Cost) -> u64 {
        let per = |room: u64, each: u64| room.checked_div(each).unwrap_or(u64::MAX);
        let one = cost.times(1);
        per(self.subrequests, one.subrequests)
            .min(per(self.fetches, one.fetches))
            .min(per(self.d1, one.d1))
    }

    /// This room divided in `k` equal parts (rounded down).
    fn part(&self, k: u64) -> Room {
        Room {
            subrequests: self.subrequests / k,
            fetches: self.fetches / k,
            d1: self.d1 / k,
        }
    }
}

/// One loop of an invocation: what each item costs and how many wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Work {
    pub per_item: Cost,
    pub backlog: u64,
}

/// A loop's item that cannot fit an invocation even alone (with the bookkeeping beside it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Misfit {
    /// Which loop, by its index in the list checked.
    pub work: usize,
    /// What its item (and everything a run must fit beside it) needs.
    pub needs: Room,
    pub room: Room,
}

/// Whether a run can always do one item of every loop beside its own `reserve`: the check a
/// configuration must pass at start (a flush size whose one flush passes a limit cannot run).
pub fn check(limits: &Limits, reserve: Cost, per_item: &[Cost]) -> Result<(), Misfit> {
    let room = limits.room();
    let needs = per_item.iter().fold(reserve, |sum, c| sum + *c).times(1);
    match room.after(needs) {
        Some(_) => Ok(()),
        None => {
            // The first loop that does not fit even alone beside the reserve, else the last.
            let alone = |c: &Cost| room.after((reserve + *c).times(1)).is_none();
            let work = per_item
                .iter()
                .position(alone)
                .unwrap_or(per_item.len().saturating_sub(1));
            Err(Misfit { work, needs, room })
        }
    }
}

/// How many items each loop may do in this invocation, in the order given: within the limits
/// after `reserve` (the run's own bookkeeping), never more than a loop's backlog, and at least
/// one item for every loop with a backlog whenever [`check`] passes — so every backlog drains.
/// First one item each, then equal parts of what is left, then what is still left, in order.
pub fn shares(limits: &Limits, reserve: Cost, work: &[Work]) -> Vec<u64> {
    let mut shares = vec![0u64; work.len()];
    let Some(mut room) = limits.room().after(reserve.times(1)) else {
        return shares;
    };
    let give = |i: usize, n: u64, room: &mut Room, shares: &mut [u64]| {
        let n = n
            .min(work[i].backlog - shares[i])
            .min(room.fits(&work[i].per_item));
        if let Some(left) = room.after(work[i].per_item.times(n)) {
            *room = left;
            shares[i] += n;
        }
    };
    for i in 0..work.len() {
        give(i, 1, &mut room, &mut shares);
    }
    let waiting = (0..work.len())
        .filter(|&i| work[i].backlog > shares[i])
        .count() as u64;
    if waiting > 0 {
        let part = room.part(waiting);
        for i in 0..work.len() {
            if work[i].backlog > shares[i] {
                let n = part.fits(&work[i].per_item);
                give(i, n, &mut room, &mut shares);
            }
        }
    }
    for i in 0..work.len() {
        give(i, u64::MAX, &mut room, &mut shares);
    }
    shares
}

#[cfg(test)]
mod tests;
