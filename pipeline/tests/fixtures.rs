//! Response bodies shaped like the official documentation, decoded by `pipeline`. They are
//! written from the docs and the SDK types — never from the simulator's output — so that the
//! simulator cannot drift the decoder away from the real API.
//!
//! Sources:
//! - HANDLING: platform.claude.com/docs/en/build-with-claude/handling-stop-reasons (the minimal
//!   message, verbatim; the stop-reason table)
//! - SDK: anthropics/anthropic-sdk-typescript `src/resources/messages/messages.ts` (the content
//!   block union: thinking, redacted_thinking, tool_use with `caller`, server_tool_use, the
//!   server-tool result blocks; `stop_details`; `usage` with `service_tier`, `inference_geo`,
//!   `server_tool_use`, `output_tokens_details.thinking_tokens`)
//! - S55-MIG: platform.claude.com/docs/en/models/sonnet-5-5/migration-guide ("thinking blocks
//!   arrive with an empty `thinking` field and a `signature`"; refusals)
//! - H55-MIG: platform.claude.com/docs/en/models/haiku-5-5/migration-guide ("a request with a
//!   small `max_tokens` can stop with `stop_reason: \"max_tokens\"` after a `thinking` block and
//!   before any text")
//! - ERRORS: platform.claude.com/docs/en/api/errors (the error shape and types)
//! - BATCHES: platform.claude.com/docs/en/api/retrieving-message-batch-results (the succeeded
//!   lines, verbatim) and the SDK's `MessageBatchIndividualResponse` for the other result types
//! - RATE-LIMITS: platform.claude.com/docs/en/api/rate-limits (the `anthropic-ratelimit-*` names)

use pipeline::answer::{judge, settle, Settlement, Verdict};
use pipeline::anthropic::{
    parse_results, BatchResult, ErrorResponse, ErrorType, KnownBlock, Message, MessageBatch,
    OutputBlock, StopReason,
};
use pipeline::status::Kind;

fn message(json: &str) -> Message {
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

/// HANDLING, verbatim (it has no `model`: the docs' example leaves it out, so it is added).
const MINIMAL: &str = r#"{
  "id": "msg_01234",
  "type": "message",
  "role": "assistant",
  "model": "claude-sonnet-5-5",
  "content": [
    {
      "type": "text",
      "text": "Here's the answer to your question..."
    }
  ],
  "stop_reason": "end_turn",
  "stop_sequence": null,
  "usage": {
    "input_tokens": 100,
    "output_tokens": 50
  }
}"#;

/// A 5.x answer with adaptive thinking on by default and `display` omitted (S55-MIG), and
/// every usage field of the current SDK type.
const THINKING_THEN_TEXT: &str = r#"{
  "id": "msg_01ThinkThenText",
  "type": "message",
  "role": "assistant",
  "model": "claude-sonnet-5-5",
  "content": [
    {"type": "thinking", "thinking": "", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
    {"type": "text", "text": "{\"sentiment\":\"negative\",\"category\":\"bug\",\"urgency\":\"medium\",\"summary\":\"The toggle broke.\"}", "citations": null}
  ],
  "stop_reason": "end_turn",
  "stop_sequence": null,
  "stop_details": null,
  "container": null,
  "usage": {
    "input_tokens": 412,
    "output_tokens": 380,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
    "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
    "server_tool_use": null,
    "service_tier": "standard",
    "inference_geo": "global",
    "output_tokens_details": {"thinking_tokens": 341}
  }
}"#;

/// A client tool call with the `caller` field the current SDK type requires.
const TOOL_USE: &str = r#"{
  "id": "msg_01ToolUse",
  "type": "message",
  "role": "assistant",
  "model": "claude-haiku-5-5",
  "content": [
    {"type": "text", "text": "Let me look that up."},
    {"type": "tool_use", "id": "toolu_01D7FLrfh4GYq7yT1ULFeyMV", "name": "get_stock_price",
     "input": {"ticker": "^GSPC"}, "caller": {"type": "direct"}}
  ],
  "stop_reason": "tool_use",
  "stop_sequence": null,
  "usage": {"input_tokens": 500, "output_tokens": 60}
}"#;

