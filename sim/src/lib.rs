//! `anthropic-sim`: a local server faithful to the Anthropic wire API, so the product runs with no
//! account and the tests can prove the pipeline's behaviour against the API's real shapes.
//!
//! # Layout
//! - [`config`]: command-line and test configuration.
//! - [`messages`]: `POST /v1/messages` — header checks, validation like the real API, the answer.
//! - [`ratelimit`]: requests / input tokens / output tokens per minute as refilling buckets.
//! - [`output`]: deterministic, plausible model output and usage.
//! - [`control`]: `/_sim/*` — billing stats and reset, for tests and the curious.
//! - [`errors`]: the API's error bodies.

pub mod config;
pub mod control;
pub mod errors;
pub mod messages;
pub mod output;
pub mod ratelimit;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::routing::{get, post};
use axum::Router;

pub use config::Config;

/// Everything the handlers share. One mutex: the simulator is a test double, not a hot path.
#[derive(Clone)]
pub struct Sim {
    pub config: Arc<Config>,
    pub inner: Arc<Mutex<Inner>>,
}

/// Mutable state: the rate-limit buckets and the billing counters.
pub struct Inner {
    pub limits: ratelimit::Limits,
    pub stats: control::Stats,
}

impl Sim {
    pub fn new(config: Config) -> Sim {
        let limits = ratelimit::Limits::new(&config, now_ms());
        Sim {
            config: Arc::new(config),
            inner: Arc::new(Mutex::new(Inner {
                limits,
                stats: control::Stats::default(),
            })),
        }
    }

    /// Locks the state; a poisoned lock (a panicking handler) is still usable for a test double.
    pub fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The simulator's routes.
pub fn router(sim: Sim) -> Router {
    Router::new()
        .route("/v1/messages", post(messages::create))
        .route("/_sim/stats", get(control::stats))
        .route("/_sim/reset", post(control::reset))
        .fallback(errors::not_found)
        .layer(axum::extract::DefaultBodyLimit::max(
            messages::MAX_REQUEST_BYTES + 1024,
        ))
        .with_state(sim)
}

/// Starts the simulator on a free loopback port inside the current tokio runtime (used by the
/// end-to-end suites) and returns its address and state.
pub async fn spawn(config: Config) -> std::io::Result<(SocketAddr, Sim)> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let sim = Sim::new(config);
    let app = router(sim.clone());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok((addr, sim))
}

/// Wall-clock epoch milliseconds; the only clock read of the simulator.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}
