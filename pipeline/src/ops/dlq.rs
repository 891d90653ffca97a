//! DLQ triage: the list's filters, the replay rules and edits, and what the page shows.

use serde::{Deserialize, Serialize};

use crate::anthropic::MessagesRequest;
use crate::error::ApiError;
use crate::jobs::Cursor;
use crate::outcome::ErrorClass;
use crate::status::{Kind, Lane, Mode, Status};

/// The Dead letters list's filter (from the query string, or the bulk replay's body).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct DlqFilter {
    /// `dead_lettered` (default), `failed`, or `all` (both).
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub error_class: Option<String>,
    #[serde(default)]
    pub user: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    /// Ended at or after (epoch ms).
    #[serde(default)]
    pub from: Option<i64>,
    /// Ended before (epoch ms).
    #[serde(default)]
    pub to: Option<i64>,
}

impl DlqFilter {
    /// The values `status` may take: one of the two ends the triage page lists, or both.
    pub const STATUSES: [&'static str; 3] = ["dead_lettered", "failed", "all"];

    /// Checks the filter's values (400 naming the field otherwise).
    pub fn validate(&self) -> Result<(), ApiError> {
        if let Some(s) = &self.status {
            if !DlqFilter::STATUSES.contains(&s.as_str()) {
                return Err(ApiError::bad_request(
                    "invalid_status",
                    "status must be dead_lettered, failed or all",
                    Some("status"),
                ));
            }
        }
        if let Some(c) = &self.error_class {
            if ErrorClass::parse(c).is_none() {
                return Err(ApiError::bad_request(
                    "invalid_error_class",
                    format!(
                        "error_class must be one of {}",
                        ErrorClass::ALL.map(|c| c.as_str()).join(", ")
                    ),
                    Some("error_class"),
                ));
            }
        }
        if let Some(u) = &self.user {
            crate::identity::UserId::parse(u)
                .map_err(|e| ApiError::bad_request("invalid_user", e, Some("user")))?;
        }
        if self
            .model
            .as_deref()
            .is_some_and(|m| m.is_empty() || m.len() > 100)
        {
            return Err(ApiError::bad_request(
                "invalid_model",
                "model must be 1 to 100 characters",
                Some("model"),
            ));
        }
        Ok(())
    }

    /// The statuses the filter covers.
    pub fn statuses(&self) -> &'static [Status] {
        match self.status.as_deref() {
            Some(s) if s == Status::Failed.as_str() => &[Status::Failed],
            Some("all") => &[Status::DeadLettered, Status::Failed],
            _ => &[Status::DeadLettered],
        }
    }
}

/// One dead-lettered (or failed) job on the triage page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DlqItem {
    pub id: String,
    pub user_id: String,
    pub kind: Kind,
    pub status: Status,
    pub priority: Lane,
    pub mode: Mode,
    pub model: Option<String>,
    pub attempts: u32,
    pub error: Option<String>,
    pub error_class: Option<crate::outcome::ErrorClass>,
    /// The first 200 characters of the input (feedback text, prompt, or the PDF's name).
    pub preview: String,
    pub created_at: i64,
    pub completed_at: Option<i64>,
    pub replay_of: Option<String>,
    pub replayed_to: Option<String>,
    /// Where the replay is now (so the page can follow it to the end).
    #[serde(default)]
    pub replay_status: Option<Status>,
    pub attempt_log: Vec<crate::dto::AttemptView>,
    pub audit: Vec<AuditEntry>,
}

/// Something an admin did to a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AuditEntry {
    pub at: i64,
    pub actor: String,
    pub action: String,
    pub detail: Option<String>,
}

/// `GET /api/dlq`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DlqList {
    pub items: Vec<DlqItem>,
    pub next_cursor: Option<String>,
    /// Dead-lettered jobs now (not discarded), whatever the filter.
    pub dead_lettered: u64,
}

/// The edits of edit-then-replay.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReplayEdit {
    pub model: Option<String>,
    pub max_tokens: Option<u32>,
}

