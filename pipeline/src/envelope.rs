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
//!   pages disagree, and the stricter D1 figure is used. The row reads "Queries per Worker
//!   invocation (read subrequest limits)": the limit is on requests to D1, and one `db.batch()`
//!   is one request (the page applies the per-query limits — size, duration, bound
//!   parameters — "to each individual statement contained within a batch statement", and is
//!   silent on whether a batch counts once). So [`Used::d1_queries`] counts calls to D1, and
//!   the statements inside them are counted beside it (the Worker's meter), to show the
//!   headroom if a batch were ever counted per statement.

use std::fmt;

use serde::{Deserialize, Serialize};

pub mod headroom;

/// The Workers plan of the account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    Free,
    Paid,
}

/// What started an invocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
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

    /// The room these limits give the plans, in [`Cost`]'s terms: [`PLAN_PCT`] of each limit.
    /// The rest is the margin for what the costs do not count exactly (a retried D1 call, a
    /// lookup the code adds later): plans aim at 80%, and only passing 100% fails.
    pub fn room(&self) -> Room {
        let planned = |limit: u32| limit as u64 * PLAN_PCT / 100;
        Room {
            subrequests: planned(self.subrequests),
            fetches: planned(self.fetches),
            d1: planned(self.d1_queries),
        }
    }

    /// Fetches a plan lets wait for their headers at once: [`PLAN_PCT`] of the limit (4 of
    /// production's 6), at least one. A seventh would only wait in production; keeping two
    /// free leaves room for what the Worker cannot see (the runtime's own connections).
    pub fn planned_connections(&self) -> u32 {
        (self.connections as u64 * PLAN_PCT / 100).max(1) as u32
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

/// What one loop of an invocation may still spend: its share, taken item by item at each
/// item's own cost, all or nothing — what does not fit is left for the next run, never cut
/// mid-item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allowance {
    left: Room,
}

impl Allowance {
    pub fn new(room: Room) -> Allowance {
        Allowance { left: room }
    }

    /// Takes one item of `cost` if it fits; answers whether it did.
    pub fn take(&mut self, cost: &Cost) -> bool {
        self.take_up_to(cost, 1) == 1
    }

    /// Takes as many items of `cost` as fit, at most `n`; answers how many.
    pub fn take_up_to(&mut self, cost: &Cost, n: u64) -> u64 {
        let k = self.left.fits(cost).min(n);
        if let Some(left) = self.left.after(cost.times(k)) {
            self.left = left;
        }
        k
    }

    /// How many items of `cost` would fit.
    pub fn fits(&self, cost: &Cost) -> u64 {
        self.left.fits(cost)
    }

    pub fn left(&self) -> Room {
        self.left
    }
}

/// Divides an invocation's room after `reserve` (its own bookkeeping) between loops that run
/// side by side, in proportion to their weights; a loop of weight 0 (no work this run) gets
/// nothing, so its part goes to the others. The parts add up to at most the room.
pub fn split(limits: &Limits, reserve: Cost, weights: &[u64]) -> Vec<Room> {
    split_room(limits.room(), reserve, weights)
}

/// [`split`] of what is left of an invocation's room (`room`: its limits less what it has used).
pub fn split_room(room: Room, reserve: Cost, weights: &[u64]) -> Vec<Room> {
    let room = room.after(reserve.times(1)).unwrap_or_default();
    let total: u64 = weights.iter().sum();
    let part = |whole: u64, w: u64| whole.checked_mul(w).map_or(0, |x| x / total.max(1));
    weights
        .iter()
        .map(|&w| Room {
            subrequests: part(room.subrequests, w),
            fetches: part(room.fetches, w),
            d1: part(room.d1, w),
        })
        .collect()
}

/// A `BATCH_FLUSH_SIZE` whose one flush of prompt jobs cannot fit a cron run's half of its
/// limits (the half a flush gets beside open batches): refused at start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlushTooLarge {
    pub size: u32,
    /// The largest size that fits.
    pub max: u32,
}

