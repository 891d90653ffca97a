use std::collections::HashMap;

use super::*;
use crate::breaker::Signal;
use crate::models::Model;
use crate::outcome::CallOutcome;

fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k| map.get(k).cloned()
}

fn all_three() -> Routes {
    Routes::from_vars(
        "https://api.anthropic.com/",
        vars(&[
            ("ROUTES", "anthropic, bedrock ,vertex"),
            ("BEDROCK_REGION", "us-east-1"),
            ("VERTEX_PROJECT", "acme-prod"),
            ("VERTEX_LOCATION", "us-east5"),
        ]),
    )
    .unwrap()
}

fn model(id: &str) -> &'static Model {
    crate::models::find(id).unwrap()
}

#[test]
fn the_anthropic_api_alone_unless_routes_are_configured() {
    let r = Routes::from_vars("https://api.anthropic.com", vars(&[])).unwrap();
    assert_eq!(r, Routes::anthropic_only("https://api.anthropic.com"));
    assert!(!r.has_failover());
    assert_eq!(r.primary().provider(), Provider::Anthropic);
}

#[test]
fn routes_read_from_vars_with_the_providers_hosts() {
    let r = all_three();
    assert!(r.has_failover());
    assert_eq!(r.primary().base_url, "https://api.anthropic.com");
    let b = r.get(Provider::Bedrock).unwrap();
    assert_eq!(
        b.base_url,
        "https://bedrock-runtime.us-east-1.amazonaws.com"
    );
    assert!(!b.regional(), "the global profile is the default");
    let v = r.get(Provider::Vertex).unwrap();
    assert_eq!(v.base_url, "https://us-east5-aiplatform.googleapis.com");
    assert!(v.regional());
    assert_eq!(v.price_permille(), 1_100);
    let global = |loc: &str| {
        Routes::from_vars(
            "x",
            vars(&[
                ("ROUTES", "anthropic,vertex"),
                ("VERTEX_PROJECT", "p"),
                ("VERTEX_LOCATION", loc),
            ]),
        )
        .unwrap()
        .get(Provider::Vertex)
        .unwrap()
        .base_url
        .clone()
    };
    assert_eq!(global("global"), "https://aiplatform.googleapis.com");
    assert_eq!(global("eu"), "https://aiplatform.eu.rep.googleapis.com");
}

#[test]
fn bad_route_configuration_is_refused_with_the_var_named() {
    let err = |pairs: &[(&str, &str)]| Routes::from_vars("x", vars(pairs)).unwrap_err();
    assert!(err(&[("ROUTES", "bedrock,anthropic")]).contains("must start with `anthropic`"));
    assert!(err(&[("ROUTES", "anthropic,azure")]).contains("unknown route"));
    assert!(err(&[("ROUTES", "anthropic,bedrock")]).contains("BEDROCK_REGION"));
    assert!(err(&[
        ("ROUTES", "anthropic,bedrock"),
        ("BEDROCK_REGION", "us-east-1"),
        ("BEDROCK_PROFILE", "mars")
    ])
    .contains("BEDROCK_PROFILE"));
    assert!(
        err(&[("ROUTES", "anthropic,vertex"), ("VERTEX_PROJECT", "a/b")])
            .contains("VERTEX_PROJECT")
    );
    assert!(err(&[
        ("ROUTES", "anthropic,vertex,vertex"),
        ("VERTEX_PROJECT", "p")
    ])
    .contains("twice"));
}

