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
        let mut body = self.0.body;
        if status == StatusCode::INTERNAL_SERVER_ERROR {
            // The details stay in the log, under an id the client can quote.
            let id = crate::services::random_bytes()
                .map(|b| {
                    b[..8]
                        .iter()
                        .map(|x| format!("{x:02x}"))
                        .collect::<String>()
                })
                .unwrap_or_else(|_| crate::config::now_ms().to_string());
            worker::console_error!("request {id}: 500 {}: {}", body.code, body.error);
            body.error = format!(
                "an internal error occurred; quote request {id} to find its details in the log"
            );
            body.request_id = Some(id);
        }
        let retry_after = body.retry_after_s;
        let mut res = (status, axum::Json(body)).into_response();
        if let Some(s) = retry_after {
            res.headers_mut()
                .insert(axum::http::header::RETRY_AFTER, s.into());
        }
        res
    }
}

impl From<ApiError> for AppError {
    fn from(e: ApiError) -> Self {
        AppError(e)
    }
}

/// A platform failure (D1, R2, a queue): a 500 whose details go to the log only.
impl From<worker::Error> for AppError {
    fn from(e: worker::Error) -> Self {
        AppError(ApiError::internal(format!("platform error: {e}")))
    }
}
