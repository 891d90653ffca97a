//! `AppError`: the one error type at the HTTP boundary. Clients get the contract's short JSON
//! envelope with the right status; logs get the full context.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use pipeline::error::ApiError;

#[derive(Debug)]
pub struct AppError(pub ApiError);

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let status =
            StatusCode::from_u16(self.0.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, axum::Json(self.0.body)).into_response()
    }
}

impl From<ApiError> for AppError {
    fn from(e: ApiError) -> Self {
        AppError(e)
    }
}

/// A platform failure (D1, R2, a queue): logged in full, answered as a 500 without internals.
impl From<worker::Error> for AppError {
    fn from(e: worker::Error) -> Self {
        worker::console_error!("platform error: {e}");
        AppError(ApiError::internal(
            "an internal error occurred; it has been logged",
        ))
    }
}
