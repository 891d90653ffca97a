//! How a call to Claude ended, and when it failed, what kind of failure it was: the words a
//! job's row keeps and the class the Dead letters page filters on, decided together when the
//! failure happens. The lowest of the call decisions: `retry`, `delivery`, `batching` and
//! `answer` build on it.

use serde::{Deserialize, Serialize};

/// How a call to the Anthropic API ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallOutcome {
    /// A 2xx answer.
    Success,
    /// An error answer with its status, the API's error message and `retry-after` seconds.
    Http {
        status: u16,
        message: String,
        retry_after_s: Option<u32>,
    },
    /// Our own timeout fired before the API answered.
    Timeout,
    /// The request could not be sent, or no answer arrived.
    Network(String),
    /// A 2xx answer whose body could not be decoded. It was paid for: the job fails once with
    /// the reason and the raw body is kept; it is never retried as a network error.
    Undecodable { reason: String, raw: String },
}

/// A human reason for a transient failure, kept on the row while the job waits for its retry.
pub fn describe(outcome: &CallOutcome) -> String {
    match outcome {
        CallOutcome::Success => "ok".into(),
        CallOutcome::Http {
            status, message, ..
        } => format!("Anthropic API {status}: {message}"),
        CallOutcome::Timeout => "the call to the Anthropic API timed out".into(),
        CallOutcome::Network(e) => format!("network error calling the Anthropic API: {e}"),
        CallOutcome::Undecodable { reason, .. } => reason.clone(),
    }
}

/// How one call made for a job ended, as its attempt log records it (`job_attempts.outcome`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum AttemptOutcome {
    /// Answered, and the job completed.
    Completed,
    /// The job failed with this call (a permanent error, an unusable answer).
    Failed,
    /// The model refused; the job moved to its fallback model.
    Refused,
    /// A failure worth another try: the job waits for its retry.
    Retry,
    /// A failure worth another try, but the job's deliveries were spent.
    DeadLettered,
    /// Sent in a Message Batch (the attempt logs of the first batch-mode jobs).
    Submitted,
}

impl AttemptOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptOutcome::Completed => "completed",
            AttemptOutcome::Failed => "failed",
            AttemptOutcome::Refused => "refused",
            AttemptOutcome::Retry => "retry",
            AttemptOutcome::DeadLettered => "dead_lettered",
            AttemptOutcome::Submitted => "submitted",
        }
    }
}

/// What kind of failure ended a job, from its stored error (the DLQ page filters on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    RateLimited,
    Overloaded,
    ServerError,
    Timeout,
    Network,
    InvalidRequest,
    BatchErrored,
    Expired,
    Unreadable,
    Other,
}

impl ErrorClass {
    pub const ALL: [ErrorClass; 10] = [
        ErrorClass::RateLimited,
        ErrorClass::Overloaded,
        ErrorClass::ServerError,
        ErrorClass::Timeout,
        ErrorClass::Network,
        ErrorClass::InvalidRequest,
        ErrorClass::BatchErrored,
        ErrorClass::Expired,
        ErrorClass::Unreadable,
        ErrorClass::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorClass::RateLimited => "rate_limited",
            ErrorClass::Overloaded => "overloaded",
            ErrorClass::ServerError => "server_error",
            ErrorClass::Timeout => "timeout",
            ErrorClass::Network => "network",
            ErrorClass::InvalidRequest => "invalid_request",
            ErrorClass::BatchErrored => "batch_errored",
            ErrorClass::Expired => "expired",
            ErrorClass::Unreadable => "unreadable",
            ErrorClass::Other => "other",
        }
    }

    pub fn parse(s: &str) -> Option<ErrorClass> {
        ErrorClass::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// Classifies a stored error text (as written by the consumer, the poller and the cron).
    pub fn of(error: &str) -> ErrorClass {
        let e = error.to_ascii_lowercase();
        let status = api_status(&e);
        match status {
            Some(429) => return ErrorClass::RateLimited,
            Some(529) => return ErrorClass::Overloaded,
            Some(s) if s >= 500 => return ErrorClass::ServerError,
            Some(s) if (400..500).contains(&s) => return ErrorClass::InvalidRequest,
            _ => {}
        }
        if e.contains("timed out") || e.contains("timeout") {
            ErrorClass::Timeout
        } else if e.contains("network error") {
            ErrorClass::Network
        } else if e.contains("expired") {
            ErrorClass::Expired
        } else if e.contains("batch") && (e.contains("errored") || e.contains("error")) {
            ErrorClass::BatchErrored
        } else if e.contains("could not be read") || e.contains("unreadable") {
            ErrorClass::Unreadable
        } else if e.contains("overloaded") {
            ErrorClass::Overloaded
        } else if e.contains("rate limit") || e.contains("rate_limit") {
            ErrorClass::RateLimited
        } else if e.contains("invalid_request") || e.contains("password") {
            ErrorClass::InvalidRequest
        } else {
            ErrorClass::Other
        }
    }
}