impl fmt::Display for FlushTooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.max == 0 {
            return write!(
                f,
                "BATCH_FLUSH_SIZE = {}: no flush fits a cron run on these limits — its own \
                 bookkeeping at its largest needs {} D1 queries and {} subrequests (the Free \
                 plan allows 50 D1 queries); use the Paid plan or raise [limits] subrequests",
                self.size,
                costs::CRON_RESERVE.d1,
                costs::CRON_RESERVE.subrequests()
            );
        }
        write!(
            f,
            "BATCH_FLUSH_SIZE = {}: one flush of that many prompt jobs passes a cron run's \
             share of the per-invocation limits (at most {} fit); set it to {} or less",
            self.size, self.max, self.max
        )
    }
}

/// The largest flush (in prompt jobs, one R2 read each) that fits the flush's half of a cron
/// run's room after its bookkeeping.
pub fn max_flush_size(cron: &Limits) -> u32 {
    let half = split(cron, costs::CRON_RESERVE, &[1, 1])[0];
    let rows = half
        .after(costs::FLUSH.times(1))
        .map_or(0, |left| left.fits(&costs::FLUSH_PROMPT_ROW));
    rows.min(u32::MAX as u64) as u32
}

/// Whether a flush of `size` jobs fits a cron run on these limits ([`max_flush_size`]).
pub fn check_flush_size(cron: &Limits, size: u32) -> Result<(), FlushTooLarge> {
    let max = max_flush_size(cron);
    match size <= max {
        true => Ok(()),
        false => Err(FlushTooLarge { size, max }),
    }
}

/// Which of a queue batch's sync calls run in this invocation, in delivery order: each whose
/// cost still fits `room` (what is left after the invocation's own reserve) runs, the others
/// go back to their lane for a later invocation. The first always runs, so a lane drains even
/// where one call alone passes the room (production then refuses it at the limit, as it would).
pub fn calls_that_fit(room: Room, costs: &[Cost]) -> Vec<bool> {
    let mut left = Some(room);
    costs
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let after = left.and_then(|l| l.after(c.times(1)));
            match (i, after) {
                (_, Some(rest)) => {
                    left = Some(rest);
                    true
                }
                (0, None) => {
                    left = None;
                    true
                }
                (_, None) => false,
            }
        })
        .collect()
}

/// What each item of the Worker's per-item loops costs, counted from the code that carries it
/// out (`worker/src/message_batches`, `worker/src/cron.rs`); the envelope suite checks the
/// meter's counts against them.
pub mod costs {
    use super::Cost;

    const fn cost(fetches: u32, d1: u32, r2: u32, queue: u32, durable_object: u32) -> Cost {
        Cost {
            fetches,
            d1,
            r2,
            queue,
            durable_object,
        }
    }

    /// A flush's own calls: the waiting count, the claim, the sizes and unclaims in one
    /// `batch()`, the create call, and the mark (or the release, or the note).
    pub const FLUSH: Cost = cost(1, 4, 0, 0, 0);
    /// A prompt job's request body, read from R2.
    pub const FLUSH_PROMPT_ROW: Cost = cost(0, 0, 1, 0, 0);
    /// A PDF job without a Files API file: the PDF read from R2, uploaded, the file recorded —
    /// and, should the upload fail, read again for base64.
    pub const FLUSH_PDF_UPLOAD_ROW: Cost = cost(1, 1, 2, 0, 0);
    /// A PDF sent as base64 (Files API off).
    pub const FLUSH_PDF_BASE64_ROW: Cost = cost(0, 0, 1, 0, 0);
    /// A feedback job, or a PDF whose file is known: built from its row alone.
    pub const FLUSH_ROW_FROM_ITS_ROW: Cost = cost(0, 0, 0, 0, 0);

    /// One open batch looked at: retrieved; once ended, its times, the results' cursor, the
    /// results fetch, the rescued lines, and the missing-batch note (ending what its results
    /// did not name is [`END_SLICE`] per slice).
    pub const BATCH_CHECK: Cost = cost(2, 6, 0, 0, 0);
    /// A chunk of 100 result lines: the rows they name, up to 100 answers written to R2, the
    /// transaction, the deadline router's estimate, and one send of the jobs moved to sync.
    pub const RESULT_CHUNK: Cost = cost(0, 3, 100, 1, 0);
    /// One dead letter announced to the webhook: its row read, and the post.
    pub const DEAD_LETTER_ANNOUNCED: Cost = cost(1, 1, 0, 0, 0);
    /// A slice of the jobs an ended batch's results did not name: two reads and a write.
    pub const END_SLICE: Cost = cost(0, 3, 0, 0, 0);

