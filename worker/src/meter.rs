//! What one invocation asked of the platform: D1 statements and rows (as D1 reports them in
//! each result's `meta`), R2 operations by billing class, queue messages sent and delivered, and
//! Durable Object requests. Shared by the services of one `AppState`; read by the `x-d1-*`
//! headers and the per-invocation log line (`D1_STATS = "on"`) that `cargo xtask bench cost`
//! sums into a cost per job.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

/// The counters.
#[derive(Debug, Default)]
pub struct Meter {
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
    QueueDelivered,
    DoRequest,
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
}

impl Meter {
    pub fn count(&self, op: Op, n: u64) {
        let c = match op {
            Op::R2ClassA => &self.r2_class_a,
            Op::R2ClassB => &self.r2_class_b,
            Op::R2Delete => &self.r2_deletes,
            Op::QueueSent => &self.queue_sent,
            Op::QueueDelivered => &self.queue_delivered,
            Op::DoRequest => &self.do_requests,
        };
        c.fetch_add(n, Ordering::Relaxed);
    }

    /// One D1 result: a statement, and the rows its `meta` says it read and wrote.
    pub fn d1(&self, rows_read: Option<usize>, rows_written: Option<usize>) {
        self.d1_statements.fetch_add(1, Ordering::Relaxed);
        self.d1_rows_read
            .fetch_add(rows_read.unwrap_or(0) as u64, Ordering::Relaxed);
        self.d1_rows_written
            .fetch_add(rows_written.unwrap_or(0) as u64, Ordering::Relaxed);
    }

    pub fn used(&self) -> Use {
        let l = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Use {
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