/// A refusal: HTTP 200 with `stop_reason: "refusal"` and `stop_details` (S55-MIG, SDK).
const REFUSAL: &str = r#"{
  "id": "msg_01Refusal",
  "type": "message",
  "role": "assistant",
  "model": "claude-sonnet-5-5",
  "content": [],
  "stop_reason": "refusal",
  "stop_sequence": null,
  "stop_details": {"type": "refusal", "category": "cyber", "explanation": null},
  "usage": {"input_tokens": 90, "output_tokens": 3}
}"#;

/// Thinking used the whole `max_tokens` (H55-MIG).
const THINKING_ONLY: &str = r#"{
  "id": "msg_01MaxTokens",
  "type": "message",
  "role": "assistant",
  "model": "claude-haiku-5-5",
  "content": [{"type": "thinking", "thinking": "", "signature": "sig"}],
  "stop_reason": "max_tokens",
  "stop_sequence": null,
  "usage": {"input_tokens": 120, "output_tokens": 256, "output_tokens_details": {"thinking_tokens": 256}}
}"#;

/// Server tools: a web search the API ran, its result block, then text with citations.
const SERVER_TOOLS: &str = r#"{
  "id": "msg_01Search",
  "type": "message",
  "role": "assistant",
  "model": "claude-opus-5-5",
  "content": [
    {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj"},
    {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {"query": "claude pricing"},
     "caller": {"type": "direct"}},
    {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "caller": {"type": "direct"},
     "content": [{"type": "web_search_result", "url": "https://example.com", "title": "Pricing",
                  "encrypted_content": "abc", "page_age": null}]},
    {"type": "text", "text": "Sonnet 5.5 costs $2 per million input tokens.",
     "citations": [{"type": "web_search_result_location", "cited_text": "$2 / MTok",
                    "encrypted_index": "x", "title": "Pricing", "url": "https://example.com"}]},
    {"type": "container_upload", "file_id": "file_011"}
  ],
  "stop_reason": "end_turn",
  "stop_sequence": null,
  "usage": {"input_tokens": 2000, "output_tokens": 200, "server_tool_use": {"web_search_requests": 1, "web_fetch_requests": 0}}
}"#;

/// A block type and a stop reason from the future: kept, never a decode failure.
const FROM_THE_FUTURE: &str = r#"{
  "id": "msg_01Future",
  "type": "message",
  "role": "assistant",
  "model": "claude-sonnet-5-5",
  "content": [
    {"type": "hologram", "frames": [1, 2, 3]},
    {"type": "text", "text": "Still readable."}
  ],
  "stop_reason": "quantum_interruption",
  "stop_sequence": null,
  "usage": {"input_tokens": 10, "output_tokens": 5, "carbon_grams": 0.01}
}"#;

#[test]
fn the_minimal_documented_message_decodes_and_is_the_answer() {
    let m = message(MINIMAL);
    assert_eq!(m.text(), "Here's the answer to your question...");
    assert_eq!(m.stop_reason, Some(StopReason::EndTurn));
    assert_eq!(judge(&m), Verdict::Usable);
}

