//! Pause and resume: an admin holds a lane, a model or a user's work without redeploying (a
//! model melting down, one user flooding). Paused work stays `queued` and waits without
//! spending a retry — the consumer puts its message back with a delay, the flush leaves it out
//! of Message Batches — and resuming lets it drain at the lanes' normal pace. Work already in a
//! call or inside a Message Batch finishes.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{json_object, reject_unknown_fields, ApiError};
use crate::status::Lane;

/// What a pause holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    Lane,
    Model,
    User,
}

impl Scope {
    pub const ALL: [Scope; 3] = [Scope::Lane, Scope::Model, Scope::User];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Lane => "lane",
            Scope::Model => "model",
            Scope::User => "user",
        }
    }

    pub fn parse(s: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|x| x.as_str() == s)
    }
}

/// One pause, as stored and as `GET /api/pauses` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Pause {
    pub scope: Scope,
    pub value: String,
    pub reason: Option<String>,
    /// The admin who paused it, or `alert` when the DLQ alert did.
    pub paused_by: String,
    pub paused_at: i64,
}

/// `GET /api/pauses`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PauseList {
    pub items: Vec<Pause>,
}

/// `DELETE /api/pauses/{scope}/{value}`: the pause lifted, and the held jobs sent back to
/// their lanes at once (the cron sends any others, a slice per run).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Resumed {
    pub resumed: Pause,
    pub released: usize,
}

/// The longest reason kept.
pub const MAX_REASON_CHARS: usize = 200;

/// A validated `PUT /api/pauses` body: `{"scope","value","reason"?}`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PauseRequest {
    pub scope: Scope,
    pub value: String,
    pub reason: Option<String>,
}

/// Parses and checks a pause: a lane is `high` or `bulk`, a model is in the catalog (retired
/// ones too: their queued jobs may still wait), a user is a valid user id.
pub fn parse_request(body: &[u8]) -> Result<PauseRequest, ApiError> {
    let obj = &json_object(body)?;
    reject_unknown_fields(obj, &["scope", "value", "reason"])?;
    let field = |name: &str, msg: String| ApiError::bad_request("invalid_field", msg, Some(name));
    let text = |name: &str| match obj.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.trim().to_owned())),
        Some(_) => Err(field(name, format!("{name} must be a string"))),
    };
    let scope = text("scope")?
        .as_deref()
        .and_then(Scope::parse)
        .ok_or_else(|| {
            field(
                "scope",
                "scope must be \"lane\", \"model\" or \"user\"".into(),
            )
        })?;
    let value = text("value")?
        .filter(|v| !v.is_empty())
        .ok_or_else(|| field("value", "value is required".into()))?;
    let value = match scope {
        Scope::Lane => Lane::ALL
            .into_iter()
            .find(|l| l.as_str() == value)
            .map(|l| l.as_str().to_owned())
            .ok_or_else(|| field("value", "a lane is \"high\" or \"bulk\"".into()))?,
        Scope::Model => crate::models::find(&value)
            .map(|m| m.id.to_owned())
            .ok_or_else(|| {
                ApiError::bad_request(
                    "unknown_model",
                    format!("{value} is not a model of the catalog"),
                    Some("value"),
                )
            })?,
        Scope::User => crate::identity::UserId::parse(&value)
            .map_err(|e| field("value", e))?
            .as_str()
            .to_owned(),
    };
    let reason = text("reason")?.filter(|r| !r.is_empty());
    if reason
        .as_ref()
        .is_some_and(|r| r.chars().count() > MAX_REASON_CHARS)
    {
        return Err(field(
            "reason",
            format!("reason must be at most {MAX_REASON_CHARS} characters"),
        ));
    }
    Ok(PauseRequest {
        scope,
        value,
        reason,
    })
}

/// The pause that holds a job of this lane, model and user, if any (lane first, then model,
/// then user: the widest is named).
pub fn holding<'a>(
    pauses: &'a [Pause],
    lane: &str,
    model: Option<&str>,
    user: &str,
) -> Option<&'a Pause> {
    let find = |scope: Scope, value: Option<&str>| {
        value.and_then(|v| pauses.iter().find(|p| p.scope == scope && p.value == v))
    };
    find(Scope::Lane, Some(lane))
        .or_else(|| find(Scope::Model, model))
        .or_else(|| find(Scope::User, Some(user)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pause(scope: Scope, value: &str) -> Pause {
        Pause {
            scope,
            value: value.into(),
            reason: None,
            paused_by: "ops".into(),
            paused_at: 0,
        }
    }

    #[test]
    fn a_job_is_held_by_its_lane_its_model_or_its_user() {
        let pauses = [
            pause(Scope::Model, "claude-haiku-5-5"),
            pause(Scope::User, "flood"),
            pause(Scope::Lane, "bulk"),
        ];
        let held = |lane, model, user| holding(&pauses, lane, model, user).map(|p| p.scope);
        assert_eq!(
            held("bulk", Some("claude-haiku-5-5"), "flood"),
            Some(Scope::Lane)
        );
        assert_eq!(
            held("high", Some("claude-haiku-5-5"), "ann"),
            Some(Scope::Model)
        );
        assert_eq!(
            held("high", Some("claude-sonnet-5-5"), "flood"),
            Some(Scope::User)
        );
        assert_eq!(held("high", Some("claude-sonnet-5-5"), "ann"), None);
        assert_eq!(held("high", None, "ann"), None);
        assert_eq!(holding(&[], "high", None, "ann"), None);
    }

    #[test]
    fn a_pause_names_a_real_lane_model_or_user() {
        let ok =
            parse_request(br#"{"scope":"lane","value":"high","reason":" maintenance "}"#).unwrap();
        assert_eq!((ok.scope, ok.value.as_str()), (Scope::Lane, "high"));
        assert_eq!(ok.reason.as_deref(), Some("maintenance"));
        let m = parse_request(br#"{"scope":"model","value":"claude-haiku-5-5"}"#).unwrap();
        assert_eq!(m.value, "claude-haiku-5-5");
        for (body, field) in [
            (r#"{"scope":"queue","value":"high"}"#, "scope"),
            (r#"{"value":"high"}"#, "scope"),
            (r#"{"scope":"lane"}"#, "value"),
            (r#"{"scope":"lane","value":"urgent"}"#, "value"),
            (r#"{"scope":"model","value":"gpt-4o"}"#, "value"),
            (r#"{"scope":"user","value":"has space"}"#, "value"),
            (r#"{"scope":"user","value":7}"#, "value"),
            (r#"{"scope":"user","value":"ann","why":"x"}"#, "why"),
        ] {
            let e = parse_request(body.as_bytes()).unwrap_err();
            assert_eq!(e.status, 400, "{body}");
            assert_eq!(e.body.field.as_deref(), Some(field), "{body}");
        }
        let long = format!(
            r#"{{"scope":"user","value":"ann","reason":"{}"}}"#,
            "x".repeat(201)
        );
        assert_eq!(
            parse_request(long.as_bytes())
                .unwrap_err()
                .body
                .field
                .as_deref(),
            Some("reason")
        );
    }
}
