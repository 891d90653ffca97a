//! Anthropic wire types: what the Worker sends and reads, and what the simulator serves.
//!
//! Field names and shapes follow the published Messages API (`POST /v1/messages`); optional
//! fields are skipped when absent so requests stay byte-minimal.
//!
//! # Layout
//! - `request`: what is sent (Messages, count_tokens).
//! - `response`: what a model answers (Message, content blocks, stop reasons, usage).
//! - `errors`: the error envelope.
//! - `batches`: the Message Batches API.
//! - [`admin`]: the Usage & Cost Admin API's cost report (reconciliation).
//! - [`files`]: the Files API (PDFs uploaded once, referenced by `file_id`).
//! - [`inline`]: a PDF sent as base64 without the Worker holding it (a reference, expanded in JS).
//! - [`jsonl`]: a batch's JSONL results read line by line as they arrive, resumable.

/// The API version header every request carries — Messages, count_tokens, Message Batches, Files,
/// Models and the Admin API's cost report: `2026-10-21` (release notes, 2026-10-21; platform.claude.com/docs/en/api/versioning,
/// read 2026-12-06): "The temperature, top_p, and top_k request parameters are removed"; "A
/// request that places a document block directly in an assistant message returns a 400 error";
/// "Sending a text block with a non-empty citations array in a user message … returns a 400
/// error". `crate::shape::check` refuses all three in a caller's request before it is stored.
/// The version also renames some Admin API fields; the cost report's reference as rendered for
/// `2026-10-21` (platform.claude.com/docs/en/api/admin/cost_report, read 2026-12-06) still names
/// every field reconciliation reads (`data`, `has_more`, `next_page`, `starting_at`,
/// `ending_at`, `results[].amount`, `currency`, `description`, `cost_type`, `model`,
/// `service_tier`, `token_type`, `workspace_id`), so the renames are elsewhere in the Admin API
/// (`crate::anthropic::admin`), and a missing one fails the parse loudly.
pub const API_VERSION: &str = "2026-10-21";

/// Header names of the Messages API.
pub mod header {
    pub const API_KEY: &str = "x-api-key";
    pub const VERSION: &str = "anthropic-version";
    pub const REQUEST_ID: &str = "request-id";
    pub const RETRY_AFTER: &str = "retry-after";
}

/// The `anthropic-ratelimit-*` header families: `<prefix>-limit`, `-remaining`, `-reset`.
pub const RATE_LIMIT_FAMILIES: [&str; 3] = [
    "anthropic-ratelimit-requests",
    "anthropic-ratelimit-input-tokens",
    "anthropic-ratelimit-output-tokens",
];

pub mod admin;
mod batches;
mod errors;
pub mod files;
pub mod inline;
pub mod jsonl;
mod request;
mod response;

pub use batches::*;
pub use errors::*;
pub use request::*;
pub use response::*;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_request_with_string_and_block_content_parses() {
        let req: MessagesRequest = serde_json::from_value(json!({
            "model": "claude-sonnet-4-5", "max_tokens": 100,
            "system": "be brief",
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
            ]
        }))
        .unwrap();
        assert_eq!(req.messages.len(), 2);
        assert_eq!(req.system, Some(Content::Text("be brief".into())));
    }

    #[test]
    fn a_message_without_cache_fields_still_parses() {
        let m: Message = serde_json::from_value(json!({
            "id": "msg_1", "type": "message", "role": "assistant",
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            "model": "m", "stop_reason": "end_turn", "stop_sequence": null,
            "usage": {"input_tokens": 3, "output_tokens": 2}
        }))
        .unwrap();
        assert_eq!(m.text(), "ab");
        assert_eq!(m.usage.cache_read_input_tokens, 0);
    }

    #[test]
    fn a_count_tokens_body_carries_only_the_input() {
        let mut r = MessagesRequest::new(
            "m",
            10,
            vec![InputMessage::user(Content::Text("hi".into()))],
        );
        r.stop_sequences = Some(vec!["END".into()]);
        r.metadata = Some(Metadata {
            user_id: Some("u".into()),
        });
        r.thinking = Some(Thinking::Adaptive { display: None });
        let v = serde_json::to_value(CountTokensRequest::from(&r)).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["messages", "model", "thinking"]);
    }

    #[test]
    fn usage_survives_a_trip_through_metadata() {
        let u = Usage {
            input_tokens: 1,
            output_tokens: 2,
            cache_creation_input_tokens: 3,
            cache_read_input_tokens: 4,
            cache_creation: None,
            speed: None,
        };
        let m: std::collections::HashMap<String, String> = u.to_metadata().into_iter().collect();
        assert_eq!(Usage::from_metadata(|k| m.get(k).cloned()), Some(u));
        assert_eq!(Usage::from_metadata(|_| None), None);
    }

    #[test]
    fn batch_results_of_every_kind_parse() {
        let jsonl = concat!(
            r#"{"custom_id":"a","result":{"type":"succeeded","message":{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"model":"m","stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}}"#,
            "\n",
            r#"{"custom_id":"b","result":{"type":"errored","error":{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}}}"#,
            "\n",
            r#"{"custom_id":"c","result":{"type":"canceled"}}"#,
            "\n",
            r#"{"custom_id":"d","result":{"type":"expired"}}"#,
            "\n",
            "not json\n",
        );
        let lines = parse_results(jsonl);
        assert_eq!(lines.len(), 5);
        assert!(matches!(
            lines[0].as_ref().unwrap().result,
            BatchResult::Succeeded { .. }
        ));
        match &lines[1].as_ref().unwrap().result {
            BatchResult::Errored { error } => {
                assert_eq!(error.error.kind, ErrorType::InvalidRequestError)
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(lines[2].as_ref().unwrap().result, BatchResult::Canceled);
        assert_eq!(lines[3].as_ref().unwrap().result, BatchResult::Expired);
        assert!(lines[4].as_ref().unwrap_err().contains("line 5"));
    }

    #[test]
    fn error_bodies_have_the_published_shape() {
        let e = ErrorResponse::new(ErrorType::OverloadedError, "Overloaded", None);
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
        );
        assert_eq!(ErrorType::OverloadedError.status(), 529);
        for t in [
            ErrorType::InvalidRequestError,
            ErrorType::AuthenticationError,
            ErrorType::PermissionError,
            ErrorType::NotFoundError,
            ErrorType::RequestTooLarge,
            ErrorType::RateLimitError,
            ErrorType::ApiError,
            ErrorType::OverloadedError,
        ] {
            assert_eq!(ErrorType::for_status(t.status()), t);
        }
        assert_eq!(ErrorType::RequestTooLarge.status(), 413);
    }
}