#[test]
fn thinking_before_text_is_skipped_and_the_new_usage_fields_are_tolerated() {
    let m = message(THINKING_THEN_TEXT);
    assert_eq!(m.content[0].kind(), "thinking");
    assert!(m.text().starts_with("{\"sentiment\""));
    // Thinking is part of output_tokens, the billed total.
    assert_eq!(m.usage.output_tokens, 380);
    match settle(Kind::Feedback, &m) {
        Settlement::Complete { result: Some(a) } => assert!(a.contains("\"bug\"")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_tool_use_answer_keeps_its_text_and_its_tool_call() {
    let m = message(TOOL_USE);
    assert_eq!(m.stop_reason, Some(StopReason::ToolUse));
    assert_eq!(m.text(), "Let me look that up.");
    assert!(matches!(
        &m.content[1],
        OutputBlock::Known(KnownBlock::ToolUse { name, .. }) if name == "get_stock_price"
    ));
}

#[test]
fn a_refusal_fails_its_job_once() {
    let m = message(REFUSAL);
    assert_eq!(m.stop_reason, Some(StopReason::Refusal));
    assert!(
        matches!(settle(Kind::Prompt, &m), Settlement::Fail { reason } if reason.contains("declined"))
    );
}

#[test]
fn a_thinking_only_answer_fails_its_job_once() {
    let m = message(THINKING_ONLY);
    assert!(!m.has_text());
    assert!(
        matches!(settle(Kind::Prompt, &m), Settlement::Fail { reason } if reason.contains("thinking"))
    );
}

#[test]
fn server_tool_blocks_are_accepted_around_the_text() {
    let m = message(SERVER_TOOLS);
    let kinds: Vec<&str> = m.content.iter().map(OutputBlock::kind).collect();
    assert_eq!(
        kinds,
        [
            "redacted_thinking",
            "server_tool_use",
            "web_search_tool_result",
            "text",
            "container_upload"
        ]
    );
    assert_eq!(m.text(), "Sonnet 5.5 costs $2 per million input tokens.");
}

#[test]
fn an_unknown_block_type_and_an_unknown_stop_reason_do_not_break_decoding() {
    let m = message(FROM_THE_FUTURE);
    assert_eq!(m.content[0].kind(), "hologram");
    assert!(matches!(&m.content[0], OutputBlock::Other(v) if v["frames"][2] == 3));
    assert_eq!(
        m.stop_reason,
        Some(StopReason::Other("quantum_interruption".into()))
    );
    assert_eq!(m.text(), "Still readable.");
    assert_eq!(judge(&m), Verdict::Usable);
    // Kept raw: what is stored is what came.
    let again = serde_json::to_value(&m).unwrap();
    assert_eq!(again["content"][0]["frames"][0], 1);
    assert_eq!(again["stop_reason"], "quantum_interruption");
}

#[test]
fn every_documented_stop_reason_decodes_to_its_own_variant() {
    for (raw, want) in [
        ("end_turn", StopReason::EndTurn),
        ("max_tokens", StopReason::MaxTokens),
        ("stop_sequence", StopReason::StopSequence),
        ("tool_use", StopReason::ToolUse),
        ("pause_turn", StopReason::PauseTurn),
        ("refusal", StopReason::Refusal),
        (
            "model_context_window_exceeded",
            StopReason::ModelContextWindowExceeded,
        ),
    ] {
        let got: StopReason = serde_json::from_value(serde_json::json!(raw)).unwrap();
        assert_eq!(got, want);
        assert_eq!(got.as_str(), raw);
    }
}

#[test]
fn every_documented_error_type_decodes_with_its_status() {
    for (status, kind) in [
        (400, "invalid_request_error"),
        (401, "authentication_error"),
        (402, "billing_error"),
        (403, "permission_error"),
        (404, "not_found_error"),
        (409, "conflict_error"),
        (413, "request_too_large"),
        (429, "rate_limit_error"),
        (500, "api_error"),
        (504, "timeout_error"),
        (529, "overloaded_error"),
    ] {
        let body = format!(
            r#"{{"type":"error","error":{{"type":"{kind}","message":"m"}},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}}"#
        );
        let e: ErrorResponse = serde_json::from_str(&body).unwrap();
        assert_eq!(e.error.kind.status(), status, "{kind}");
        assert_eq!(ErrorType::for_status(status), e.error.kind);
    }
    let future: ErrorResponse = serde_json::from_str(
        r#"{"type":"error","error":{"type":"quota_error","message":"m"},"request_id":null}"#,
    )
    .unwrap();
    assert_eq!(future.error.kind, ErrorType::Other);
}

#[test]
fn batch_result_lines_of_every_type_decode() {
    // BATCHES, the two succeeded lines verbatim; the others from the SDK types.
    let jsonl = concat!(
        r#"{"custom_id":"my-second-request","result":{"type":"succeeded","message":{"id":"msg_014VwiXbi91y3JMjcpyGBHX5","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"Hello again! It's nice to see you. How can I assist you today? Is there anything specific you'd like to chat about or any questions you have?"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":11,"output_tokens":36}}}}"#,
        "\n",
        r#"{"custom_id":"my-first-request","result":{"type":"succeeded","message":{"id":"msg_01FqfsLoHwgeFbguDgpz48m7","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"Hello! How can I assist you today? Feel free to ask me any questions or let me know if there's anything you'd like to chat about."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":34}}}}"#,
        "\n",
        r#"{"custom_id":"req-3","result":{"type":"errored","error":{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 300000 > 128000"},"request_id":"req_01"}}}"#,
        "\n",
        r#"{"custom_id":"req-4","result":{"type":"canceled"}}"#,
        "\n",
        r#"{"custom_id":"req-5","result":{"type":"expired"}}"#,
        "\n",
        r#"{"custom_id":"req-6","result":{"type":"succeeded","message":{"id":"msg_6","type":"message","role":"assistant","model":"claude-sonnet-5-5","content":[{"type":"thinking","thinking":"","signature":"s"},{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":9,"service_tier":"batch"}}}}"#,
        "\n",
        r#"{"custom_id":"req-7","result":{"type":"deferred_to_tomorrow"}}"#,
        "\n",
        r#"{"custom_id":"req-8","result":{"type":"succeeded","message":{"id":"msg_8"}}}"#,
        "\n",
    );
    let lines: Vec<_> = parse_results(jsonl)
        .into_iter()
        .map(|l| l.unwrap())
        .collect();
    assert!(
        matches!(&lines[0].result, BatchResult::Succeeded { message } if message.text().starts_with("Hello again"))
    );
    assert!(matches!(
        &lines[2].result,
        BatchResult::Errored { error } if error.error.kind == ErrorType::InvalidRequestError
    ));
    assert_eq!(lines[3].result, BatchResult::Canceled);
    assert_eq!(lines[4].result, BatchResult::Expired);
    assert!(
        matches!(&lines[5].result, BatchResult::Succeeded { message } if message.text() == "ok")
    );
    assert_eq!(lines[6].result, BatchResult::Unknown);
    assert_eq!(lines[7].custom_id, "req-8");
    assert!(matches!(&lines[7].result, BatchResult::Unreadable { .. }));
}

#[test]
fn the_documented_batch_object_decodes() {
    let batch: MessageBatch = serde_json::from_str(
        r#"{
  "id": "msgbatch_013Zva2CMHLNnXjNJJKqJ2EF",
  "archived_at": "2024-08-20T18:37:24.100435Z",
  "cancel_initiated_at": "2024-08-20T18:37:24.100435Z",
  "created_at": "2024-08-20T18:37:24.100435Z",
  "ended_at": "2024-08-20T18:37:24.100435Z",
  "expires_at": "2024-08-20T18:37:24.100435Z",
  "processing_status": "in_progress",
  "request_counts": {"canceled": 10, "errored": 30, "expired": 10, "processing": 100, "succeeded": 50},
  "results_url": "https://api.anthropic.com/v1/messages/batches/msgbatch_013Zva2CMHLNnXjNJJKqJ2EF/results",
  "type": "message_batch"
}"#,
    )
    .unwrap();
    assert!(!batch.ended());
    assert_eq!(batch.request_counts.errored, 30);
}

#[test]
fn the_rate_limit_headers_are_read_by_their_documented_names() {
    let headers = [
        ("anthropic-ratelimit-requests-limit", "4000"),
        ("anthropic-ratelimit-requests-remaining", "3999"),
        ("anthropic-ratelimit-requests-reset", "2026-12-01T12:00:30Z"),
        ("anthropic-ratelimit-input-tokens-limit", "2000000"),
        ("anthropic-ratelimit-input-tokens-remaining", "1999000"),
        (
            "anthropic-ratelimit-input-tokens-reset",
            "2026-12-01T12:00:01Z",
        ),
        ("anthropic-ratelimit-output-tokens-limit", "400000"),
        ("anthropic-ratelimit-output-tokens-remaining", "399000"),
        (
            "anthropic-ratelimit-output-tokens-reset",
            "2026-12-01T12:00:01Z",
        ),
        ("anthropic-ratelimit-tokens-limit", "2400000"),
        ("retry-after", "1"),
    ];
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
    };
    let reported = pipeline::budget::reported(get);
    assert_eq!(reported.len(), 3);
    assert!(reported
        .iter()
        .all(|r| r.limit.is_some() && r.reset_at.is_some()));
}