    /// Everything a cron run does beside the flushes and the poll, at its largest: the first
    /// round trip and the budget object's state, the recovery's ten pages of batches and its
    /// writes, the held jobs' release, the webhooks (20 deliveries, each a read, a post and a
    /// write), the deadline rescues, the daily reconciliation, the re-enqueues, retention's
    /// deletes, the final transaction, and the DLQ alert.
    pub const CRON_RESERVE: Cost = cost(60, 120, 20, 4, 2);
    /// An HTTP request or a queue batch that runs a flush or a poll: its own reads and writes.
    pub const CALLER_RESERVE: Cost = cost(10, 40, 10, 10, 5);

    /// One sync call at most, beside its PDF ([`sync_pdf`]): `count_tokens`, the Messages call
    /// and the webhook; the claim, the attempt, the settlement and the status writes; its
    /// request body, the stored-answer check and the answer in R2; one send (a deferral, or the
    /// move down a fallback chain); the reservation — asked up to
    /// [`crate::delivery::MAX_INLINE_ASKS`] times — and the settlement at the budget object.
    /// (Measured 2026-12-06 in the `jobs` suite: three calls and five deferrals of one queue
    /// batch made 3 fetches, 12 D1 queries, 14 R2 operations, 5 sends and 12 object requests.)
    pub const SYNC_CALL: Cost = cost(3, 6, 5, 1, 2 + crate::delivery::MAX_INLINE_ASKS);

    /// What a sync call's PDF adds: inline (the Files API off or failed), the object streamed
    /// from R2 twice (`count_tokens`, then the call); with the Files API and no file yet, the
    /// upload (read from R2, posted, the file recorded); with its file known, nothing.
    pub const fn sync_pdf(files_api: bool, has_file: bool) -> Cost {
        match (files_api, has_file) {
            (true, true) => cost(0, 0, 0, 0, 0),
            // An upload that fails falls back to inline: both, at most.
            (true, false) => cost(1, 1, 3, 0, 0),
            (false, _) => cost(0, 0, 2, 0, 0),
        }
    }
}

/// The workers plan a var names (`WORKERS_PLAN`: `paid`, the default, or `free`).
impl Plan {
    pub fn from_var(v: Option<&str>) -> Result<Plan, String> {
        match v.map(str::trim) {
            None | Some("") => Ok(Plan::Paid),
            Some(v) if v.eq_ignore_ascii_case("paid") => Ok(Plan::Paid),
            Some(v) if v.eq_ignore_ascii_case("free") => Ok(Plan::Free),
            Some(v) => Err(format!("WORKERS_PLAN must be paid or free, not {v:?}")),
        }
    }
}

impl Entry {
    pub fn as_str(&self) -> &'static str {
        match self {
            Entry::Fetch => "fetch",
            Entry::Queue => "queue",
            Entry::Cron => "cron",
            Entry::DurableObject => "durable_object",
        }
    }
}

/// A figure an invocation's limits cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    Subrequests,
    Fetches,
    D1Queries,
    Connections,
    WallMs,
    MemoryBytes,
}

impl Figure {
    pub const ALL: [Figure; 6] = [
        Figure::Subrequests,
        Figure::Fetches,
        Figure::D1Queries,
        Figure::Connections,
        Figure::WallMs,
        Figure::MemoryBytes,
    ];

    pub fn as_str(&self) -> &'static str {
        match self {
            Figure::Subrequests => "subrequests",
            Figure::Fetches => "fetches",
            Figure::D1Queries => "d1_queries",
            Figure::Connections => "connections",
            Figure::WallMs => "wall_ms",
            Figure::MemoryBytes => "memory_bytes",
        }
    }
}

/// What one invocation has asked of the platform so far, in the figures its limits cap.
/// `connections` is the peak of fetches waiting for their answer's headers at once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Used {
    pub subrequests: u64,
    pub fetches: u64,
    pub d1_queries: u64,
    pub connections: u64,
    pub wall_ms: u64,
    pub memory_bytes: u64,
}

/// A limit an invocation passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Passed {
    pub figure: Figure,
    pub used: u64,
    pub limit: u64,
}

impl fmt::Display for Passed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} of {} allowed",
            self.figure.as_str(),
            self.used,
            self.limit
        )
    }
}