impl ReplayEdit {
    /// From the replay's body (empty = no edits) at `now_ms`: a model must be in the catalog
    /// and not retired; `max_tokens` is checked against the model when the request is built.
    pub fn parse(body: &[u8], now_ms: i64) -> Result<ReplayEdit, ApiError> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(ReplayEdit::default());
        }
        let obj = crate::error::json_object(body)?;
        let mut edit = ReplayEdit::default();
        for (k, v) in &obj {
            match k.as_str() {
                "model" if v.is_null() => {}
                "model" => {
                    edit.model = Some(crate::models::parse_model(Some(v), now_ms)?.id.to_owned());
                }
                "max_tokens" if v.is_null() => {}
                "max_tokens" => {
                    let n = v
                        .as_u64()
                        .filter(|n| (1..=MAX_OUTPUT as u64).contains(n))
                        .ok_or_else(|| {
                            ApiError::bad_request(
                                "invalid_max_tokens",
                                format!("max_tokens must be a whole number from 1 to {MAX_OUTPUT}"),
                                Some("max_tokens"),
                            )
                        })?;
                    edit.max_tokens = Some(n as u32);
                }
                other => {
                    return Err(ApiError::bad_request(
                        "unknown_field",
                        format!("unknown field {other} (a replay may change model and max_tokens)"),
                        Some(other),
                    ))
                }
            }
        }
        Ok(edit)
    }

    pub fn is_empty(&self) -> bool {
        self.model.is_none() && self.max_tokens.is_none()
    }

    /// Only prompt jobs carry their own max_tokens (feedback and PDF jobs use the product's).
    pub fn check_kind(&self, kind: Kind) -> Result<(), ApiError> {
        if self.max_tokens.is_some() && kind != Kind::Prompt {
            return Err(ApiError::bad_request(
                "invalid_max_tokens",
                "max_tokens can only be changed on prompt jobs",
                Some("max_tokens"),
            ));
        }
        Ok(())
    }

    /// A prompt job's request as replayed: sent to the edited model (what that model refuses
    /// dropped or converted, as for a fallback, `crate::shape::conform`) with the edited
    /// `max_tokens`; checked against its model when the replay is built.
    pub fn apply(&self, request: MessagesRequest) -> MessagesRequest {
        let mut request = match &self.model {
            Some(m) => crate::shape::conform(request, m),
            None => request,
        };
        if let Some(n) = self.max_tokens {
            request.max_tokens = n;
        }
        request
    }

    /// The model a feedback or PDF job is replayed on: the edited one, else the one it ran on,
    /// else the product's default.
    pub fn model_for(&self, original: Option<&str>) -> String {
        self.model
            .as_deref()
            .or(original)
            .unwrap_or(crate::models::DEFAULT_MODEL)
            .to_owned()
    }
}

/// The largest `max_tokens` of any model (each model's own limit is checked on its request).
const MAX_OUTPUT: u32 = 128_000;

/// Whether a job may be replayed: dead-lettered, failed, expired or canceled, and not already
/// replayed. Completed → 409; still going → 409.
pub fn check_replayable(status: Status, replayed_to: Option<&str>) -> Result<(), ApiError> {
    if let Some(to) = replayed_to {
        return Err(ApiError::new(
            409,
            "already_replayed",
            format!("this job was already replayed as {to}"),
            None,
        ));
    }
    match status {
        Status::DeadLettered | Status::Failed | Status::Expired | Status::Canceled => Ok(()),
        Status::Completed => Err(ApiError::new(
            409,
            "completed",
            "this job completed; there is nothing to replay",
            None,
        )),
        other => Err(ApiError::new(
            409,
            "not_ended",
            format!(
                "this job is {} — only ended jobs can be replayed",
                other.as_str()
            ),
            None,
        )),
    }
}

/// The bulk replay's pace: replay i of a call is delivered `i / per_s` seconds later, so a replay
/// storm reaches the lanes at a bounded rate.
pub fn replay_delay_s(i: usize, per_s: u32) -> u32 {
    (i as u32) / per_s.max(1)
}

/// The most jobs one bulk replay call takes.
pub const MAX_BULK_REPLAY: u32 = 100;

/// `POST /api/dlq/:id/replay` and the bulk replay's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReplayAck {
    pub replayed: Vec<Replayed>,
    /// Matching jobs left for another call (the bulk replay takes at most 100 per call).
    #[serde(default)]
    pub more: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Replayed {
    pub original: String,
    pub job_id: String,
    pub poll_url: String,
}

