//! The axum router: every Worker path of the contract, JSON 404/405 for the rest.

mod health;

use std::sync::Arc;

use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use pipeline::error::ApiError;
use worker::Env;

use crate::config::Config;
use crate::error::AppError;

/// What every handler shares: the bindings (resolved per use) and the configuration.
#[derive(Clone)]
pub struct AppState {
    pub env: Env,
    pub config: Arc<Config>,
}

pub fn router(env: Env) -> Router {
    let config = match Config::from_env(&env) {
        Ok(c) => c,
        Err(msg) => {
            worker::console_error!("configuration error: {msg}");
            let err = ApiError::internal(format!("configuration error: {msg}"));
            return Router::new().fallback(move || {
                let err = err.clone();
                async move { AppError(err).into_response() }
            });
        }
    };
    let state = AppState {
        env,
        config: Arc::new(config),
    };
    Router::new()
        .route("/api/health", get(health::get))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state)
}

async fn not_found() -> AppError {
    ApiError::not_found("no such endpoint").into()
}

async fn method_not_allowed() -> AppError {
    ApiError::method_not_allowed().into()
}
