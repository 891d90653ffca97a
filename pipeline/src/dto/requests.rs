//! The JSON bodies the producers and the admin endpoints accept, as types: the SPA and the test
//! client build requests from them, and each parser's tests prove it accepts what they send.
//! The parsers themselves stay hand-written (`feedback::parse_input`, `prompt::parse_input`,
//! `identity::parse_key_input`) so that every refusal is a 400 naming its field in words.
//! `PUT /api/usage/budget` takes [`crate::ops::budgets::BudgetSetting`], a replay takes
//! [`crate::ops::dlq::ReplayEdit`] and a bulk replay [`crate::ops::dlq::DlqFilter`].

use serde::{Deserialize, Serialize};

use crate::anthropic::{Content, InputMessage, Metadata, OutputConfig, Thinking, ToolChoice};
use crate::identity::Role;
use crate::status::{Lane, Mode};

/// `POST /feedback`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FeedbackRequest {
    pub text: String,
    /// `sync` (the default) or `batch`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
    /// A short token saying where the feedback came from (`api` when absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// A current catalog model (the default model when absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Retried once on this model when the first one refuses (`stop_reason: "refusal"`): a
    /// current catalog model other than `model` (the operator's `REFUSAL_FALLBACKS` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_model: Option<String>,
    /// Expire it when it has not run this many seconds after submission.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in_s: Option<u64>,
    /// Where its final view is posted when it ends (as on [`JobRequest`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback_url: Option<String>,
    /// `key=value` labels its cost is also counted under (as on [`JobRequest`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// When the answer is needed, in seconds from now, instead of a `mode`: the job goes
    /// through a Message Batch (half price) while the deadline allows one, else a synchronous
    /// call; a deadline not even a synchronous call can meet is a 400 `deadline_unreachable`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_s: Option<u64>,
    /// The same deadline as an RFC 3339 time (send one of the two).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_at: Option<String>,
}

/// `POST /jobs` and `POST /api/claude`: a prompt (or a whole conversation) and how to run it.
/// Every field but one of `prompt` / `messages` is optional; the Messages parameters are checked
/// against the model before anything is stored.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct JobRequest {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<InputMessage>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<Content>,
    /// `high` (the default) or `bulk`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<Lane>,
    /// The lane's default when absent: `sync` on `high`, `batch` on `bulk`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Retried once on this model when the first one refuses (`stop_reason: "refusal"`): a
    /// current catalog model other than `model` (the operator's `REFUSAL_FALLBACKS` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// The job expires (and is never sent) when it has not started this many seconds after
    /// its submission.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_in_s: Option<u64>,
    /// Where the job's final view is posted when it ends (Standard Webhooks, signed with the
    /// API key's secret); the key's default when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub callback_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking: Option<Thinking>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_config: Option<OutputConfig>,
    /// Tool definitions, as the Messages API takes them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<serde_json::Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Up to 8 `key=value` labels (team, feature, customer): `GET /api/usage/tags` sums cost
    /// per tag, and `GET /jobs?tag=` lists a tag's jobs (`pipeline::tags`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// When the answer is needed, in seconds from now, instead of a `mode`: the job goes
    /// through a Message Batch (half price) while the deadline allows one, else a synchronous
    /// call; a deadline not even a synchronous call can meet is a 400 `deadline_unreachable`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_s: Option<u64>,
    /// The same deadline as an RFC 3339 time (send one of the two).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_at: Option<String>,
    /// `standard` (the default) or `fast`: fast mode, on the models that offer it, for a
    /// synchronous call, priced at the model's fast rates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<crate::anthropic::Speed>,
}

impl JobRequest {
    /// A one-prompt job with every other field at its default.
    pub fn prompt(prompt: impl Into<String>) -> JobRequest {
        JobRequest {
            prompt: Some(prompt.into()),
            ..JobRequest::default()
        }
    }
}

