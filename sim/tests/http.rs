//! The simulator over real HTTP: shapes, headers and status codes as a client sees them.

use serde_json::{json, Value};

async fn start(config: sim::Config) -> String {
    let (addr, _) = sim::spawn(config).await.unwrap();
    format!("http://{addr}")
}

async fn post(
    base: &str,
    key: Option<&str>,
    body: Value,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut req = reqwest::Client::new()
        .post(format!("{base}/v1/messages"))
        .header("anthropic-version", "2023-06-01")
        .json(&body);
    if let Some(k) = key {
        req = req.header("x-api-key", k);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    (status, headers, resp.json().await.unwrap())
}

fn hello() -> Value {
    json!({"model": "claude-sonnet-4-5", "max_tokens": 64,
           "messages": [{"role": "user", "content": "Say hello"}]})
}

#[tokio::test]
async fn a_valid_request_gets_a_message_with_usage_and_headers() {
    let base = start(sim::Config::default()).await;
    let (status, headers, body) = post(&base, Some("sk-test"), hello()).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["type"], "message");
    assert_eq!(body["role"], "assistant");
    assert!(body["id"].as_str().unwrap().starts_with("msg_"));
    assert_eq!(body["content"][0]["type"], "text");
    assert!(body["usage"]["input_tokens"].as_u64().unwrap() > 0);
    assert!(headers["request-id"].to_str().unwrap().starts_with("req_"));
    for h in [
        "anthropic-ratelimit-requests-limit",
        "anthropic-ratelimit-input-tokens-remaining",
        "anthropic-ratelimit-output-tokens-reset",
    ] {
        assert!(headers.contains_key(h), "missing {h}");
    }
}

#[tokio::test]
async fn a_missing_api_key_is_a_401_authentication_error() {
    let base = start(sim::Config::default()).await;
    let (status, headers, body) = post(&base, None, hello()).await;
    assert_eq!(status, 401);
    assert_eq!(body["type"], "error");
    assert_eq!(body["error"]["type"], "authentication_error");
    assert!(headers.contains_key("request-id"));
}

#[tokio::test]
async fn an_invalid_body_is_a_400_invalid_request_error() {
    let base = start(sim::Config::default()).await;
    let (status, _, body) = post(&base, Some("k"), json!({"model": "claude-x"})).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["type"], "invalid_request_error");
    assert_eq!(body["error"]["message"], "max_tokens: Field required");
}

#[tokio::test]
async fn exceeding_requests_per_minute_is_a_429_with_retry_after() {
    let base = start(sim::Config {
        rpm: 2,
        ..sim::Config::default()
    })
    .await;
    assert_eq!(post(&base, Some("k"), hello()).await.0, 200);
    assert_eq!(post(&base, Some("k"), hello()).await.0, 200);
    let (status, headers, body) = post(&base, Some("k"), hello()).await;
    assert_eq!(status, 429);
    assert_eq!(body["error"]["type"], "rate_limit_error");
    let retry: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=30).contains(&retry), "{retry}");
}

#[tokio::test]
async fn billing_stats_count_only_successful_answers() {
    let base = start(sim::Config::default()).await;
    post(&base, Some("k"), hello()).await;
    post(&base, None, hello()).await;
    let stats: Value = reqwest::get(format!("{base}/_sim/stats"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(stats["messages"], 1);
    assert_eq!(stats["errors"]["401"], 1);
}

#[tokio::test]
async fn an_unknown_path_is_a_404_in_the_api_shape() {
    let base = start(sim::Config::default()).await;
    let resp = reqwest::get(format!("{base}/v1/nothing")).await.unwrap();
    assert_eq!(resp.status().as_u16(), 404);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["type"], "not_found_error");
}
