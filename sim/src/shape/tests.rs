use super::*;
use crate::models::lookup;
use serde_json::json;

fn run(model: &str, extra: Value) -> Result<Asks, String> {
    let mut body = json!({"model": model, "max_tokens": 4096,
        "messages": [{"role": "user", "content": "hi"}]});
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    check(
        body.as_object().unwrap(),
        lookup(model).unwrap(),
        Some(4096),
        "2023-06-01",
    )
    .map_err(|e| e.message)
}

#[test]
fn sonnet_5_5_answers_the_five_400s_of_its_migration_guide() {
    let m = "claude-sonnet-5-5";
    assert!(run(
        m,
        json!({"thinking": {"type": "enabled", "budget_tokens": 2048}})
    )
    .unwrap_err()
    .contains("thinking.type.enabled"));
    assert_eq!(
        run(m, json!({"temperature": 0})).unwrap_err(),
        "temperature is deprecated for this model."
    );
    assert!(run(m, json!({"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "{"}]}))
        .unwrap_err()
        .contains("prefill"));
    assert!(run(m, json!({"tool_choice": {"type": "any"}}))
        .unwrap_err()
        .starts_with("tool_choice"));
    assert!(run(m, json!({"thinking": {"type": "disabled"}}))
        .unwrap_err()
        .contains("between_tools"));
    // Adaptive thinking runs when the request says nothing.
    assert!(matches!(run(m, json!({})).unwrap().think, Think::On { .. }));
    assert_eq!(
        run(
            m,
            json!({"thinking": {"type": "between_tools"}, "output_config": {"effort": "low"}})
        )
        .unwrap()
        .think,
        Think::Off
    );
}

#[test]
fn older_models_take_what_the_new_ones_refuse() {
    let m = "claude-sonnet-4-6";
    let asks = run(
        m,
        json!({"temperature": 0.2, "top_k": 5, "thinking": {"type": "enabled", "budget_tokens": 1024}, "tool_choice": {"type": "any"}}),
    )
    .unwrap();
    assert_eq!(
        asks.think,
        Think::On {
            budget: Some(1024),
            summarized: true
        }
    );
    assert_eq!(
        run("claude-haiku-4-5", json!({})).unwrap().think,
        Think::Off
    );
    assert!(run(
        "claude-haiku-4-5",
        json!({"output_config": {"effort": "low"}})
    )
    .is_err());
    assert!(run(
        "claude-haiku-4-5",
        json!({"thinking": {"type": "adaptive"}})
    )
    .is_err());
}

#[test]
fn the_2026_10_21_version_removes_sampling_everywhere() {
    let body = json!({"model": "claude-sonnet-4-6", "max_tokens": 10, "temperature": 1,
        "messages": [{"role": "user", "content": "hi"}]});
    let e = check(
        body.as_object().unwrap(),
        lookup("claude-sonnet-4-6").unwrap(),
        Some(10),
        VERSION_2026_10_21,
    )
    .unwrap_err();
    assert_eq!(e.message, "temperature: Extra inputs are not permitted");
}

#[test]
fn the_2026_10_21_version_refuses_assistant_documents_and_user_citations_and_the_old_one_does_not()
{
    let doc = json!({"type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": "a note"}});
    let cited = json!({"type": "text", "text": "as quoted",
        "citations": [{"type": "char_location", "cited_text": "x"}]});
    let cases = [
        (
            json!([{"role": "user", "content": "hi"}, {"role": "assistant", "content": [doc]},
                {"role": "user", "content": "and?"}]),
            "messages.1.content.0: document blocks are not permitted in assistant messages",
        ),
        (
            json!([{"role": "user", "content": [cited]}]),
            "messages.0.content.0.citations: citations are not permitted on text blocks in user messages",
        ),
    ];
    for (messages, message) in cases {
        let body = json!({"model": "claude-sonnet-4-6", "max_tokens": 10, "messages": messages});
        let m = lookup("claude-sonnet-4-6").unwrap();
        let e = check(body.as_object().unwrap(), m, Some(10), VERSION_2026_10_21).unwrap_err();
        assert_eq!(e.message, message);
        assert!(check(body.as_object().unwrap(), m, Some(10), "2023-06-01").is_ok());
    }
}

#[test]
fn unknown_top_level_fields_are_refused() {
    assert_eq!(
        run("claude-opus-5-5", json!({"temprature": 1})).unwrap_err(),
        "temprature: Extra inputs are not permitted"
    );
}
