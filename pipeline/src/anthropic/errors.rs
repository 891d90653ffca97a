//! The error envelope and its types, with the HTTP status each is published with.

use serde::{Deserialize, Serialize};

/// The error types of the API and the status each comes with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorType {
    InvalidRequestError,
    AuthenticationError,
    BillingError,
    PermissionError,
    NotFoundError,
    /// 409 (platform.claude.com/docs/en/api/errors: "The request conflicts with the current
    /// state of a resource").
    ConflictError,
    RequestTooLarge,
    RateLimitError,
    ApiError,
    TimeoutError,
    OverloadedError,
    /// A type added after this client ("it is possible that the type values will grow over
    /// time", the errors page): the HTTP status still decides what happens.
    #[serde(other)]
    Other,
}

impl ErrorType {
    /// The type the API pairs with a status; other 5xx statuses are `api_error`.
    pub fn for_status(status: u16) -> ErrorType {
        match status {
            400 => ErrorType::InvalidRequestError,
            401 => ErrorType::AuthenticationError,
            402 => ErrorType::BillingError,
            403 => ErrorType::PermissionError,
            404 => ErrorType::NotFoundError,
            409 => ErrorType::ConflictError,
            413 => ErrorType::RequestTooLarge,
            429 => ErrorType::RateLimitError,
            504 => ErrorType::TimeoutError,
            529 => ErrorType::OverloadedError,
            s if s < 500 => ErrorType::InvalidRequestError,
            _ => ErrorType::ApiError,
        }
    }

    pub fn status(self) -> u16 {
        match self {
            ErrorType::InvalidRequestError => 400,
            ErrorType::AuthenticationError => 401,
            ErrorType::BillingError => 402,
            ErrorType::PermissionError => 403,
            ErrorType::NotFoundError => 404,
            ErrorType::ConflictError => 409,
            ErrorType::RequestTooLarge => 413,
            ErrorType::RateLimitError => 429,
            ErrorType::ApiError => 500,
            ErrorType::TimeoutError => 504,
            ErrorType::OverloadedError => 529,
            ErrorType::Other => 500,
        }
    }
}

/// `{"type":"error","error":{"type","message"},"request_id"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorResponse {
    #[serde(rename = "type")]
    pub kind: String,
    pub error: ErrorDetail,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub request_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorDetail {
    #[serde(rename = "type")]
    pub kind: ErrorType,
    pub message: String,
}

impl ErrorResponse {
    pub fn new(kind: ErrorType, message: impl Into<String>, request_id: Option<String>) -> Self {
        ErrorResponse {
            kind: "error".into(),
            error: ErrorDetail {
                kind,
                message: message.into(),
            },
            request_id,
        }
    }
}
