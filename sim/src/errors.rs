//! The API's error bodies, `{"type":"error","error":{"type","message"},"request_id"}`, each with
//! its real status code and a `request-id` header.

use std::sync::atomic::{AtomicU64, Ordering};

use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use pipeline::anthropic::{header, ErrorResponse, ErrorType};

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A fresh id in the API's style: `<prefix>_01` followed by 22 base62 characters.
pub fn new_id(prefix: &str) -> String {
    let n = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    // Spread the counter over the id with a 64-bit mix so ids do not look sequential.
    let mut x =
        n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (crate::clock::now_ms() as u64).rotate_left(17);
    let mut out = format!("{prefix}_01");
    for _ in 0..22 {
        out.push(BASE62[(x % 62) as usize] as char);
        x = (x / 62) ^ x.rotate_left(29).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    }
    out
}

/// Adds `request-id` and any extra headers to a response.
pub fn with_headers(mut resp: Response, extra: Vec<(String, String)>) -> Response {
    let h = resp.headers_mut();
    set(h, header::REQUEST_ID, &new_id("req"));
    for (k, v) in extra {
        set(h, &k, &v);
    }
    resp
}

fn set(h: &mut HeaderMap, k: &str, v: &str) {
    if let (Ok(k), Ok(v)) = (
        HeaderName::from_bytes(k.as_bytes()),
        HeaderValue::from_str(v),
    ) {
        h.insert(k, v);
    }
}

/// An API error as the simulator answers it.
#[derive(Debug, Clone)]
pub struct SimError {
    pub status: u16,
    pub kind: ErrorType,
    pub message: String,
    /// Extra headers (`retry-after`, rate-limit state).
    pub headers: Vec<(String, String)>,
    /// A fault injected on purpose, not a refusal of the request.
    pub injected: bool,
}

impl SimError {
    pub fn new(kind: ErrorType, message: impl Into<String>) -> Self {
        SimError {
            status: kind.status(),
            kind,
            message: message.into(),
            headers: Vec::new(),
            injected: false,
        }
    }

    /// A 400 refusing the request for its shape (a setting, a field, a limit), as opposed to an
    /// injected fault.
    pub fn is_shape_refusal(&self) -> bool {
        self.status == 400 && !self.injected
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorType::InvalidRequestError, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorType::NotFoundError, message)
    }

    /// A fault injected by a marker or a configured rate: the status with its API type.
    pub fn injected(status: u16, retry_after_s: u64) -> Self {
        let kind = ErrorType::for_status(status);
        let message = match kind {
            ErrorType::OverloadedError => "Overloaded",
            ErrorType::RateLimitError => {
                "This request would exceed your organization's rate limit. Please try again later."
            }
            ErrorType::ApiError => "Internal server error",
            _ => "Injected by anthropic-sim",
        };
        let mut e = SimError {
            status,
            kind,
            message: message.into(),
            headers: Vec::new(),
            injected: true,
        };
        // 0 sends none: the real API's spend-limit 429 comes without retry-after.
        if matches!(status, 429 | 529) && retry_after_s > 0 {
            e.headers
                .push((header::RETRY_AFTER.into(), retry_after_s.to_string()));
        }
        e
    }
}

impl IntoResponse for SimError {
    fn into_response(self) -> Response {
        let request_id = new_id("req");
        let body = ErrorResponse::new(self.kind, self.message, Some(request_id.clone()));
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::BAD_REQUEST);
        let mut resp = (status, axum::Json(body)).into_response();
        let h = resp.headers_mut();
        set(h, header::REQUEST_ID, &request_id);
        for (k, v) in self.headers {
            set(h, &k, &v);
        }
        resp
    }
}

/// Unknown paths: the API's 404 body.
pub async fn not_found() -> SimError {
    SimError::not_found("Not Found")
}

/// A known path with the wrong method: 405 in the API's error shape.
pub async fn method_not_allowed() -> SimError {
    SimError {
        status: 405,
        ..SimError::invalid("Method Not Allowed")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_have_the_api_shape_and_do_not_repeat() {
        let a = new_id("msg");
        let b = new_id("msg");
        assert!(a.starts_with("msg_01"));
        assert_eq!(a.len(), "msg_01".len() + 22);
        assert!(a.chars().skip(4).all(|c| c.is_ascii_alphanumeric()));
        assert_ne!(a, b);
    }

    #[test]
    fn injected_errors_pair_status_and_type_like_the_api() {
        let e = SimError::injected(529, 3);
        assert_eq!((e.status, e.kind), (529, ErrorType::OverloadedError));
        assert!(e.headers.contains(&("retry-after".into(), "3".into())));
        assert!(
            SimError::injected(429, 0).headers.is_empty(),
            "0 sends no retry-after"
        );
        let e = SimError::injected(503, 3);
        assert_eq!((e.status, e.kind), (503, ErrorType::ApiError));
        assert!(e.headers.is_empty());
    }
}
