use super::*;
use crate::anthropic::{Content, InputBlock, InputMessage, Role};
use serde_json::json;

fn req(model: &str) -> MessagesRequest {
    MessagesRequest::new(
        model,
        1_000,
        vec![InputMessage::user(Content::Text("hi".into()))],
    )
}

fn m(id: &str) -> &'static Model {
    find(id).unwrap()
}

fn field(r: &MessagesRequest, id: &str) -> Option<&'static str> {
    check(r, m(id)).err().map(|e| e.field)
}

#[test]
fn sonnet_5_5_refuses_the_five_settings_of_its_migration_guide() {
    let id = "claude-sonnet-5-5";
    let mut r = req(id);
    r.thinking = Some(Thinking::Enabled {
        budget_tokens: 2_000,
        display: None,
    });
    r.max_tokens = 4_000;
    assert_eq!(field(&r, id), Some("thinking"));
    let mut r = req(id);
    r.messages.push(InputMessage {
        role: Role::Assistant,
        content: Content::Text("{".into()),
    });
    assert_eq!(field(&r, id), Some("messages"));
    let mut r = req(id);
    r.tool_choice = Some(ToolChoice::Any {
        disable_parallel_tool_use: None,
    });
    assert_eq!(field(&r, id), Some("tool_choice"));
    let mut r = req(id);
    r.thinking = Some(Thinking::Disabled);
    assert_eq!(field(&r, id), Some("thinking"));
}

#[test]
fn api_version_2026_10_21_refuses_sampling_on_every_model_even_at_its_defaults() {
    for id in ["claude-sonnet-5-5", "claude-sonnet-4-6", "claude-haiku-4-5"] {
        let mut r = req(id);
        r.temperature = Some(1.0);
        assert_eq!(field(&r, id), Some("temperature"), "{id}");
        let mut r = req(id);
        r.top_p = Some(0.99);
        assert_eq!(field(&r, id), Some("top_p"), "{id}");
        let mut r = req(id);
        r.top_k = Some(5);
        assert_eq!(field(&r, id), Some("top_k"), "{id}");
    }
    // A request stored before the move is sent without them.
    let mut r = req("claude-sonnet-4-6");
    r.temperature = Some(0.2);
    let sent = without_removed(r);
    assert_eq!(check(&sent, m("claude-sonnet-4-6")), Ok(()));
}

#[test]
fn api_version_2026_10_21_refuses_assistant_documents_and_user_citations() {
    let id = "claude-sonnet-4-6";
    let document: InputBlock = serde_json::from_value(json!({
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": "a note"}
    }))
    .unwrap();
    let mut r = req(id);
    r.messages.push(InputMessage {
        role: Role::Assistant,
        content: Content::Blocks(vec![document.clone()]),
    });
    r.messages
        .push(InputMessage::user(Content::Text("And?".into())));
    let refused = check(&r, m(id)).unwrap_err();
    assert_eq!(refused.field, "messages");
    assert!(
        refused
            .message
            .starts_with("messages[1].content[0]: a document block in an assistant message"),
        "{}",
        refused.message
    );
    // In a user message a document is what it is for.
    let mut r = req(id);
    r.messages = vec![InputMessage::user(Content::Blocks(vec![document]))];
    assert_eq!(check(&r, m(id)), Ok(()));
    // A user text block with citations is refused; with an empty list it is not.
    let cited = |citations: Value| -> InputBlock {
        serde_json::from_value(json!({"type": "text", "text": "as quoted", "citations": citations}))
            .unwrap()
    };
    let mut r = req(id);
    r.messages = vec![InputMessage::user(Content::Blocks(vec![cited(
        json!([{"type": "char_location", "cited_text": "x"}]),
    )]))];
    let refused = check(&r, m(id)).unwrap_err();
    assert!(
        refused.message.contains("citations in a user message"),
        "{}",
        refused.message
    );
    r.messages = vec![InputMessage::user(Content::Blocks(vec![cited(json!([]))]))];
    assert_eq!(check(&r, m(id)), Ok(()));
}

