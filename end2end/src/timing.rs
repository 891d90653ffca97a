//! Where a suite's time goes, for `cargo xtask test`'s table: its stack's start (the simulator,
//! the D1 state copied from the migrated template or migrated, `wrangler dev` until the Worker
//! answers), then per test the time spent waiting on the pipeline ([`crate::eventually`] and
//! [`pause`]) and the rest, running. Written as JSON into `E2E_TIMING_DIR/<suite>.json` when
//! the xtask sets that directory.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use xtask::stack::StartPhases;

/// Nanoseconds spent waiting by this process's tests so far (tests of a suite run one after
/// another, so the difference across a test is that test's).
static WAITED_NS: AtomicU64 = AtomicU64::new(0);

/// Counts `d` as waiting.
pub fn add_waiting(d: Duration) {
    WAITED_NS.fetch_add(
        d.as_nanos().try_into().unwrap_or(u64::MAX),
        Ordering::Relaxed,
    );
}

/// The waiting counted so far.
pub fn waited() -> Duration {
    Duration::from_nanos(WAITED_NS.load(Ordering::Relaxed))
}

/// A fixed pause, counted as waiting. Only where no event can be waited for: that something
/// does *not* happen (no second call is billed, no message comes back) takes a while to show.
pub async fn pause(d: Duration) {
    let t0 = Instant::now();
    tokio::time::sleep(d).await;
    add_waiting(t0.elapsed());
}

/// One suite's figures, in milliseconds.
#[derive(Debug, Default)]
pub struct SuiteTiming {
    pub sim_ms: u64,
    pub stack: StartPhases,
    pub tests: Vec<TestTiming>,
    pub teardown_ms: u64,
}

#[derive(Debug)]
pub struct TestTiming {
    pub name: String,
    pub ms: u64,
    pub waiting_ms: u64,
}

pub fn ms(d: Duration) -> u64 {
    d.as_millis().try_into().unwrap_or(u64::MAX)
}

impl SuiteTiming {
    pub fn to_json(&self, suite: &str) -> Value {
        json!({
            "suite": suite,
            "sim_ms": self.sim_ms,
            "template_ms": self.stack.template_ms,
            "migrations_ms": self.stack.migrations_ms,
            "ready_ms": self.stack.ready_ms,
            "teardown_ms": self.teardown_ms,
            "tests": self.tests.iter().map(|t| json!({
                "name": t.name, "ms": t.ms, "waiting_ms": t.waiting_ms,
            })).collect::<Vec<_>>(),
        })
    }

    /// Writes the figures where the xtask reads them, if it asked for them.
    pub fn write(&self, suite: &str) {
        let Some(dir) = std::env::var_os("E2E_TIMING_DIR") else {
            return;
        };
        let dir = std::path::PathBuf::from(dir);
        let written = std::fs::create_dir_all(&dir).and_then(|_| {
            std::fs::write(
                dir.join(format!("{suite}.json")),
                self.to_json(suite).to_string(),
            )
        });
        if let Err(e) = written {
            eprintln!("could not write the timing of suite {suite}: {e}");
        }
    }
}