#[test]
fn each_route_calls_the_model_by_its_own_id_and_path() {
    let r = all_three();
    let m = model("claude-sonnet-5-5");
    let b = r.get(Provider::Bedrock).unwrap();
    let id = b.model_id(m).unwrap();
    assert_eq!(id, "global.anthropic.claude-sonnet-5-5");
    assert_eq!(
        b.messages_path(&id),
        "/model/global.anthropic.claude-sonnet-5-5/invoke"
    );
    let v = r.get(Provider::Vertex).unwrap();
    let id = v.model_id(model("claude-haiku-4-5-20251001")).unwrap();
    assert_eq!(id, "claude-haiku-4-5@20251001");
    assert_eq!(
        v.messages_path(&id),
        "/v1/projects/acme-prod/locations/us-east5/publishers/anthropic/models/\
         claude-haiku-4-5@20251001:rawPredict"
    );
    assert_eq!(
        r.primary().messages_path("claude-sonnet-5-5"),
        "/v1/messages"
    );
}

#[test]
fn the_body_loses_its_model_and_gains_the_providers_version() {
    let r = all_three();
    let json = r#"{"model":"claude-sonnet-5-5","max_tokens":10,"messages":[]}"#;
    assert_eq!(body_for(r.primary(), json).unwrap(), json);
    let b: serde_json::Value =
        serde_json::from_str(&body_for(r.get(Provider::Bedrock).unwrap(), json).unwrap()).unwrap();
    assert_eq!(b["anthropic_version"], BEDROCK_VERSION);
    assert!(b.get("model").is_none());
    assert_eq!(b["max_tokens"], 10);
    let v: serde_json::Value =
        serde_json::from_str(&body_for(r.get(Provider::Vertex).unwrap(), json).unwrap()).unwrap();
    assert_eq!(v["anthropic_version"], VERTEX_VERSION);
    assert!(body_for(r.get(Provider::Vertex).unwrap(), "[").is_err());
}

#[test]
fn a_route_that_lacks_what_a_request_needs_is_never_a_candidate() {
    let r = all_three();
    let all = vec![Provider::Anthropic, Provider::Bedrock, Provider::Vertex];
    assert_eq!(
        r.candidates(model("claude-sonnet-5-5"), Needs::default()),
        all
    );
    let files = Needs {
        files_api: true,
        ..Needs::default()
    };
    assert_eq!(
        r.candidates(model("claude-sonnet-5-5"), files),
        vec![Provider::Anthropic]
    );
    let fast = Needs {
        fast_mode: true,
        ..Needs::default()
    };
    assert_eq!(
        lacks(Provider::Vertex, model("claude-opus-5-5"), fast),
        Some(Lack::FastMode)
    );
    assert_eq!(
        r.candidates(model("claude-mythos-5-2"), Needs::default()),
        vec![Provider::Anthropic]
    );
}

#[test]
fn bedrock_errors_read_by_their_names() {
    let h = |t: &'static str| move |k: &str| (k == "x-amzn-errortype").then(|| t.to_string());
    let body = r#"{"message":"Too many requests, please wait before trying again."}"#;
    let out = failure(
        Provider::Bedrock,
        429,
        body,
        h("ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/"),
    );
    assert_eq!(
        out,
        CallOutcome::Http {
            status: 429,
            message: "Amazon Bedrock ThrottlingException: Too many requests, please wait \
                      before trying again."
                .into(),
            retry_after_s: None
        }
    );
    let body = r#"{"__type":"com.amazon.coral#ServiceUnavailableException","Message":"down"}"#;
    let out = failure(Provider::Bedrock, 503, body, |_| None);
    assert!(
        matches!(out, CallOutcome::Http { status: 503, ref message, .. }
        if message == "Amazon Bedrock ServiceUnavailableException: down")
    );
    assert_eq!(
        failure(Provider::Bedrock, 408, "{}", |_| None),
        CallOutcome::Timeout
    );
    assert!(matches!(
        failure(Provider::Bedrock, 424, "{}", |_| None),
        CallOutcome::Http { status: 502, .. }
    ));
}