/// `POST /api/keys` (admins): who the new key is for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct KeyRequest {
    pub user_id: String,
    /// `user` when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    /// The default `callback_url` of the jobs the key submits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback_url: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anthropic::{Effort, ThinkingDisplay};

    const NOW: i64 = 1_780_000_000_000;

    fn every_field() -> JobRequest {
        JobRequest {
            prompt: Some("Say hi".into()),
            messages: None,
            system: Some(Content::Text("Be brief.".into())),
            priority: Some(Lane::Bulk),
            mode: Some(Mode::Batch),
            model: Some(crate::models::DEFAULT_MODEL.into()),
            fallback_model: Some("claude-opus-5-5".into()),
            max_tokens: Some(2048),
            expires_in_s: Some(600),
            callback_url: Some("https://hooks.example.com/claude".into()),
            stop_sequences: Some(vec!["END".into()]),
            metadata: Some(Metadata {
                user_id: Some("u-1".into()),
            }),
            thinking: Some(Thinking::Adaptive {
                display: Some(ThinkingDisplay::Summarized),
            }),
            output_config: Some(OutputConfig {
                effort: Some(Effort::Low),
                ..OutputConfig::default()
            }),
            tools: Some(vec![serde_json::json!({
                "name": "lookup", "description": "Looks a word up.",
                "input_schema": {"type": "object", "properties": {}}
            })]),
            tool_choice: Some(ToolChoice::Auto {
                disable_parallel_tool_use: None,
            }),
            tags: Some(vec!["team=search".into(), "customer=acme".into()]),
            // Either is an alternative to `mode` (the parser refuses them together).
            deadline_s: None,
            deadline_at: None,
            // Fast mode is for synchronous calls; this job is a batch one.
            speed: Some(crate::anthropic::Speed::Standard),
        }
    }

    #[test]
    fn a_job_request_names_exactly_the_fields_the_parser_reads() {
        let body = serde_json::to_value(JobRequest {
            messages: Some(vec![InputMessage::user(Content::Text("Hi".into()))]),
            deadline_s: Some(3600),
            deadline_at: Some("2026-12-01T18:00:00Z".into()),
            ..every_field()
        })
        .unwrap();
        let mut sent: Vec<&str> = body
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        let mut read = crate::prompt::FIELDS.to_vec();
        sent.sort_unstable();
        read.sort_unstable();
        assert_eq!(sent, read);
    }

    #[test]
    fn the_prompt_parser_accepts_a_job_request_with_every_field_set() {
        let body = serde_json::to_vec(&every_field()).unwrap();
        let input = crate::prompt::parse_input(&body, NOW).unwrap();
        assert_eq!((input.priority, input.mode), (Lane::Bulk, Mode::Batch));
        assert_eq!(input.expires_in_s, Some(600));
        assert_eq!(input.request.max_tokens, 2048);
        assert_eq!(input.tags, ["customer=acme", "team=search"]);
    }

    #[test]
    fn a_deadline_replaces_the_mode_and_refuses_to_sit_beside_it() {
        let with = |extra: serde_json::Value| {
            let mut body = serde_json::json!({"prompt": "Hi"});
            body.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            crate::prompt::parse_input(&serde_json::to_vec(&body).unwrap(), NOW)
        };
        let input = with(serde_json::json!({"deadline_s": 600})).unwrap();
        assert_eq!(input.deadline_at, Some(NOW + 600_000));
        // The dearer path until the router answers: the budget reserves the worst case.
        assert_eq!(input.mode, Mode::Sync);
        let at =
            with(serde_json::json!({"deadline_at": crate::clock::format_rfc3339(NOW + 90_000)}))
                .unwrap();
        assert_eq!(at.deadline_at, Some(NOW + 90_000));
        for (body, field) in [
            (
                serde_json::json!({"deadline_s": 600, "mode": "batch"}),
                "mode",
            ),
            (
                serde_json::json!({"deadline_s": 600, "deadline_at": "2026-12-01T18:00:00Z"}),
                "deadline_at",
            ),
            (serde_json::json!({"deadline_s": 0}), "deadline_s"),
            (serde_json::json!({"deadline_s": "soon"}), "deadline_s"),
            (
                serde_json::json!({"deadline_at": "tomorrow"}),
                "deadline_at",
            ),
        ] {
            let e = with(body.clone()).unwrap_err();
            assert_eq!(
                (e.status, e.body.field.as_deref()),
                (400, Some(field)),
                "{body}"
            );
        }
    }

    #[test]
    fn the_smallest_job_request_is_its_prompt() {
        let body = serde_json::to_string(&JobRequest::prompt("Hi")).unwrap();
        assert_eq!(body, r#"{"prompt":"Hi"}"#);
        crate::prompt::parse_input(body.as_bytes(), NOW).unwrap();
    }

    #[test]
    fn the_feedback_parser_accepts_a_feedback_request() {
        let req = FeedbackRequest {
            text: "The export button does nothing.".into(),
            mode: Some(Mode::Batch),
            source: Some("web".into()),
            model: Some(crate::models::DEFAULT_MODEL.into()),
            fallback_model: Some("claude-opus-5-5".into()),
            expires_in_s: Some(60),
            callback_url: Some("https://hooks.example.com/f".into()),
            tags: Some(vec!["feature=export".into()]),
            deadline_s: None,
            deadline_at: None,
        };
        let input = crate::feedback::parse_input(&serde_json::to_vec(&req).unwrap(), NOW).unwrap();
        assert_eq!((input.mode, input.source.as_str()), (Mode::Batch, "web"));
        assert_eq!(input.tags, ["feature=export"]);
    }

    #[test]
    fn the_key_parser_accepts_a_key_request() {
        let req = KeyRequest {
            user_id: "ann".into(),
            role: Some(Role::Admin),
            callback_url: None,
        };
        let (user, role) =
            crate::identity::parse_key_input(&serde_json::to_vec(&req).unwrap()).unwrap();
        assert_eq!((user.as_str(), role), ("ann", Role::Admin));
    }
}
