use super::*;
use crate::pdf::PdfInfo;

fn req(text: &str, max_tokens: u32) -> Parsed {
    Parsed {
        model: "claude-sonnet-4-6".into(),
        spec: crate::models::lookup("claude-sonnet-4-6").unwrap(),
        asks: crate::shape::Asks {
            think: Think::Off,
            effort: "high",
            json_schema: false,
        },
        schema: None,
        max_tokens,
        system: String::new(),
        turns: vec![(Role::User, text.into())],
        documents: vec![],
        base64_documents: 0,
        file_documents: 0,
        input_tokens: 10,
        cache: None,
        markers: vec![],
        prompt_hash: 0,
        fast: false,
    }
}

fn tidy() -> Knobs {
    Knobs {
        fence_rate: 0.0,
        commentary_rate: 0.0,
        ..Knobs::default()
    }
}

#[test]
fn the_same_request_gets_the_same_answer() {
    let k = Knobs::default();
    assert_eq!(
        answer(&req("hello there", 100), &k),
        answer(&req("hello there", 100), &k)
    );
}

#[test]
fn a_small_max_tokens_truncates_and_says_so() {
    let a = answer(&req("tell me everything about queues", 3), &tidy());
    assert_eq!(a.stop_reason, "max_tokens");
    assert_eq!(a.output_tokens, 3);
    assert!(tokens::estimate(&a.text) <= 3);
}

#[test]
fn thinking_comes_first_counts_against_max_tokens_and_grows_with_effort() {
    let mut r = req("Explain queues in detail, please, with examples.", 4_000);
    r.spec = crate::models::lookup("claude-sonnet-5-5").unwrap();
    r.asks.think = Think::On {
        budget: None,
        summarized: false,
    };
    let high = answer(&r, &tidy());
    assert!(high.thinking_tokens > 0);
    assert_eq!(high.stop_reason, "end_turn");
    assert_eq!(
        high.output_tokens,
        high.thinking_tokens + count(&r, &high.text)
    );
    r.asks.effort = "low";
    assert_eq!(
        answer(&r, &tidy()).thinking_tokens,
        0,
        "a short prompt at low effort"
    );
    r.asks.effort = "max";
    assert!(answer(&r, &tidy()).thinking_tokens > high.thinking_tokens);
    // A small max_tokens: thinking uses it all, no text.
    r.max_tokens = 100;
    let only = answer(&r, &tidy());
    assert_eq!((only.text.as_str(), only.output_tokens), ("", 100));
    assert_eq!(only.stop_reason, "max_tokens");
}

#[test]
fn a_structured_answer_is_tidy_json_of_the_schemas_shape() {
    let mut r = req("Name three colours.", 500);
    r.asks.json_schema = true;
    r.schema = Some(serde_json::json!({"type": "object", "properties": {
        "colours": {"type": "array"}, "note": {"type": "string"}, "level": {"enum": ["a", "b"]}}}));
    let v: serde_json::Value = serde_json::from_str(&answer(&r, &Knobs::default()).text).unwrap();
    assert_eq!(v["colours"], serde_json::json!([]));
    assert_eq!(v["level"], "a");
    let always = Knobs {
        fence_rate: 1.0,
        commentary_rate: 1.0,
        ..Knobs::default()
    };
    let mut f = req("<feedback>It crashes</feedback>", 500);
    f.asks.json_schema = true;
    assert!(answer(&f, &always).text.starts_with('{'));
}

#[test]
fn feedback_gets_a_json_analysis_derived_from_the_text() {
    let a = answer(
        &req("Classify: <feedback>The dark mode toggle stopped working after the last update.</feedback>", 500),
        &tidy(),
    );
    let v: serde_json::Value = serde_json::from_str(&a.text).unwrap();
    assert_eq!(v["category"], "bug");
    assert_eq!(v["sentiment"], "negative");
    assert_eq!(v["urgency"], "medium");
    assert_eq!(
        v["summary"],
        "The dark mode toggle stopped working after the last update"
    );
    let praise = answer(
        &req("<feedback>I love the new editor, thanks!</feedback>", 500),
        &tidy(),
    );
    let v: serde_json::Value = serde_json::from_str(&praise.text).unwrap();
    assert_eq!(v["sentiment"], "positive");
}

#[test]
fn untidy_json_appears_at_the_configured_rates() {
    let always = Knobs {
        fence_rate: 1.0,
        commentary_rate: 1.0,
        ..Knobs::default()
    };
    let a = answer(
        &req("<feedback>Slow export, please fix ASAP</feedback>", 500),
        &always,
    );
    assert!(a.text.starts_with("```json\n"));
    assert!(a.text.contains("```\n\nLet me know"));
    let half = Knobs {
        fence_rate: 0.5,
        commentary_rate: 0.0,
        ..Knobs::default()
    };
    let fenced = (0..400)
        .filter(|i| {
            answer(
                &req(&format!("<feedback>item {i} is broken</feedback>"), 500),
                &half,
            )
            .text
            .starts_with("```")
        })
        .count();
    assert!(
        (140..=260).contains(&fenced),
        "{fenced} of 400 fenced at rate 0.5"
    );
}

#[test]
fn documents_get_a_summary_with_the_page_count() {
    let mut r = req("Summarize this document.", 500);
    r.documents = vec![PdfInfo {
        pages: 7,
        title: Some("Plan".into()),
    }];
    let a = answer(&r, &tidy());
    assert!(a.text.contains("7-page"), "{}", a.text);
    r.turns[0].1 = "Extract as JSON.".into();
    let v: serde_json::Value = serde_json::from_str(&answer(&r, &tidy()).text).unwrap();
    assert_eq!(v["page_count"], 7);
    assert_eq!(v["title"], "Plan");
}
