//! Incident tools (issue 36): an admin acts on every job matching a filter in one request —
//! cancel or expire the work that has not run, replay what ended badly, pause what a pause can
//! hold — with a dry run that counts first, bounded slices (one request never does more than
//! [`CANCEL_SLICE`] cancels or [`REPLAY_SLICE`] replays: the next request goes on where it
//! stopped, so each stays inside an invocation's subrequests and D1 queries), and an audit
//! entry per request.
//!
//! `POST /api/ops/bulk` takes a [`BulkRequest`] and answers a [`BulkReport`]; `GET
//! /api/ops/bulk` lists the audit. The filter's fields are ANDed; the status defaults to every
//! status the action can act on (and may only narrow it).

use serde::{Deserialize, Serialize};

use crate::error::{json_object, reject_unknown_fields, ApiError};
use crate::outcome::ErrorClass;
use crate::status::{Lane, Mode, Status};

/// Cancels or expiries per request: one set-based update of at most this many rows (a D1
/// statement, whatever the slice), so the bound is D1's rows written per request, not
/// subrequests.
pub const CANCEL_SLICE: u32 = 500;
/// Replays per request: each is a new job through the producer (a few D1 statements and a queue
/// send), as the Dead letters page's replay-all (`crate::ops::dlq::MAX_BULK_REPLAY`).
pub const REPLAY_SLICE: u32 = crate::ops::dlq::MAX_BULK_REPLAY;

/// What a bulk request does to the jobs its filter matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Queued jobs end `canceled` (never run, never billed).
    Cancel,
    /// Queued jobs end `expired`.
    Expire,
    /// Dead-lettered and failed jobs are replayed (a new job each, `replay_of` the original).
    Replay,
    /// The filter's one lane, model or user is paused (`crate::pause`): a pause holds those.
    Pause,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Cancel => "cancel",
            Action::Expire => "expire",
            Action::Replay => "replay",
            Action::Pause => "pause",
        }
    }

    /// The statuses the action can act on.
    pub fn acts_on(self) -> &'static [Status] {
        match self {
            Action::Cancel | Action::Expire | Action::Pause => &[Status::Queued],
            Action::Replay => &[Status::DeadLettered, Status::Failed],
        }
    }

    /// At most this many jobs per request.
    pub fn slice(self) -> u32 {
        match self {
            Action::Replay => REPLAY_SLICE,
            _ => CANCEL_SLICE,
        }
    }
}

/// Which jobs: every field given must hold (times are the job's creation, epoch ms).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct BulkFilter {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Narrows the action's statuses ([`Action::acts_on`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub status: Vec<Status>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lane: Option<Lane>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_class: Option<ErrorClass>,
    /// Created at or after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_from: Option<i64>,
    /// Created before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_to: Option<i64>,
}

/// `POST /api/ops/bulk`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BulkRequest {
    pub action: Action,
    #[serde(default)]
    pub filter: BulkFilter,
    /// Count only (the default: acting takes `"dry_run": false`).
    #[serde(default = "yes")]
    pub dry_run: bool,
    /// Why, for the audit and the jobs' error.
    #[serde(default)]
    pub reason: Option<String>,
}

fn yes() -> bool {
    true
}

/// A bulk request checked: its filter's statuses settled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub action: Action,
    pub filter: BulkFilter,
    pub dry_run: bool,
    pub reason: String,
}