#[test]
fn vertex_errors_in_googles_shape_or_anthropics() {
    let google = r#"{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}"#;
    let out = failure(Provider::Vertex, 401, google, |_| None);
    assert!(
        matches!(&out, CallOutcome::Http { status: 401, message, .. }
        if message == "Google Vertex AI UNAUTHENTICATED: Request had invalid authentication credentials.")
    );
    assert!(refuses_credentials(Provider::Vertex, &out));
    assert_eq!(signal(Provider::Vertex, &out), Signal::Refused);
    let anthropic =
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let out = failure(Provider::Vertex, 529, anthropic, |_| None);
    assert!(
        matches!(&out, CallOutcome::Http { status: 529, message, .. }
        if message == "Google Vertex AI overloaded_error: Overloaded")
    );
    assert_eq!(signal(Provider::Vertex, &out), Signal::Unwell);
}

#[test]
fn only_the_other_routes_read_a_refusal_of_credentials_as_configuration() {
    let forbidden = CallOutcome::Http {
        status: 403,
        message: "x".into(),
        retry_after_s: None,
    };
    assert!(refuses_credentials(Provider::Bedrock, &forbidden));
    assert!(!refuses_credentials(Provider::Anthropic, &forbidden));
    let throttled = CallOutcome::Http {
        status: 429,
        message: "x".into(),
        retry_after_s: Some(3),
    };
    assert!(!refuses_credentials(Provider::Bedrock, &throttled));
    assert_eq!(signal(Provider::Bedrock, &throttled), Signal::Answered);
    assert_eq!(
        signal(Provider::Bedrock, &CallOutcome::Timeout),
        Signal::Unwell
    );
}

#[test]
fn an_answer_on_a_regional_route_costs_ten_percent_more() {
    let r = all_three();
    let message: crate::anthropic::Message = serde_json::from_value(serde_json::json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5",
        "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 1_000_000, "output_tokens": 100_000}
    }))
    .unwrap();
    let now = crate::clock::date_ms(2026, 12, 7).unwrap();
    let list = crate::answer::settle_answer(
        crate::status::Kind::Prompt,
        &message,
        crate::pricing::Tier::Standard,
        now,
    );
    // Sonnet 5.5: $2 / MTok in, $10 / MTok out (PRICING) = $3.
    assert_eq!(list.cost_micros.unwrap().micros(), 3_000_000);
    let global = r.get(Provider::Bedrock).unwrap().settled(list.clone());
    assert_eq!(global.cost_micros.unwrap().micros(), 3_000_000);
    assert_eq!(global.route, Provider::Bedrock);
    let regional = r.get(Provider::Vertex).unwrap().settled(list);
    assert_eq!(regional.cost_micros.unwrap().micros(), 3_300_000);
    assert_eq!(regional.route, Provider::Vertex);
}

#[test]
fn an_inline_pdf_goes_only_where_its_body_fits() {
    let r = all_three();
    let (anthropic, bedrock, vertex) = (
        r.get(Provider::Anthropic).unwrap(),
        r.get(Provider::Bedrock).unwrap(),
        r.get(Provider::Vertex).unwrap(),
    );
    // Base64 of 3 bytes is 4 characters; a partial group still takes 4.
    assert_eq!(inline_body_bytes(0), REQUEST_BESIDE_PDF_BYTES);
    assert_eq!(inline_body_bytes(3), 4 + REQUEST_BESIDE_PDF_BYTES);
    assert_eq!(inline_body_bytes(4), 8 + REQUEST_BESIDE_PDF_BYTES);
    // The largest PDF whose body Bedrock takes: 20 MB less the rest, as base64.
    let fits = (BEDROCK_MAX_BYTES - REQUEST_BESIDE_PDF_BYTES) / 4 * 3;
    assert!(bedrock.takes_inline(fits));
    assert!(!bedrock.takes_inline(fits + 1));
    // 20 MB of PDF: too big for either cloud once in base64; the Anthropic API sets no limit here.
    assert!(!vertex.takes_inline(20_000_000 * 3 / 4 * 2));
    assert!(vertex.takes_inline(20_000_000));
    assert!(!bedrock.takes_inline(20_000_000));
    assert!(anthropic.takes_inline(u64::MAX / 4));
    assert!(bedrock.takes_inline(0));
}
