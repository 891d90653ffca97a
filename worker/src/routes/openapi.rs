//! `GET /api/openapi.json`: the OpenAPI 3.1 document of this API. `cargo xtask build` writes it
//! (`contract::openapi`, from the route table and the DTOs' schemas) next to the SPA's files;
//! the Worker answers it from the assets binding, so the document costs the Worker's bundle
//! nothing.

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use pipeline::error::ApiError;

use crate::error::AppError;
use crate::services::AppState;

/// Where the build puts the document among the assets.
const ASSET: &str = "https://assets.local/openapi.json";

#[worker::send]
pub async fn get(State(state): State<AppState>) -> Result<Response, AppError> {
    let missing = || {
        ApiError::new(
            503,
            "openapi_missing",
            "the OpenAPI document is not among the assets: build with `cargo xtask build`",
            None,
        )
    };
    let assets = state.assets.as_ref().ok_or_else(missing)?;
    let found = assets.0.fetch(ASSET, None).await?;
    if !found.status().is_success() {
        return Err(missing().into());
    }
    let body = found.into_body();
    Ok((
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "public, max-age=300"),
        ],
        axum::body::Body::new(body),
    )
        .into_response())
}
