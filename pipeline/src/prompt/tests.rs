use super::*;
use crate::models::DEFAULT_MODEL;

/// 2026-12-01.
const NOW: i64 = 1_796_083_200_000;

fn input(json: &str) -> Result<PromptInput, ApiError> {
    parse_input(json.as_bytes(), NOW)
}

fn refused(json: serde_json::Value) -> (String, Option<String>) {
    let e = input(&json.to_string()).unwrap_err();
    assert_eq!(e.status, 400, "{json}");
    (e.body.code, e.body.field)
}

#[test]
fn fast_mode_is_for_a_sync_call_on_a_model_that_offers_it() {
    let fast = input(r#"{"prompt":"hi","model":"claude-opus-5-5","speed":"fast"}"#).unwrap();
    assert_eq!(fast.request.speed, Some(crate::anthropic::Speed::Fast));
    let standard = input(r#"{"prompt":"hi","speed":"standard"}"#).unwrap();
    assert_eq!(standard.request.speed, None, "standard is sent as nothing");
    for body in [
        serde_json::json!({"prompt": "hi", "speed": "fast"}),
        serde_json::json!({"prompt": "hi", "model": "claude-opus-5-5", "speed": "fast", "mode": "batch"}),
        serde_json::json!({"prompt": "hi", "model": "claude-opus-5-5", "speed": "fast", "deadline_s": 3600}),
        serde_json::json!({"prompt": "hi", "speed": "turbo"}),
    ] {
        let (_, field) = refused(body);
        assert_eq!(field.as_deref(), Some("speed"));
    }
    // A fallback without fast mode answers at standard speed.
    let moved = crate::shape::conform(fast.request, "claude-sonnet-5-5");
    assert_eq!(moved.speed, None);
}

#[test]
fn defaults_follow_the_contract() {
    let high = input(r#"{"prompt":"hi"}"#).unwrap();
    assert_eq!((high.priority, high.mode), (Lane::High, Mode::Sync));
    assert_eq!(high.model, DEFAULT_MODEL);
    // Room for the answer and for the thinking that runs by default on Sonnet 5.5.
    assert_eq!(
        high.request.max_tokens,
        DEFAULT_MAX_TOKENS + crate::models::THINKING_ROOM
    );
    let old = input(r#"{"prompt":"hi","model":"claude-haiku-4-5"}"#).unwrap();
    assert_eq!(old.request.max_tokens, DEFAULT_MAX_TOKENS);
    assert_eq!(old.request.temperature, None);
    let bulk = input(r#"{"prompt":"hi","priority":"bulk"}"#).unwrap();
    assert_eq!((bulk.priority, bulk.mode), (Lane::Bulk, Mode::Batch));
    let forced = input(r#"{"prompt":"hi","priority":"bulk","mode":"sync"}"#).unwrap();
    assert_eq!(forced.mode, Mode::Sync);
}

#[test]
fn the_prompt_is_required_and_bounded_in_characters() {
    assert_eq!(
        input("{}").unwrap_err().body.field.as_deref(),
        Some("prompt")
    );
    assert!(
        input(&serde_json::json!({"prompt": "é".repeat(MAX_PROMPT_CHARS)}).to_string()).is_ok()
    );
    let over = serde_json::json!({"prompt": "a".repeat(MAX_PROMPT_CHARS + 1)}).to_string();
    assert_eq!(
        input(&over).unwrap_err().body.field.as_deref(),
        Some("prompt")
    );
}

#[test]
fn other_fields_are_validated_naming_the_field() {
    for (body, f) in [
        (r#"{"prompt":"x","priority":"urgent"}"#, "priority"),
        (r#"{"prompt":"x","mode":"later"}"#, "mode"),
        (r#"{"prompt":"x","model":"gpt-4"}"#, "model"),
        (r#"{"prompt":"x","model":5}"#, "model"),
        (
            r#"{"prompt":"x","thinking":{"type":"sometimes"}}"#,
            "thinking",
        ),
        (
            r#"{"prompt":"x","output_config":{"effort":"extreme"}}"#,
            "output_config",
        ),
        (
            r#"{"prompt":"x","tool_choice":{"type":"any"}}"#,
            "tool_choice",
        ),
        (
            r#"{"prompt":"x","tools":[{"description":"no name"}]}"#,
            "tools",
        ),
        (
            r#"{"prompt":"x","stop_sequences":["  "]}"#,
            "stop_sequences",
        ),
        (r#"{"prompt":"x","metadata":{"email":"a@b.c"}}"#, "metadata"),
        (
            r#"{"prompt":"x","messages":[{"role":"user","content":"y"}]}"#,
            "messages",
        ),
        (r#"{"messages":[]}"#, "messages"),
        (
            r#"{"messages":[{"role":"assistant","content":"y"}]}"#,
            "messages",
        ),
        (r#"{"prompt":"x","max_tokens":0}"#, "max_tokens"),
        (r#"{"prompt":"x","max_tokens":"10"}"#, "max_tokens"),
        (r#"{"prompt":"x","expires_in_s":-5}"#, "expires_in_s"),
        (r#"{"prompt":"x","system":5}"#, "system"),
        (r#"{"prompt":7}"#, "prompt"),
    ] {
        assert_eq!(
            input(body).unwrap_err().body.field.as_deref(),
            Some(f),
            "{body}"
        );
    }
}

#[test]
fn an_unknown_or_retired_model_is_refused_listing_the_valid_ids() {
    for model in [
        "gpt-4o",
        "claude-sonnet-4-5",
        "claude-sonnet-4-5-20250929",
        "claude-3-haiku-20240307",
    ] {
        let e = input(&serde_json::json!({"prompt": "x", "model": model}).to_string()).unwrap_err();
        assert_eq!((e.status, e.body.code.as_str()), (400, "unknown_model"));
        assert_eq!(e.body.field.as_deref(), Some("model"));
        assert!(
            e.body.error.contains("claude-sonnet-5-5"),
            "{}",
            e.body.error
        );
        assert!(!e.body.error.contains("claude-sonnet-4-5-20250929,"));
    }
    assert!(input(r#"{"prompt":"x","model":"claude-opus-5-5"}"#).is_ok());
}

#[test]
fn settings_the_model_refuses_are_400s_naming_the_field() {
    use serde_json::json;
    let s55 = "claude-sonnet-5-5";
    for (extra, f) in [
        (
            json!({"thinking": {"type": "enabled", "budget_tokens": 2048}, "max_tokens": 4096}),
            "thinking",
        ),
        (json!({"thinking": {"type": "disabled"}}), "thinking"),
        (
            json!({"tools": [{"name": "t", "input_schema": {"type": "object"}}], "tool_choice": {"type": "tool", "name": "t"}}),
            "tool_choice",
        ),
    ] {
        let mut body = json!({"prompt": "x", "model": s55});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        assert_eq!(
            refused(body),
            ("unsupported_by_model".into(), Some(f.into())),
            "{f}"
        );
    }
    let over = json!({"prompt": "x", "model": "claude-haiku-4-5", "max_tokens": 64_001});
    assert_eq!(refused(over).1.as_deref(), Some("max_tokens"));
    let prefill = json!({"model": s55, "messages": [
        {"role": "user", "content": "Say a JSON"}, {"role": "assistant", "content": "{"}]});
    assert_eq!(refused(prefill).1.as_deref(), Some("messages"));
    // The same settings on a model that takes them.
    let ok = json!({"model": "claude-sonnet-4-6", "prompt": "x", "max_tokens": 4096,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "tools": [{"name": "t", "input_schema": {"type": "object"}}], "tool_choice": {"type": "any"}});
    assert!(input(&ok.to_string()).is_ok());
}

#[test]
fn the_documented_messages_parameters_reach_the_request() {
    let body = serde_json::json!({
        "messages": [{"role": "user", "content": [{"type": "text", "text": "What is 2+2?"}]}],
        "system": "Be brief.", "stop_sequences": ["END"], "metadata": {"user_id": "u-42"},
        "thinking": {"type": "adaptive", "display": "summarized"},
        "output_config": {"effort": "low", "format": {"type": "json_schema", "schema": {"type": "object"}}},
        "tools": [{"name": "calc", "input_schema": {"type": "object"}}], "tool_choice": {"type": "auto"}
    });
    let r = input(&body.to_string()).unwrap().request;
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["stop_sequences"][0], "END");
    assert_eq!(v["metadata"]["user_id"], "u-42");
    assert_eq!(v["thinking"]["type"], "adaptive");
    assert_eq!(v["output_config"]["effort"], "low");
    assert_eq!(v["output_config"]["format"]["type"], "json_schema");
    assert_eq!(v["tools"][0]["name"], "calc");
    assert_eq!(v["tool_choice"]["type"], "auto");
    assert_eq!(v["system"][0]["cache_control"]["type"], "ephemeral");
    assert_eq!(v["messages"][0]["content"][0]["text"], "What is 2+2?");
}

#[test]
fn idempotency_keys_are_bounded_printable_ascii() {
    assert_eq!(
        idempotency_key(Some("order-42")).unwrap().as_deref(),
        Some("order-42")
    );
    assert!(idempotency_key(Some(&"k".repeat(256))).is_err());
    assert!(idempotency_key(Some("tab\there")).is_err());
    assert!(idempotency_key(Some("")).is_err());
    assert_eq!(idempotency_key(None).unwrap(), None);
}

#[test]
fn a_reused_key_replays_the_same_body_and_refuses_another() {
    let h = body_hash(b"{\"prompt\":\"a\"}");
    let stored = Some(StoredKey {
        body_hash: &h,
        job_id: "job-1",
        created_at: 0,
        never_queued: false,
    });
    assert_eq!(
        idempotency(stored, &h, 1000),
        Idempotency::Replay {
            job_id: "job-1".into()
        }
    );
    assert_eq!(
        idempotency(stored, &body_hash(b"{\"prompt\":\"b\"}"), 1000),
        Idempotency::Conflict
    );
    assert_eq!(
        idempotency(stored, &h, IDEMPOTENCY_TTL_MS),
        Idempotency::Fresh
    );
    assert_eq!(idempotency(None, &h, 0), Idempotency::Fresh);
}

#[test]
fn a_key_whose_job_was_never_queued_makes_a_real_job_when_sent_again() {
    let h = body_hash(b"{\"prompt\":\"a\"}");
    let stored = StoredKey {
        body_hash: &h,
        job_id: "job-1",
        created_at: 0,
        never_queued: true,
    };
    assert!(!stored.holds(1));
    assert_eq!(idempotency(Some(stored), &h, 1), Idempotency::Fresh);
    let other = body_hash(b"{\"prompt\":\"b\"}");
    assert_eq!(idempotency(Some(stored), &other, 1), Idempotency::Fresh);
}

#[test]
fn a_body_hashed_in_chunks_has_the_whole_bodys_hash() {
    let body = b"--boundary\r\ncontent of an upload\r\n--boundary--";
    let mut h = BodyHasher::default();
    for chunk in body.chunks(7) {
        h.update(chunk);
    }
    assert_eq!(h.finish(), body_hash(body));
}

#[test]
fn a_prompt_may_not_read_the_workspaces_files() {
    let user = |content: serde_json::Value| serde_json::json!({"messages": [{"role": "user", "content": content}]});
    for block in [
        serde_json::json!({"type": "document", "source": {"type": "file", "file_id": "file_x"}}),
        serde_json::json!({"type": "image", "source": {"type": "file", "file_id": "file_x"}}),
        serde_json::json!({"type": "container_upload", "file_id": "file_x"}),
    ] {
        let content = serde_json::json!([block, {"type": "text", "text": "Read it."}]);
        assert_eq!(
            refused(user(content)),
            ("invalid_field".into(), Some("messages".into())),
            "{block}"
        );
    }
    // Inline documents are still welcome.
    let inline = serde_json::json!([{"type": "document", "source": {"type": "base64",
        "media_type": "application/pdf", "data": "JVBERi0="}}, {"type": "text", "text": "Read it."}]);
    assert!(input(&user(inline).to_string()).is_ok());
}
