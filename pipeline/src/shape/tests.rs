use super::*;
use crate::anthropic::{Content, InputMessage, Role};
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
    r.temperature = Some(0.0);
    assert_eq!(field(&r, id), Some("temperature"));
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
    // The defaults themselves are accepted.
    let mut r = req(id);
    r.temperature = Some(1.0);
    assert_eq!(field(&r, id), None);
}

#[test]
fn older_models_accept_what_the_5_x_models_refuse() {
    let id = "claude-sonnet-4-6";
    let mut r = req(id);
    r.max_tokens = 4_000;
    r.temperature = Some(0.2);
    r.top_k = Some(5);
    r.thinking = Some(Thinking::Enabled {
        budget_tokens: 1_024,
        display: None,
    });
    r.tool_choice = Some(ToolChoice::Tool {
        name: "x".into(),
        disable_parallel_tool_use: None,
    });
    assert_eq!(field(&r, id), None);
    let mut h = req("claude-haiku-4-5");
    h.temperature = Some(0.2);
    h.top_p = Some(0.5);
    assert_eq!(field(&h, "claude-haiku-4-5"), Some("top_p"));
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
