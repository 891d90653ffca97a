//! Everything the handlers share: the configuration and the mutable state behind one lock.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::batch::Batch;
use crate::clock::now_ms;
use crate::config::{Config, Knobs};
use crate::errors::SimError;
use crate::faults;
use crate::file_store::Files;
use crate::ratelimit;
use crate::stats::Stats;

/// Everything the handlers share. One mutex: the simulator is a test double, not a hot path,
/// and it is never held across an await.
#[derive(Clone)]
pub struct Sim {
    pub config: Arc<Config>,
    pub inner: Arc<Mutex<Inner>>,
}

/// Mutable state.
pub struct Inner {
    pub knobs: Knobs,
    pub limits: ratelimit::Limits,
    pub stats: Stats,
    pub rng: faults::Rng,
    pub counters: faults::Counters,
    /// Cached prompt prefixes and when they expire (5 minutes after their last use).
    pub cache: HashMap<u64, i64>,
    /// Message Batches, oldest first.
    pub batches: Vec<Batch>,
    /// Webhooks received at `/_sim/webhooks` (a sink for the pipeline's notifications in tests).
    pub webhooks: Vec<serde_json::Value>,
    /// The Files API's store.
    pub files: Files,
    /// Access tokens the token endpoint minted, and when each expires (epoch ms).
    pub issued_tokens: HashMap<String, i64>,
}

impl Inner {
    fn new(knobs: Knobs, now: i64) -> Inner {
        Inner {
            limits: ratelimit::Limits::new(&knobs, now),
            rng: faults::Rng::new(knobs.seed),
            knobs,
            stats: Stats::default(),
            counters: faults::Counters::new(),
            cache: HashMap::new(),
            batches: Vec::new(),
            webhooks: Vec::new(),
            files: Files::default(),
            issued_tokens: HashMap::new(),
        }
    }
}

impl Sim {
    pub fn new(config: Config) -> Sim {
        let inner = Inner::new(config.knobs.clone(), now_ms());
        Sim {
            config: Arc::new(config),
            inner: Arc::new(Mutex::new(inner)),
        }
    }

    /// Locks the state; a poisoned lock (a panicking handler) is still usable for a test double.
    pub fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Back to the state at start: knobs from the command line, no stats, no batches, no cache.
    pub fn reset(&self) {
        *self.lock() = Inner::new(self.config.knobs.clone(), now_ms());
    }
}

impl Inner {
    /// Counts an endpoint's call by its outcome (`"<name> <status>"` in `/_sim/stats`) and
    /// answers it.
    pub fn counted(
        &mut self,
        name: &str,
        result: Result<axum::response::Response, SimError>,
    ) -> axum::response::Response {
        use axum::response::IntoResponse;
        match result {
            Ok(r) => {
                self.stats.call(name, 200);
                r
            }
            Err(e) => {
                self.stats.call(name, e.status);
                e.into_response()
            }
        }
    }
}