#[test]
fn older_models_accept_what_the_5_x_models_refuse() {
    let id = "claude-sonnet-4-6";
    let mut r = req(id);
    r.max_tokens = 4_000;
    r.thinking = Some(Thinking::Enabled {
        budget_tokens: 1_024,
        display: None,
    });
    r.tool_choice = Some(ToolChoice::Tool {
        name: "x".into(),
        disable_parallel_tool_use: None,
    });
    assert_eq!(field(&r, id), None);
}

#[test]
fn effort_and_output_limits_are_per_model() {
    let mut r = req("claude-haiku-4-5");
    r.output_config = Some(OutputConfig {
        effort: Some(Effort::Low),
        format: None,
    });
    assert_eq!(field(&r, "claude-haiku-4-5"), Some("output_config.effort"));
    let mut r = req("claude-sonnet-4-6");
    r.output_config = Some(OutputConfig {
        effort: Some(Effort::Xhigh),
        format: None,
    });
    assert_eq!(field(&r, "claude-sonnet-4-6"), Some("output_config.effort"));
    let mut r = req("claude-haiku-4-5");
    r.max_tokens = 64_001;
    assert_eq!(field(&r, "claude-haiku-4-5"), Some("max_tokens"));
    r.max_tokens = 64_000;
    assert_eq!(field(&r, "claude-haiku-4-5"), None);
}

#[test]
fn haiku_5_5_disables_thinking_only_at_high_effort_or_below() {
    let id = "claude-haiku-5-5";
    let mut r = req(id);
    r.thinking = Some(Thinking::Disabled);
    assert_eq!(field(&r, id), None);
    r.output_config = Some(OutputConfig {
        effort: Some(Effort::Max),
        format: None,
    });
    assert_eq!(field(&r, id), Some("thinking"));
}

#[test]
fn classification_is_low_effort_structured_and_leaves_room_to_think() {
    let shaped = classification(req("claude-sonnet-5-5"), json!({"type": "object"}));
    let config = shaped.output_config.clone().unwrap();
    assert_eq!(config.effort, Some(Effort::Low));
    assert!(config.format.is_some());
    assert_eq!(shaped.max_tokens, 1_000 + crate::models::THINKING_ROOM);
    assert_eq!(check(&shaped, m("claude-sonnet-5-5")), Ok(()));
    // No effort parameter, thinking off by default: nothing to add but the schema.
    let old = classification(req("claude-haiku-4-5"), json!({"type": "object"}));
    assert_eq!(old.max_tokens, 1_000);
    assert_eq!(old.output_config.as_ref().unwrap().effort, None);
    assert_eq!(check(&old, m("claude-haiku-4-5")), Ok(()));
    // Never a sampling parameter.
    let v = serde_json::to_value(&shaped).unwrap();
    assert!(v.get("temperature").is_none());
}

#[test]
fn a_fallback_drops_what_the_new_model_refuses() {
    let mut r = req("claude-sonnet-4-6");
    r.temperature = Some(0.0);
    r.top_k = Some(3);
    r.thinking = Some(Thinking::Enabled {
        budget_tokens: 1_024,
        display: None,
    });
    r.output_config = Some(OutputConfig {
        effort: Some(Effort::Max),
        format: None,
    });
    r.tool_choice = Some(ToolChoice::Any {
        disable_parallel_tool_use: None,
    });
    r.max_tokens = 128_000;
    let to = conform(r.clone(), "claude-sonnet-5-5");
    assert_eq!(check(&to, m("claude-sonnet-5-5")), Ok(()));
    assert!(matches!(to.thinking, Some(Thinking::Adaptive { .. })));
    let to = conform(r, "claude-haiku-4-5");
    assert_eq!(check(&to, m("claude-haiku-4-5")), Ok(()));
    assert_eq!(to.max_tokens, 64_000);
    assert_eq!(to.output_config, None);
}

#[test]
fn every_catalog_model_accepts_its_own_classification_shape() {
    for model in crate::models::CATALOG {
        let shaped = classification(req(model.id), json!({"type": "object"}));
        assert_eq!(check(&shaped, model), Ok(()), "{}", model.id);
    }
}
