//! The contract's error envelope: a status code and `{"error", "code", "field"?}`.

use serde::{Deserialize, Serialize};

use crate::caps::BudgetRefusal;

/// The JSON body of every error the Worker answers. `error` is for humans, `code` for programs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ErrorBody {
    pub error: String,
    pub code: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub field: Option<String>,
    /// A 500's reference: the same id is in the Worker's log next to the details, which the
    /// answer never carries.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub request_id: Option<String>,
    /// A `budget_exceeded` refusal's figures: the cap, committed, left and needed (boxed: most
    /// errors carry none, and every `Result` of the crate carries the envelope).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub budget: Option<Box<BudgetRefusal>>,
    /// When to try again, in seconds (also sent as the `retry-after` header).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub retry_after_s: Option<u32>,
}

/// An error with its HTTP status, decided in `pipeline` and sent as-is by the Worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: u16,
    pub body: ErrorBody,
}

impl ApiError {
    /// The 429 that refuses a request over a budget cap, with the cap's figures in its body.
    pub fn budget_exceeded(r: BudgetRefusal) -> Self {
        let mut e = ApiError::new(
            429,
            "budget_exceeded",
            format!(
                "this request needs up to {} at its worst case, and your {} budget of {} has {} left ({} committed); new jobs fit again {}",
                r.needed_micros,
                r.cap.name(),
                r.cap_micros,
                r.left_micros,
                r.committed_micros,
                r.cap.when_free()
            ),
            None,
        );
        e.body.budget = Some(Box::new(r));
        e
    }
    pub fn new(status: u16, code: &str, message: impl Into<String>, field: Option<&str>) -> Self {
        ApiError {
            status,
            body: ErrorBody {
                error: message.into(),
                code: code.to_owned(),
                field: field.map(str::to_owned),
                request_id: None,
                budget: None,
                retry_after_s: None,
            },
        }
    }

    pub fn bad_request(code: &str, message: impl Into<String>, field: Option<&str>) -> Self {
        Self::new(400, code, message, field)
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(401, "unauthorized", message, None)
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(403, "forbidden", message, None)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(404, "not_found", message, None)
    }

    pub fn method_not_allowed() -> Self {
        Self::new(
            405,
            "method_not_allowed",
            "this method is not allowed on this path",
            None,
        )
    }

    /// A failure of our own or of a platform service; the message must not leak internals.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(500, "internal", message, None)
    }
}

/// Reads a request body that must be a JSON object: 400 `invalid_json` or `invalid_body`.
pub fn json_object(body: &[u8]) -> Result<serde_json::Map<String, serde_json::Value>, ApiError> {
    match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        Ok(_) => Err(ApiError::bad_request(
            "invalid_body",
            "the body must be a JSON object",
            None,
        )),
        Err(e) => Err(ApiError::bad_request(
            "invalid_json",
            format!("the body is not valid JSON: {e}"),
            None,
        )),
    }
}

/// Refuses a field the endpoint does not know (a typo would otherwise be silently ignored):
/// 400 `unknown_field` naming it and the fields that are known.
pub fn reject_unknown_fields(
    obj: &serde_json::Map<String, serde_json::Value>,
    known: &[&str],
) -> Result<(), ApiError> {
    match obj.keys().find(|k| !known.contains(&k.as_str())) {
        None => Ok(()),
        Some(k) => Err(ApiError::bad_request(
            "unknown_field",
            format!("unknown field {k:?}; the fields are {}", known.join(", ")),
            Some(k),
        )),
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.status, self.body.code, self.body.error)
    }
}

impl std::error::Error for ApiError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_field_is_omitted_when_there_is_none() {
        let e = ApiError::not_found("no such job");
        let json = serde_json::to_value(&e.body).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"error": "no such job", "code": "not_found"})
        );
    }

    #[test]
    fn a_field_error_names_the_field() {
        let e = ApiError::bad_request("invalid_mode", "mode must be sync or batch", Some("mode"));
        let json = serde_json::to_value(&e.body).unwrap();
        assert_eq!(json["field"], "mode");
        assert_eq!(e.status, 400);
    }
}
