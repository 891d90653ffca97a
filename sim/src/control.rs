//! `/_sim/*`: what the simulator has billed, and a reset, for tests and operators.

use std::collections::BTreeMap;

use axum::extract::State;
use axum::Json;
use pipeline::anthropic::Usage;
use serde::Serialize;

use crate::{now_ms, ratelimit::Limits, Sim};

/// Counters since start or the last reset.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Stats {
    /// Successful (billed) Messages API answers.
    pub messages: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
    /// Error answers by status code.
    pub errors: BTreeMap<u16, u64>,
}

impl Stats {
    pub fn record_message(&mut self, u: &Usage) {
        self.messages += 1;
        self.input_tokens += u.input_tokens as u64;
        self.output_tokens += u.output_tokens as u64;
        self.cache_creation_input_tokens += u.cache_creation_input_tokens as u64;
        self.cache_read_input_tokens += u.cache_read_input_tokens as u64;
    }

    pub fn record_error(&mut self, status: u16) {
        *self.errors.entry(status).or_default() += 1;
    }
}

/// `GET /_sim/stats`.
pub async fn stats(State(sim): State<Sim>) -> Json<Stats> {
    Json(sim.lock().stats.clone())
}

/// `POST /_sim/reset`: zeroes the counters and refills the buckets.
pub async fn reset(State(sim): State<Sim>) -> Json<Stats> {
    let mut inner = sim.lock();
    inner.stats = Stats::default();
    inner.limits = Limits::new(&sim.config, now_ms());
    Json(inner.stats.clone())
}