impl Used {
    pub fn get(&self, figure: Figure) -> u64 {
        match figure {
            Figure::Subrequests => self.subrequests,
            Figure::Fetches => self.fetches,
            Figure::D1Queries => self.d1_queries,
            Figure::Connections => self.connections,
            Figure::WallMs => self.wall_ms,
            Figure::MemoryBytes => self.memory_bytes,
        }
    }
}

impl Limits {
    /// The limit on `figure`; `None` when there is none (an HTTP request's wall time).
    pub fn get(&self, figure: Figure) -> Option<u64> {
        match figure {
            Figure::Subrequests => Some(self.subrequests as u64),
            Figure::Fetches => Some(self.fetches as u64),
            Figure::D1Queries => Some(self.d1_queries as u64),
            Figure::Connections => Some(self.connections as u64),
            Figure::WallMs => self.wall_ms,
            Figure::MemoryBytes => Some(self.memory_bytes),
        }
    }

    /// The first limit `used` passes, if any. Connections over the limit are not an error in
    /// production (a seventh waits), but the adapter's semaphore must keep them at six, so
    /// passing it is reported like the rest.
    pub fn passed(&self, used: &Used) -> Option<Passed> {
        Figure::ALL.iter().find_map(|&figure| {
            let limit = self.get(figure)?;
            let used = used.get(figure);
            (used > limit).then_some(Passed {
                figure,
                used,
                limit,
            })
        })
    }

    /// Each capped figure's use as a share of its limit, in per cent (the operator's headroom).
    pub fn shares(&self, used: &Used) -> Vec<(Figure, f64)> {
        Figure::ALL
            .iter()
            .filter_map(|&figure| {
                let limit = self.get(figure)?;
                Some((
                    figure,
                    100.0 * used.get(figure) as f64 / limit.max(1) as f64,
                ))
            })
            .collect()
    }
}

/// How long a cron run starts new work for (flushes, batches, result chunks): the cron fires
/// every minute, and a run still working when the next one starts makes them pile up. A run
/// ends by this plus one item's worst case (its call timeout), far inside the 15-minute limit.
pub const CRON_PLAN_MS: u64 = 45_000;

/// The longest a cron run's call to the API may wait for its answer (a batch create, a
/// retrieve, a results stream's headers, a list, the Admin API's cost report): a run starts
/// work only inside [`CRON_PLAN_MS`], so each call it starts ends inside the minute, and runs do
/// not pile up. A batch create cut short is an outcome unknown, which recovery resolves by
/// looking for the batch (`pipeline::batching::recover`); the queue consumers' calls keep the
/// configured timeout (their limit is 15 minutes).
pub const CRON_CALL_MS: u64 = 15_000;

/// The timeout of an API call made by an invocation of `entry`, from the configured one.
pub fn call_timeout_ms(entry: Entry, configured_ms: u64) -> u64 {
    match entry {
        Entry::Cron => configured_ms.min(CRON_CALL_MS),
        Entry::Fetch | Entry::Queue | Entry::DurableObject => configured_ms,
    }
}

/// Whether an invocation of `entry`, `elapsed_ms` in, may start another item of work: a cron
/// run only inside [`CRON_PLAN_MS`]; the others are bounded by their shares and [`call_fits`].
pub fn may_start(entry: Entry, elapsed_ms: u64) -> bool {
    entry != Entry::Cron || elapsed_ms < CRON_PLAN_MS
}

/// The share of each limit, in per cent, an invocation's plans may use: subrequests, D1
/// queries and fetches ([`Limits::room`]), connections ([`Limits::planned_connections`]) and
/// the wall time its calls are planned to end in ([`call_fits`]). Issue 32's goal: every
/// entry point's peak at or under it in the `envelope` suite.
pub const PLAN_PCT: u64 = 80;

/// Whether a call that may last up to `call_ms` may start `elapsed_ms` into an invocation whose
/// wall time is capped at `limit_ms` (`None`: not capped): only if it ends inside
/// [`PLAN_PCT`] of the limit. What does not fit is delivered again to a later invocation,
/// never cut mid-call (a call killed with its invocation is billed, and made again).
pub fn call_fits(elapsed_ms: u64, call_ms: u64, limit_ms: Option<u64>) -> bool {
    limit_ms.is_none_or(|limit| elapsed_ms.saturating_add(call_ms) <= limit * PLAN_PCT / 100)
}

#[cfg(test)]
mod tests;
