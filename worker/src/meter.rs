//! What one invocation asked of the platform: D1 statements and rows (as D1 reports them in
//! each result's `meta`), R2 operations by billing class, queue messages sent and delivered, and
//! Durable Object requests. Shared by the services of one `AppState`; read by the `x-d1-*`
//! headers and the per-invocation log line (`D1_STATS = "on"`) that `cargo xtask bench cost`
//! sums into a cost per job.
//!
//! It is also the invocation's envelope (`pipeline::envelope`): every subrequest is admitted
//! here before it is made — D1 calls, R2 operations, queue sends, Durable Object requests and
//! fetches — and every fetch takes one of the plan's four connection slots (of production's
//! six) until its answer's headers arrive. The first limit passed is logged (`envelope exceeded: …`, once per invocation);
//! in strict mode (`ENVELOPE_STRICT = "on"`, the dev and test profiles) the subrequest that
//! passes it fails as production would fail it, since `wrangler dev` enforces none of them.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use pipeline::envelope::{Allowance, Cost, Entry, Limits, Passed, Room, Used};
use serde::Serialize;

/// The counters, and the invocation's limits.
#[derive(Debug)]
pub struct Meter {
    entry: Entry,
    limits: Limits,
    /// Refuse the subrequest that passes a limit (`ENVELOPE_STRICT = "on"`).
    strict: bool,
    started_ms: i64,
    /// The first limit passed has been logged.
    passed: AtomicBool,
    /// Subrequests, by kind (calls, not the items inside them).
    d1_calls: AtomicU64,
    r2_calls: AtomicU64,
    queue_calls: AtomicU64,
    do_calls: AtomicU64,
    fetches: AtomicU64,
    /// Fetches waiting for their answer's headers now, and at most.
    open: AtomicU64,
    open_peak: AtomicU64,
    /// The plan's four of production's six connections (`Limits::planned_connections`): a
    /// fifth fetch waits for a slot, as a seventh would in production.
    slots: async_lock::Semaphore,
    d1_statements: AtomicU64,
    d1_rows_read: AtomicU64,
    d1_rows_written: AtomicU64,
    r2_class_a: AtomicU64,
    r2_class_b: AtomicU64,
    r2_deletes: AtomicU64,
    queue_sent: AtomicU64,
    queue_delivered: AtomicU64,
    do_requests: AtomicU64,
}

/// One thing counted.
#[derive(Debug, Clone, Copy)]
pub enum Op {
    /// A write, a conditional write, a list (R2's Class A).
    R2ClassA,
    /// A read (Class B).
    R2ClassB,
    /// A delete (free).
    R2Delete,
    QueueSent,
    DoRequest,
}

/// One subrequest's kind.
#[derive(Debug, Clone, Copy)]
enum Call {
    D1,
    R2,
    Queue,
    DurableObject,
    Fetch,
}

/// A [`Meter`]'s figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Use {
    pub d1_statements: u64,
    pub d1_rows_read: u64,
    pub d1_rows_written: u64,
    pub r2_class_a: u64,
    pub r2_class_b: u64,
    pub r2_deletes: u64,
    pub queue_sent: u64,
    pub queue_delivered: u64,
    pub do_requests: u64,
    /// The envelope's figures (`pipeline::envelope::Used`), and the invocation's entry point.
    pub entry: &'static str,
    pub subrequests: u64,
    pub d1_queries: u64,
    pub fetches: u64,
    pub connections_peak: u64,
    pub wall_ms: u64,
    pub wasm_memory_bytes: u64,
}

/// A connection slot, held until the fetch's answer has its headers.
pub struct Connection<'a> {
    meter: &'a Meter,
    _slot: async_lock::SemaphoreGuard<'a>,
}