/// The DLQ list's cursor (ended time, id), newest first.
pub fn dlq_cursor(completed_at: i64, id: &str) -> Cursor {
    Cursor {
        created_at: completed_at,
        id: id.to_owned(),
    }
}

/// The first `n` characters of an input, on one line.
pub fn preview(text: &str, n: usize) -> String {
    let one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(n + 1)
        .collect();
    if one_line.chars().count() > n {
        format!("{}…", one_line.chars().take(n).collect::<String>())
    } else {
        one_line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-12-01.
    const NOW_TEST: i64 = 1_796_083_200_000;

    #[test]
    fn an_edit_moves_the_request_and_the_model() {
        let req = crate::feedback::request(crate::models::DEFAULT_MODEL, "It froze.");
        assert_eq!(ReplayEdit::default().apply(req.clone()), req);
        let edit = ReplayEdit {
            model: Some("claude-haiku-5-5".into()),
            max_tokens: Some(77),
        };
        let edited = edit.apply(req);
        assert_eq!(
            (edited.model.as_str(), edited.max_tokens),
            ("claude-haiku-5-5", 77)
        );
        assert_eq!(
            edit.model_for(Some("claude-sonnet-5-5")),
            "claude-haiku-5-5"
        );
        let keep = ReplayEdit::default();
        assert_eq!(
            keep.model_for(Some("claude-sonnet-5-5")),
            "claude-sonnet-5-5"
        );
        assert_eq!(keep.model_for(None), crate::models::DEFAULT_MODEL);
    }

    #[test]
    fn replay_rules() {
        assert!(check_replayable(Status::DeadLettered, None).is_ok());
        assert!(check_replayable(Status::Failed, None).is_ok());
        assert_eq!(
            check_replayable(Status::Completed, None)
                .unwrap_err()
                .status,
            409
        );
        assert_eq!(
            check_replayable(Status::Running, None).unwrap_err().status,
            409
        );
        assert_eq!(
            check_replayable(Status::DeadLettered, Some("j2"))
                .unwrap_err()
                .status,
            409
        );
        let e = ReplayEdit::parse(br#"{"model":"claude-haiku-5-5","max_tokens":50}"#, NOW_TEST)
            .unwrap();
        assert_eq!(
            (e.model.as_deref(), e.max_tokens),
            (Some("claude-haiku-5-5"), Some(50))
        );
        assert!(e.check_kind(Kind::Prompt).is_ok());
        assert_eq!(e.check_kind(Kind::Feedback).unwrap_err().status, 400);
        assert!(ReplayEdit::parse(b"", NOW_TEST).unwrap().is_empty());
        for bad in [
            &br#"{"model":""}"#[..],
            br#"{"max_tokens":0}"#,
            br#"{"temperature":1}"#,
            b"[1]",
            br#"{"model":"a b"}"#,
            br#"{"model":"claude-sonnet-4-5"}"#,
        ] {
            assert_eq!(ReplayEdit::parse(bad, NOW_TEST).unwrap_err().status, 400);
        }
        assert_eq!(
            (0..12).map(|i| replay_delay_s(i, 5)).collect::<Vec<_>>(),
            [0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2]
        );
    }

    #[test]
    fn dlq_filter_sql_and_validation() {
        let f = DlqFilter {
            status: Some("all".into()),
            error_class: Some("overloaded".into()),
            user: Some("ann".into()),
            from: Some(5),
            ..DlqFilter::default()
        };
        f.validate().unwrap();
        assert_eq!(f.statuses(), [Status::DeadLettered, Status::Failed]);
        for bad in [
            DlqFilter {
                status: Some("completed".into()),
                ..DlqFilter::default()
            },
            DlqFilter {
                error_class: Some("nope".into()),
                ..DlqFilter::default()
            },
            DlqFilter {
                user: Some("a b".into()),
                ..DlqFilter::default()
            },
        ] {
            assert_eq!(bad.validate().unwrap_err().status, 400);
        }
    }

    #[test]
    fn previews_are_one_line_and_bounded() {
        assert_eq!(preview("a\nb", 10), "a b");
        assert_eq!(preview("abcdef", 3), "abc…");
        assert_eq!(preview("ééé", 3), "ééé");
    }
}
