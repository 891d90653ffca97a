//! `anthropic-sim`: a local server faithful to the Anthropic wire API, so the product runs with no
//! account and the tests can prove the pipeline's behaviour under every failure the API produces.
//!
//! # Layout
//! - [`config`]: flags, environment and the run-time knobs.
//! - [`models`]: the simulator's own model table (limits, what each model refuses, tokenizer,
//!   prices with dates, retirement), typed in from the official pages; [`models_api`]: the
//!   `/v1/models` endpoints.
//! - [`request`]: validation of Messages bodies like the real API; token and cache accounting.
//! - [`shape`]: the settings each model refuses, with the API's error messages.
//! - [`messages`]: `POST /v1/messages` and `/v1/messages/count_tokens`.
//! - [`batches`]: the Message Batches API with JSONL results.
//! - [`files`]: the Files API (uploads referenced by `file_id` in Messages requests).
//! - [`markers`] and [`faults`]: deterministic and random failures.
//! - [`ratelimit`]: requests / input tokens / output tokens per minute as refilling buckets.
//! - [`output`]: deterministic, plausible model output; [`pdf`]: page counts and titles.
//! - [`pricing`]: the simulator's own price table; [`control`]: `/_sim/*` stats, config, reset.
//! - [`errors`]: the API's error bodies and ids; [`auth`]: the API key and `anthropic-version`
//!   every endpoint checks first; [`fingerprint`]: the one hash answers are drawn from.

pub mod admin;
pub mod answering;
pub mod auth;
pub mod batch;
pub mod batches;
pub mod clock;
pub mod clouds;
pub mod config;
pub mod control;
pub mod errors;
pub mod faults;
pub mod file_store;
pub mod files;
pub mod fingerprint;
pub mod markers;
pub mod messages;
pub mod models;
pub mod models_api;
pub mod output;
pub mod pdf;
pub mod pricing;
pub mod ratelimit;
pub mod request;
pub mod shape;
pub mod state;
pub mod stats;

use std::net::SocketAddr;

use axum::routing::{get, post};
use axum::Router;

pub use clock::now_ms;
pub use config::{Config, Knobs};
pub use state::{Inner, Sim};

/// The simulator's routes: the Anthropic API's (behind its outage knob), the other routes'
/// (`clouds`), and the simulator's own controls.
pub fn router(sim: Sim) -> Router {
    anthropic_api(sim.clone())
        .route("/model/{model_id}/invoke", post(clouds::bedrock::invoke))
        .route("/token", post(clouds::oauth::token))
        .route(
            "/v1/projects/{project}/locations/{location}/publishers/anthropic/models/{action}",
            post(clouds::vertex::raw_predict),
        )
        .route("/_sim/stats", get(control::stats))
        .route("/_sim/reset", post(control::reset))
        .route(
            "/_sim/webhooks",
            post(control::receive_webhook).get(control::webhooks),
        )
        .route(
            "/_sim/config",
            get(control::get_config)
                .put(control::put_config)
                .patch(control::patch_config),
        )
        .fallback(errors::not_found)
        .method_not_allowed_fallback(errors::method_not_allowed)
        // Bodies are size-checked by the handlers, which answer 413 in the API's shape.
        .layer(axum::extract::DefaultBodyLimit::max(
            batches::MAX_BATCH_BYTES + 1,
        ))
        .with_state(sim)
}

/// The Anthropic API's endpoints, each behind its outage (`Knobs::outages`).
fn anthropic_api(sim: Sim) -> Router<Sim> {
    Router::new()
        .route("/v1/messages", post(messages::create))
        .route("/v1/messages/count_tokens", post(messages::count_tokens))
        .route("/v1/models", get(models_api::list))
        .route("/v1/models/{model_id}", get(models_api::retrieve))
        .route(
            "/v1/messages/batches",
            post(batches::create).get(batches::list),
        )
        .route(
            "/v1/messages/batches/{id}",
            get(batches::retrieve).delete(batches::delete),
        )
        .route("/v1/messages/batches/{id}/cancel", post(batches::cancel))
        .route("/v1/messages/batches/{id}/results", get(batches::results))
        .route("/v1/organizations/cost_report", get(admin::cost_report))
        .route(
            "/v1/files",
            post(files::upload)
                .get(files::list)
                // A file may be 500 MB: its route reads that much (the handler answers 413).
                .layer(axum::extract::DefaultBodyLimit::max(
                    pipeline::anthropic::files::MAX_FILE_BYTES as usize + 1024 * 1024,
                )),
        )
        .route(
            "/v1/files/{file_id}",
            get(files::retrieve).delete(files::delete),
        )
        .route("/v1/files/{file_id}/content", get(files::content))
        .route_layer(axum::middleware::from_fn_with_state(
            sim,
            clouds::anthropic_outage,
        ))
}

/// Starts the simulator on a free loopback port inside the current tokio runtime (used by the
/// end-to-end suites and the host tests) and returns its address and state.
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