impl BulkRequest {
    /// Reads and checks a body: a JSON object with known fields, a filter that says something
    /// (acting on every job of the system is not an incident tool), statuses the action can act
    /// on, a range in order, a tag and a user as they are written elsewhere.
    pub fn parse(body: &[u8], actor: &str) -> Result<Plan, ApiError> {
        let obj = json_object(body)?;
        reject_unknown_fields(&obj, &["action", "filter", "dry_run", "reason"])?;
        let req: BulkRequest = serde_json::from_value(serde_json::Value::Object(obj))
            .map_err(|e| invalid(format!("the request is invalid: {e}"), None))?;
        let mut f = req.filter;
        if f == BulkFilter::default() {
            return Err(invalid(
                "the filter matches every job: name at least one of user, tag, model, status, \
                 lane, mode, error_class, created_from, created_to",
                Some("filter"),
            ));
        }
        if let Some(s) = f.status.iter().find(|s| !req.action.acts_on().contains(s)) {
            return Err(invalid(
                format!(
                    "{} acts on {} jobs, not {s}",
                    req.action.as_str(),
                    names(req.action)
                ),
                Some("filter.status"),
            ));
        }
        if f.status.is_empty() {
            f.status = req.action.acts_on().to_vec();
        }
        if let (Some(a), Some(b)) = (f.created_from, f.created_to) {
            if a >= b {
                return Err(invalid(
                    "created_from must be before created_to",
                    Some("filter.created_from"),
                ));
            }
        }
        if let Some(t) = &f.tag {
            f.tag = Some(crate::tags::parse_filter(t)?);
        }
        if let Some(u) = &f.user {
            let u =
                crate::identity::UserId::parse(u).map_err(|e| invalid(e, Some("filter.user")))?;
            f.user = Some(u.as_str().to_owned());
        }
        if req.action == Action::Pause {
            pause_scope(&f)?;
        }
        let reason = req
            .reason
            .filter(|r| !r.trim().is_empty())
            .unwrap_or_else(|| format!("{} by {actor}", past(req.action)));
        Ok(Plan {
            action: req.action,
            filter: f,
            dry_run: req.dry_run,
            reason: reason.chars().take(500).collect(),
        })
    }
}

fn invalid(message: impl Into<String>, field: Option<&str>) -> ApiError {
    ApiError::bad_request("invalid_bulk", message, field)
}

fn names(a: Action) -> String {
    a.acts_on()
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(" and ")
}

fn past(a: Action) -> &'static str {
    match a {
        Action::Cancel => "canceled",
        Action::Expire => "expired",
        Action::Replay => "replayed",
        Action::Pause => "paused",
    }
}

/// What a pause by filter holds: a pause holds one lane, one model or one user
/// (`crate::pause::Scope`), so the filter must name exactly one of them and nothing else.
pub fn pause_scope(f: &BulkFilter) -> Result<(crate::pause::Scope, String), ApiError> {
    use crate::pause::Scope;
    let named = [
        f.lane.map(|l| (Scope::Lane, l.as_str().to_owned())),
        f.model.clone().map(|m| (Scope::Model, m)),
        f.user.clone().map(|u| (Scope::User, u)),
    ];
    let mut named = named.into_iter().flatten();
    let others = f.tag.is_some()
        || f.mode.is_some()
        || f.error_class.is_some()
        || f.created_from.is_some()
        || f.created_to.is_some();
    match (named.next(), named.next(), others) {
        (Some(one), None, false) => Ok(one),
        _ => Err(invalid(
            "a pause holds one lane, one model or one user: the filter must name exactly one \
             of them and nothing else",
            Some("filter"),
        )),
    }
}

/// `POST /api/ops/bulk`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BulkReport {
    pub action: Action,
    pub dry_run: bool,
    /// Jobs the filter matched before this request acted (all of them, not only this slice).
    pub matched: u64,
    /// Jobs this request acted on (0 on a dry run).
    pub acted: u64,
    /// Matching jobs left for the next request (`matched` less `acted`, as counted).
    pub remaining: u64,
    /// The filter as it was applied (statuses settled).
    pub filter: BulkFilter,
    /// The audit entry's id.
    pub audit_id: String,
    /// Replays: the new jobs' ids.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replayed: Vec<String>,
}

/// One audit entry, as `GET /api/ops/bulk` lists it (newest first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BulkAudit {
    pub id: String,
    pub at: i64,
    pub actor: String,
    pub action: Action,
    pub dry_run: bool,
    pub matched: u64,
    pub acted: u64,
    pub reason: String,
    pub filter: BulkFilter,
}

/// `GET /api/ops/bulk`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BulkAuditList {
    pub items: Vec<BulkAudit>,
}

#[cfg(test)]
mod tests;