impl ErrorClass {
    /// The class of a call's outcome, taken when it happens (the text of [`ErrorClass::of`] is
    /// for rows stored before classes were recorded).
    pub fn of_outcome(outcome: &CallOutcome) -> ErrorClass {
        match outcome {
            CallOutcome::Http { status: 429, .. } => ErrorClass::RateLimited,
            CallOutcome::Http { status: 529, .. } => ErrorClass::Overloaded,
            CallOutcome::Http { status, .. } if *status >= 500 => ErrorClass::ServerError,
            CallOutcome::Http { status, .. } if (400..500).contains(status) => {
                ErrorClass::InvalidRequest
            }
            CallOutcome::Http { message, .. } => ErrorClass::of(message),
            CallOutcome::Timeout => ErrorClass::Timeout,
            CallOutcome::Network(_) => ErrorClass::Network,
            CallOutcome::Undecodable { reason, .. } => ErrorClass::of(reason),
            CallOutcome::Success => ErrorClass::Other,
        }
    }
}

/// Why a job failed, and the class of it: decided together, when the failure happens, and
/// stored together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub reason: String,
    pub class: ErrorClass,
}

impl Failure {
    /// The failure a call's outcome is.
    pub fn of_outcome(outcome: &CallOutcome) -> Failure {
        Failure {
            reason: describe(outcome),
            class: ErrorClass::of_outcome(outcome),
        }
    }

    /// A failure known by its reason only (an unusable answer, a batch line, a request that
    /// cannot be built): classified once, as it happens.
    pub fn new(reason: impl Into<String>) -> Failure {
        let reason = reason.into();
        Failure {
            class: ErrorClass::of(&reason),
            reason,
        }
    }
}

/// The HTTP status in "Anthropic API 529: …" (the consumer's description of an error answer).
fn api_status(e: &str) -> Option<u16> {
    let rest = &e[e.find("anthropic api ")? + "anthropic api ".len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attempt_outcome_is_stored_as_it_is_written() {
        use AttemptOutcome::*;
        for o in [Completed, Failed, Refused, Retry, DeadLettered, Submitted] {
            let json = serde_json::to_value(o).unwrap();
            assert_eq!(json, o.as_str());
            assert_eq!(serde_json::from_value::<AttemptOutcome>(json).unwrap(), o);
        }
    }

    #[test]
    fn error_classes_from_stored_errors() {
        let cases = [
            (
                "attempt 3 failed, retrying in 4 s: Anthropic API 529: Overloaded",
                ErrorClass::Overloaded,
            ),
            ("Anthropic API 429: rate limited", ErrorClass::RateLimited),
            ("Anthropic API 500: boom", ErrorClass::ServerError),
            (
                "Anthropic API 400: prompt is too long",
                ErrorClass::InvalidRequest,
            ),
            (
                "the call to the Anthropic API timed out",
                ErrorClass::Timeout,
            ),
            (
                "network error calling the Anthropic API: reset",
                ErrorClass::Network,
            ),
            ("the batch request expired", ErrorClass::Expired),
            ("the answer could not be read", ErrorClass::Unreadable),
            ("retries exhausted", ErrorClass::Other),
        ];
        for (text, class) in cases {
            assert_eq!(ErrorClass::of(text), class, "{text}");
            assert_eq!(ErrorClass::parse(class.as_str()), Some(class));
        }
    }
}