impl Drop for Connection<'_> {
    fn drop(&mut self) {
        self.meter.open.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Meter {
    pub fn new(entry: Entry, limits: Limits, strict: bool) -> Meter {
        let zero = || AtomicU64::new(0);
        Meter {
            entry,
            limits,
            strict,
            started_ms: crate::config::now_ms(),
            passed: AtomicBool::new(false),
            d1_calls: zero(),
            r2_calls: zero(),
            queue_calls: zero(),
            do_calls: zero(),
            fetches: zero(),
            open: zero(),
            open_peak: zero(),
            slots: async_lock::Semaphore::new(limits.planned_connections() as usize),
            d1_statements: zero(),
            d1_rows_read: zero(),
            d1_rows_written: zero(),
            r2_class_a: zero(),
            r2_class_b: zero(),
            r2_deletes: zero(),
            queue_sent: zero(),
            queue_delivered: zero(),
            do_requests: zero(),
        }
    }

    /// What started the invocation.
    pub fn entry(&self) -> Entry {
        self.entry
    }

    /// The invocation's limits.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Whether the invocation may start another item of work now (a cron run: inside its
    /// minute, `pipeline::envelope::may_start`).
    pub fn may_start(&self) -> bool {
        let elapsed = (crate::config::now_ms() - self.started_ms).max(0) as u64;
        pipeline::envelope::may_start(self.entry, elapsed)
    }

    /// Whether a call that may last up to `call_ms` can start now and end inside the planned
    /// share of the invocation's wall time (`pipeline::envelope::call_fits`).
    pub fn call_fits(&self, call_ms: u64) -> bool {
        let elapsed = (crate::config::now_ms() - self.started_ms).max(0) as u64;
        pipeline::envelope::call_fits(elapsed, call_ms, self.limits.wall_ms)
    }

    /// What is left of the invocation's room now, divided between loops that run side by side
    /// (`pipeline::envelope::split`) after `reserve` for the rest of the invocation.
    pub fn shares(&self, reserve: Cost, weights: &[u64]) -> Vec<Allowance> {
        let used = self.envelope();
        let room = self.limits.room().after(Room {
            subrequests: used.subrequests,
            fetches: used.fetches,
            d1: used.d1_queries,
        });
        pipeline::envelope::split_room(room.unwrap_or_default(), reserve, weights)
            .into_iter()
            .map(Allowance::new)
            .collect()
    }

    /// All that is left of the room after `reserve`, for one loop.
    pub fn share(&self, reserve: Cost) -> Allowance {
        self.shares(reserve, &[1])
            .pop()
            .unwrap_or(Allowance::new(Room::default()))
    }

    /// One call to R2, a queue or the Durable Object, counting `n` items of `op` (keys deleted,
    /// messages sent): admitted as one subrequest, or refused past a limit in strict mode.
    pub fn count(&self, op: Op, n: u64) -> worker::Result<()> {
        let (c, call) = match op {
            Op::R2ClassA => (&self.r2_class_a, Call::R2),
            Op::R2ClassB => (&self.r2_class_b, Call::R2),
            Op::R2Delete => (&self.r2_deletes, Call::R2),
            Op::QueueSent => (&self.queue_sent, Call::Queue),
            Op::DoRequest => (&self.do_requests, Call::DurableObject),
        };
        c.fetch_add(n, Ordering::Relaxed);
        self.admit(call)
    }

    /// Messages a queue delivered to this invocation (no subrequest).
    pub fn delivered(&self, n: u64) {
        self.queue_delivered.fetch_add(n, Ordering::Relaxed);
    }

    /// One call to D1 (a statement run alone, or one `batch()`).
    pub fn d1_call(&self) -> worker::Result<()> {
        self.admit(Call::D1)
    }

    /// One fetch: admitted, then a connection slot — waiting while the plan's four fetches wait
    /// for their headers, as production makes a seventh wait. Drop the slot once the headers are in.
    pub async fn connect(&self) -> worker::Result<Connection<'_>> {
        self.admit(Call::Fetch)?;
        let slot = self.slots.acquire().await;
        let open = self.open.fetch_add(1, Ordering::Relaxed) + 1;
        self.open_peak.fetch_max(open, Ordering::Relaxed);
        Ok(Connection {
            meter: self,
            _slot: slot,
        })
    }

    fn admit(&self, call: Call) -> worker::Result<()> {
        let c = match call {
            Call::D1 => &self.d1_calls,
            Call::R2 => &self.r2_calls,
            Call::Queue => &self.queue_calls,
            Call::DurableObject => &self.do_calls,
            Call::Fetch => &self.fetches,
        };
        c.fetch_add(1, Ordering::Relaxed);
        match self.passed_now() {
            Some(p) if self.strict => Err(worker::Error::RustError(format!(
                "Too many subrequests: this {} invocation passed a production limit ({p}; \
                 ENVELOPE_STRICT refuses what Cloudflare would)",
                self.entry.as_str()
            ))),
            _ => Ok(()),
        }
    }

    /// The first limit passed, logged the first time.
    fn passed_now(&self) -> Option<Passed> {
        let p = self.limits.passed(&self.envelope())?;
        if !self.passed.swap(true, Ordering::Relaxed) {
            worker::console_error!(
                "envelope exceeded: {} invocation: {p} (production would fail it)",
                self.entry.as_str()
            );
        }
        Some(p)
    }

    /// The envelope's figures now.
    pub fn envelope(&self) -> Used {
        let l = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Used {
            subrequests: l(&self.d1_calls)
                + l(&self.r2_calls)
                + l(&self.queue_calls)
                + l(&self.do_calls)
                + l(&self.fetches),
            fetches: l(&self.fetches),
            d1_queries: l(&self.d1_calls),
            connections: l(&self.open_peak),
            wall_ms: (crate::config::now_ms() - self.started_ms).max(0) as u64,
            memory_bytes: wasm_memory(),
        }
    }

    /// At the invocation's end: a limit passed without a subrequest (wall time, memory) is
    /// logged too.
    pub fn finish(&self) {
        self.passed_now();
    }

    /// One D1 result: a statement, and the rows its `meta` says it read and wrote.
    pub fn d1(&self, rows_read: Option<usize>, rows_written: Option<usize>) {
        self.d1_statements.fetch_add(1, Ordering::Relaxed);
        self.d1_rows_read
            .fetch_add(rows_read.unwrap_or(0) as u64, Ordering::Relaxed);
        self.d1_rows_written
            .fetch_add(rows_written.unwrap_or(0) as u64, Ordering::Relaxed);
    }

    /// The `use:` line of an invocation (`D1_STATS`): what it asked of the platform, which
    /// `cargo xtask bench cost` sums and the envelope suite reads.
    pub fn log_use(&self, what: &str) {
        let used = serde_json::to_string(&self.used()).unwrap_or_default();
        worker::console_log!("use: {what}: {used}");
    }

    pub fn used(&self) -> Use {
        let l = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let e = self.envelope();
        Use {
            entry: self.entry.as_str(),
            subrequests: e.subrequests,
            d1_queries: e.d1_queries,
            fetches: e.fetches,
            connections_peak: e.connections,
            wall_ms: e.wall_ms,
            wasm_memory_bytes: e.memory_bytes,
            d1_statements: l(&self.d1_statements),
            d1_rows_read: l(&self.d1_rows_read),
            d1_rows_written: l(&self.d1_rows_written),
            r2_class_a: l(&self.r2_class_a),
            r2_class_b: l(&self.r2_class_b),
            r2_deletes: l(&self.r2_deletes),
            queue_sent: l(&self.queue_sent),
            queue_delivered: l(&self.queue_delivered),
            do_requests: l(&self.do_requests),
        }
    }
}

/// The Worker's linear memory now, in bytes (it never shrinks: the isolate's high-water mark).
pub fn wasm_memory() -> u64 {
    #[cfg(target_arch = "wasm32")]
    {
        core::arch::wasm32::memory_size(0) as u64 * 65_536
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        0
    }
}
