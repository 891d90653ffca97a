//! The API's error bodies, `{"type":"error","error":{"type","message"},"request_id"}`, each with
//! its real status code and a `request-id` header.

use std::sync::atomic::{AtomicU64, Ordering};

use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use pipeline::anthropic::{header, ErrorResponse, ErrorType};

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A fresh id in the API's style: `<prefix>_01` followed by 22 base62 characters.
pub fn new_id(prefix: &str) -> String {
    let n = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    // Spread the counter over the id with a 64-bit mix so ids do not look sequential.
    let mut x = n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (crate::now_ms() as u64).rotate_left(17);
    let mut out = format!("{prefix}_01");
    for _ in 0..22 {
        out.push(BASE62[(x % 62) as usize] as char);
        x = (x / 62) ^ x.rotate_left(29).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    }
    out
}

/// An API error as the simulator answers it.
#[derive(Debug, Clone)]
pub struct SimError {
    pub kind: ErrorType,
    pub message: String,
    /// Seconds, for 429 and 529 answers.
    pub retry_after_s: Option<u64>,
    /// Extra headers (rate-limit state on a 429).
    pub headers: Vec<(String, String)>,
}

impl SimError {
    pub fn new(kind: ErrorType, message: impl Into<String>) -> Self {
        SimError {
            kind,
            message: message.into(),
            retry_after_s: None,
            headers: Vec::new(),
        }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorType::InvalidRequestError, message)
    }
}

impl IntoResponse for SimError {
    fn into_response(self) -> Response {
        let request_id = new_id("req");
        let body = ErrorResponse::new(self.kind, self.message, Some(request_id.clone()));
        let status = StatusCode::from_u16(self.kind.status()).unwrap_or(StatusCode::BAD_REQUEST);
        let mut resp = (status, axum::Json(body)).into_response();
        let h = resp.headers_mut();
        if let Ok(v) = HeaderValue::from_str(&request_id) {
            h.insert(header::REQUEST_ID, v);
        }
        if let Some(s) = self.retry_after_s {
            h.insert(header::RETRY_AFTER, HeaderValue::from(s));
        }
        for (k, v) in self.headers {
            if let (Ok(k), Ok(v)) = (
                axum::http::HeaderName::from_bytes(k.as_bytes()),
                HeaderValue::from_str(&v),
            ) {
                h.insert(k, v);
            }
        }
        resp
    }
}

/// Unknown paths: the API's 404 body.
pub async fn not_found() -> SimError {
    SimError::new(ErrorType::NotFoundError, "Not Found")
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
}
