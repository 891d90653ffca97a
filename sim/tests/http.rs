//! The simulator over real HTTP: every endpoint, error path and marker, as a client sees them.
//!
//! One file on purpose, though over 400 lines: one test binary whose tests share the `Api`
//! client at its top (each test starts its own simulator); splitting it would only add
//! binaries to build and link, or move that client into a shared module.

use std::time::{Duration, Instant};

use base64::Engine;
use reqwest::header::HeaderMap;
use serde_json::{json, Value};

struct Api {
    base: String,
    http: reqwest::Client,
}

type Answer = (u16, HeaderMap, Value);

impl Api {
    async fn start(knobs: sim::Knobs) -> Api {
        Self::start_with(sim::Config {
            api_key: None,
            knobs,
            clouds: Default::default(),
        })
        .await
    }

    async fn start_with(config: sim::Config) -> Api {
        let (addr, _) = sim::spawn(config).await.unwrap();
        Api {
            base: format!("http://{addr}"),
            http: reqwest::Client::new(),
        }
    }

    fn req(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("{}{path}", self.base))
            .header("x-api-key", "sk-test")
            .header("anthropic-version", "2023-06-01")
    }

    async fn send(rb: reqwest::RequestBuilder) -> Answer {
        let resp = rb.send().await.unwrap();
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = resp.text().await.unwrap();
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, headers, body)
    }

    async fn post(&self, path: &str, body: Value) -> Answer {
        Self::send(self.req(reqwest::Method::POST, path).json(&body)).await
    }

    async fn get(&self, path: &str) -> Answer {
        Self::send(self.req(reqwest::Method::GET, path)).await
    }

    async fn message(&self, body: Value) -> Answer {
        self.post("/v1/messages", body).await
    }

    async fn stats(&self) -> Value {
        self.get("/_sim/stats").await.2
    }

    async fn patch_config(&self, patch: Value) -> Answer {
        Self::send(
            self.req(reqwest::Method::PATCH, "/_sim/config")
                .json(&patch),
        )
        .await
    }
}

fn ask(text: &str) -> Value {
    json!({"model": "claude-sonnet-4-6", "max_tokens": 256,
           "messages": [{"role": "user", "content": text}]})
}

fn assert_api_error(a: &Answer, status: u16, kind: &str) {
    assert_eq!(a.0, status, "{}", a.2);
    assert_eq!(a.2["type"], "error", "{}", a.2);
    assert_eq!(a.2["error"]["type"], kind, "{}", a.2);
    assert!(a.2["error"]["message"]
        .as_str()
        .is_some_and(|m| !m.is_empty()));
    assert!(a.1.contains_key("request-id"));
}

fn cached_system(text: &str, question: &str) -> Value {
    json!({"model": "claude-sonnet-4-6", "max_tokens": 64,
        "system": [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": question}]})
}

// ---- Messages ----

#[tokio::test]
async fn a_valid_request_gets_a_message_with_usage_and_headers() {
    let api = Api::start(sim::Knobs::default()).await;
    let (status, headers, body) = api.message(ask("Say hello")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["type"], "message");
    assert_eq!(body["role"], "assistant");
    assert!(body["id"].as_str().unwrap().starts_with("msg_"));
    assert_eq!(body["content"][0]["type"], "text");
    assert_eq!(body["stop_reason"], "end_turn");
    assert!(body["usage"]["input_tokens"].as_u64().unwrap() > 0);
    assert_eq!(body["usage"]["cache_read_input_tokens"], 0);
    assert!(headers["request-id"].to_str().unwrap().starts_with("req_"));
    for family in ["requests", "input-tokens", "output-tokens"] {
        for part in ["limit", "remaining", "reset"] {
            let h = format!("anthropic-ratelimit-{family}-{part}");
            assert!(headers.contains_key(&h), "missing {h}");
        }
    }
}

#[tokio::test]
async fn a_missing_or_wrong_api_key_is_a_401_authentication_error() {
    let api = Api::start_with(sim::Config {
        api_key: Some("sk-right".into()),
        knobs: sim::Knobs::default(),
        clouds: Default::default(),
    })
    .await;
    let missing = Api::send(
        api.http
            .post(format!("{}/v1/messages", api.base))
            .header("anthropic-version", "2023-06-01")
            .json(&ask("hi")),
    )
    .await;
    assert_api_error(&missing, 401, "authentication_error");
    assert_api_error(&api.message(ask("hi")).await, 401, "authentication_error");
}

#[tokio::test]
async fn a_missing_version_header_or_bad_json_is_a_400() {
    let api = Api::start(sim::Knobs::default()).await;
    let no_version = Api::send(
        api.http
            .post(format!("{}/v1/messages", api.base))
            .header("x-api-key", "k")
            .json(&ask("hi")),
    )
    .await;
    assert_api_error(&no_version, 400, "invalid_request_error");
    let bad_json = Api::send(
        api.req(reqwest::Method::POST, "/v1/messages")
            .header("content-type", "application/json")
            .body("{not json"),
    )
    .await;
    assert_api_error(&bad_json, 400, "invalid_request_error");
}

#[tokio::test]
async fn an_invalid_body_is_a_400_with_the_apis_message() {
    let api = Api::start(sim::Knobs::default()).await;
    let a = api.message(json!({"model": "claude-sonnet-4-6"})).await;
    assert_api_error(&a, 400, "invalid_request_error");
    assert_eq!(a.2["error"]["message"], "max_tokens: Field required");
}

#[tokio::test]
async fn an_unknown_model_is_a_404() {
    let api = Api::start(sim::Knobs::default()).await;
    let mut body = ask("hi");
    body["model"] = json!("gpt-4o");
    assert_api_error(&api.message(body).await, 404, "not_found_error");
}

#[tokio::test]
async fn a_body_over_32_mb_is_a_413_request_too_large() {
    let api = Api::start(sim::Knobs::default()).await;
    let a = api.message(ask(&"x".repeat(33 * 1024 * 1024))).await;
    assert_api_error(&a, 413, "request_too_large");
}

#[tokio::test]
async fn exceeding_requests_per_minute_is_a_429_with_retry_after() {
    let api = Api::start(sim::Knobs {
        rpm: 2,
        ..sim::Knobs::default()
    })
    .await;
    assert_eq!(api.message(ask("a")).await.0, 200);
    assert_eq!(api.message(ask("b")).await.0, 200);
    let a = api.message(ask("c")).await;
    assert_api_error(&a, 429, "rate_limit_error");
    let retry: u64 = a.1["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=30).contains(&retry), "{retry}");
    assert_eq!(a.1["anthropic-ratelimit-requests-remaining"], "0");
}

#[tokio::test]
async fn a_repeated_cached_prefix_is_read_from_the_cache() {
    let api = Api::start(sim::Knobs::default()).await;
    let long = "The policy text. ".repeat(400);
    let first = api.message(cached_system(&long, "q1")).await.2;
    let written = first["usage"]["cache_creation_input_tokens"]
        .as_u64()
        .unwrap();
    assert!(written >= 1024, "{first}");
    assert_eq!(first["usage"]["cache_read_input_tokens"], 0);
    let second = api.message(cached_system(&long, "q2")).await.2;
    assert_eq!(second["usage"]["cache_read_input_tokens"], written);
    assert_eq!(second["usage"]["cache_creation_input_tokens"], 0);
}

#[tokio::test]
async fn cache_reads_do_not_count_toward_input_tokens_per_minute() {
    let long = "Shared instructions. ".repeat(450);
    let api = Api::start(sim::Knobs {
        itpm: 3_000,
        ..sim::Knobs::default()
    })
    .await;
    let first = api.message(cached_system(&long, "q1")).await;
    assert_eq!(first.0, 200, "{}", first.2);
    // The same prefix again is a cache read: only the question counts, so it fits.
    assert_eq!(api.message(cached_system(&long, "q2")).await.0, 200);
    // A different prefix of the same size must be written, and no longer fits.
    let other = api.message(cached_system(&format!("{long}."), "q3")).await;
    assert_api_error(&other, 429, "rate_limit_error");
}

#[tokio::test]
async fn output_tokens_per_minute_are_reserved_from_max_tokens_and_refunded_after() {
    let api = Api::start(sim::Knobs {
        otpm: 1_000,
        ..sim::Knobs::default()
    })
    .await;
    let big = |t: &str| {
        json!({"model": "claude-sonnet-4-6", "max_tokens": 800,
        "messages": [{"role": "user", "content": t}]})
    };
    let first = api.message(big("a")).await;
    assert_eq!(first.0, 200, "{}", first.2);
    let generated = first.2["usage"]["output_tokens"].as_u64().unwrap();
    assert!(generated < 800);
    // While it ran, 800 were held: the header says so.
    let during: u64 = first.1["anthropic-ratelimit-output-tokens-remaining"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(during <= 200, "{during}");
    // After it, only what was generated is gone, so a second 800 fits at once.
    assert_eq!(api.message(big("b")).await.0, 200);
    // But a max_tokens larger than what is left is refused, however short the answer.
    let huge = json!({"model": "claude-sonnet-4-6", "max_tokens": 1_000,
        "messages": [{"role": "user", "content": "c"}]});
    assert_api_error(&api.message(huge).await, 429, "rate_limit_error");
}

#[tokio::test]
async fn each_model_caches_only_prefixes_of_its_own_minimum() {
    let api = Api::start(sim::Knobs::default()).await;
    let mid = "The policy text. ".repeat(250); // about 1,200 tokens
    let ask_with = |model: &str| {
        let mut v = cached_system(&mid, "q");
        v["model"] = json!(model);
        v
    };
    let sonnet = api.message(ask_with("claude-sonnet-4-6")).await.2;
    assert!(
        sonnet["usage"]["cache_creation_input_tokens"]
            .as_u64()
            .unwrap()
            >= 1024
    );
    // Haiku 4.5 caches from 4,096 tokens, Haiku 5.5 from 512 (the Sonnet 5.5 migration guide).
    let haiku = api.message(ask_with("claude-haiku-4-5")).await.2;
    assert_eq!(haiku["usage"]["cache_creation_input_tokens"], 0, "{haiku}");
    let short = "The policy text. ".repeat(120); // about 600 tokens on the 5.x tokenizer
    let mut v = cached_system(&short, "q");
    v["model"] = json!("claude-haiku-5-5");
    let new = api.message(v).await.2;
    assert!(
        new["usage"]["cache_creation_input_tokens"]
            .as_u64()
            .unwrap()
            >= 512,
        "{new}"
    );
}

#[tokio::test]
async fn a_one_hour_breakpoint_is_reported_and_billed_as_a_one_hour_write() {
    let api = Api::start(sim::Knobs::default()).await;
    let long = "The policy text. ".repeat(400);
    let mut body = cached_system(&long, "q1");
    body["system"][0]["cache_control"]["ttl"] = json!("1h");
    let a = api.message(body.clone()).await;
    assert_eq!(a.0, 200, "{}", a.2);
    let usage = &a.2["usage"];
    let written = usage["cache_creation_input_tokens"].as_u64().unwrap();
    assert_eq!(
        usage["cache_creation"]["ephemeral_1h_input_tokens"],
        written
    );
    assert_eq!(usage["cache_creation"]["ephemeral_5m_input_tokens"], 0);
    body["system"][0]["cache_control"]["ttl"] = json!("2h");
    assert_api_error(&api.message(body).await, 400, "invalid_request_error");
}

#[tokio::test]
async fn a_pdf_document_is_summarized_with_its_page_count() {
    let api = Api::start(sim::Knobs::default()).await;
    let data =
        base64::engine::general_purpose::STANDARD.encode(sim::pdf::sample(5, "Annual report"));
    let (status, _, body) = api
        .message(json!({"model": "claude-sonnet-4-6", "max_tokens": 300, "messages": [{"role": "user",
            "content": [{"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": data}},
                        {"type": "text", "text": "Summarize this document."}]}]}))
        .await;
    assert_eq!(status, 200, "{body}");
    let text = body["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("5-page"), "{text}");
    assert!(body["usage"]["input_tokens"].as_u64().unwrap() >= 5 * 1500);
}

#[tokio::test]
async fn count_tokens_counts_what_messages_bills() {
    let api = Api::start(sim::Knobs::default()).await;
    let body = ask("How many tokens is this sentence, roughly?");
    // count_tokens takes the input only: max_tokens is not one of its parameters.
    let refused = api.post("/v1/messages/count_tokens", body.clone()).await;
    assert_api_error(&refused, 400, "invalid_request_error");
    let mut input = body.clone();
    input.as_object_mut().unwrap().remove("max_tokens");
    let (status, _, counted) = api.post("/v1/messages/count_tokens", input).await;
    assert_eq!(status, 200, "{counted}");
    let billed = api.message(body).await.2;
    assert_eq!(counted["input_tokens"], billed["usage"]["input_tokens"]);
    let bad = api
        .post("/v1/messages/count_tokens", json!({"messages": []}))
        .await;
    assert_api_error(&bad, 400, "invalid_request_error");
}

// ---- markers ----

#[tokio::test]
async fn a_status_marker_fails_every_call_with_that_status() {
    let api = Api::start(sim::Knobs::default()).await;
    for _ in 0..2 {
        let a = api.message(ask("please [[sim:529]]")).await;
        assert_api_error(&a, 529, "overloaded_error");
        assert!(a.1.contains_key("retry-after"));
        assert!(a.1.contains_key("anthropic-ratelimit-requests-remaining"));
    }
    assert_api_error(
        &api.message(ask("[[sim:400]]")).await,
        400,
        "invalid_request_error",
    );
    assert_api_error(&api.message(ask("[[sim:500]]")).await, 500, "api_error");
    assert_api_error(
        &api.message(ask("[[sim:403]]")).await,
        403,
        "permission_error",
    );
}

#[tokio::test]
async fn an_xk_marker_fails_the_first_k_calls_then_succeeds() {
    let api = Api::start(sim::Knobs::default()).await;
    let mut got = Vec::new();
    for _ in 0..4 {
        got.push(api.message(ask("retry me [[sim:500x2]]")).await.0);
    }
    assert_eq!(got, [500, 500, 200, 200]);
}

#[tokio::test]
async fn a_model_marker_fails_only_calls_for_that_model() {
    let api = Api::start(sim::Knobs::default()).await;
    let mut haiku = ask("x [[sim:400@claude-haiku-4-5]]");
    haiku["model"] = json!("claude-haiku-4-5");
    assert_eq!(api.message(haiku).await.0, 400);
    assert_eq!(
        api.message(ask("x [[sim:400@claude-haiku-4-5]]")).await.0,
        200
    );
}

#[tokio::test]
async fn slow_and_hang_markers_delay_the_answer() {
    let api = Api::start(sim::Knobs::default()).await;
    let t = Instant::now();
    assert_eq!(api.message(ask("[[sim:slow=300]]")).await.0, 200);
    assert!(t.elapsed() >= Duration::from_millis(300));
    let hung = api
        .req(reqwest::Method::POST, "/v1/messages")
        .json(&ask("[[sim:hang]]"))
        .timeout(Duration::from_millis(500))
        .send()
        .await;
    assert!(hung.unwrap_err().is_timeout());
    assert_eq!(api.stats().await["calls"]["messages hang"], 1);
}

// ---- faults configured at run time ----

#[tokio::test]
async fn error_rates_and_latency_change_at_run_time_through_sim_config() {
    let api = Api::start(sim::Knobs::default()).await;
    let (status, _, knobs) = api.patch_config(json!({"error_rates": {"529": 1.0}})).await;
    assert_eq!(status, 200, "{knobs}");
    assert_eq!(api.get("/_sim/config").await.2["error_rates"]["529"], 1.0);
    assert_api_error(&api.message(ask("a")).await, 529, "overloaded_error");
    api.patch_config(json!({"error_rates": {}, "latency_ms": 250}))
        .await;
    let t = Instant::now();
    assert_eq!(api.message(ask("b")).await.0, 200);
    assert!(t.elapsed() >= Duration::from_millis(250));
    let bad = api.patch_config(json!({"hang_rate": 2.0})).await;
    assert_api_error(&bad, 400, "invalid_request_error");
    let replaced = Api::send(
        api.req(reqwest::Method::PUT, "/_sim/config")
            .json(&json!({"seed": 5})),
    )
    .await;
    assert_eq!(
        replaced.2["latency_ms"], 0,
        "PUT replaces: absent fields take defaults"
    );
    assert_eq!(replaced.2["seed"], 5);
}

#[tokio::test]
async fn random_faults_follow_the_seed() {
    let knobs = sim::Knobs {
        error_rates: [(529, 0.3), (500, 0.2)].into_iter().collect(),
        seed: 11,
        ..sim::Knobs::default()
    };
    let run = |knobs: sim::Knobs| async move {
        let api = Api::start(knobs).await;
        let mut out = Vec::new();
        for i in 0..40 {
            out.push(api.message(ask(&format!("q{i}"))).await.0);
        }
        out
    };
    let a = run(knobs.clone()).await;
    assert_eq!(a, run(knobs).await);
    assert!(
        a.contains(&529) && a.contains(&500) && a.contains(&200),
        "{a:?}"
    );
}

// ---- billing ----

#[tokio::test]
async fn each_job_is_billed_under_its_x_job_id() {
    let api = Api::start(sim::Knobs::default()).await;
    let call = |job: &'static str| {
        Api::send(
            api.req(reqwest::Method::POST, "/v1/messages")
                .header("x-job-id", job)
                .json(&ask("hi")),
        )
    };
    call("job-1").await;
    call("job-2").await;
    call("job-2").await;
    let s = api.stats().await;
    assert_eq!(s["billed_by_job"]["job-1"], 1);
    assert_eq!(s["billed_by_job"]["job-2"], 2);
    assert_eq!(s["jobs_billed_more_than_once"], json!(["job-2"]));
    assert_eq!(s["standard"]["messages"], 3);
    assert!(s["standard"]["cost_micros"].as_u64().unwrap() > 0);
    assert_eq!(s["calls"]["messages 200"], 3);
}

#[tokio::test]
async fn webhooks_are_recorded_for_tests_to_read() {
    let api = Api::start(sim::Knobs::default()).await;
    let (status, _, _) = api
        .post("/_sim/webhooks", json!({"event": "job.failed"}))
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        api.get("/_sim/webhooks").await.2,
        json!([{"event": "job.failed"}])
    );
}

#[tokio::test]
async fn reset_clears_stats_and_batches() {
    let api = Api::start(sim::Knobs::default()).await;
    api.message(ask("hi")).await;
    api.post(
        "/v1/messages/batches",
        json!({"requests": [{"custom_id": "a", "params": ask("x")}]}),
    )
    .await;
    let (status, _, _) = api.post("/_sim/reset", json!({})).await;
    assert_eq!(status, 200);
    let s = api.stats().await;
    assert_eq!(s["standard"]["messages"], 0);
    assert_eq!(s["calls"], json!({}));
    assert_eq!(api.get("/v1/messages/batches").await.2["data"], json!([]));
}

// ---- Message Batches ----

async fn wait_ended(api: &Api, id: &str) -> Value {
    for _ in 0..100 {
        let (_, _, b) = api.get(&format!("/v1/messages/batches/{id}")).await;
        if b["processing_status"] == "ended" {
            return b;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("batch {id} did not end");
}

fn fast_batches() -> sim::Knobs {
    sim::Knobs {
        batch_ms: 300,
        ..sim::Knobs::default()
    }
}

#[tokio::test]
async fn a_batch_ends_with_one_result_per_request_billed_at_half_price() {
    let api = Api::start(fast_batches()).await;
    let (status, _, created) = api
        .post("/v1/messages/batches", json!({"requests": [
            {"custom_id": "ok-1", "params": ask("What is a queue?")},
            {"custom_id": "bad-1", "params": ask("[[sim:400]]")},
            {"custom_id": "hang-1", "params": ask("[[sim:hang]]")},
            {"custom_id": "invalid-1", "params": {"model": "claude-sonnet-4-6", "messages": []}},
        ]}))
        .await;
    assert_eq!(status, 200, "{created}");
    assert!(created["id"].as_str().unwrap().starts_with("msgbatch_"));
    assert_eq!(created["type"], "message_batch");
    assert_eq!(created["processing_status"], "in_progress");
    assert_eq!(created["request_counts"]["processing"], 4);
    assert_eq!(created["results_url"], Value::Null);
    let id = created["id"].as_str().unwrap();
    let early = api.get(&format!("/v1/messages/batches/{id}/results")).await;
    assert_api_error(&early, 400, "invalid_request_error");

    let ended = wait_ended(&api, id).await;
    assert_eq!(
        ended["request_counts"],
        json!({"processing": 0, "succeeded": 1, "errored": 2, "canceled": 0, "expired": 1})
    );
    assert!(ended["ended_at"].is_string());
    let url = ended["results_url"].as_str().unwrap();
    assert!(url.ends_with(&format!("/v1/messages/batches/{id}/results")));
    let jsonl = api
        .http
        .get(url)
        .header("x-api-key", "k")
        .header("anthropic-version", "2023-06-01")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let lines: Vec<Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    let result = |id: &str| lines.iter().find(|l| l["custom_id"] == id).unwrap()["result"].clone();
    assert_eq!(result("ok-1")["type"], "succeeded");
    assert_eq!(result("ok-1")["message"]["type"], "message");
    assert_eq!(
        result("bad-1")["error"]["error"]["type"],
        "invalid_request_error"
    );
    assert_eq!(result("invalid-1")["type"], "errored");
    assert_eq!(result("hang-1")["type"], "expired");

    // The same request over the Messages API costs twice as much.
    let s = api.stats().await;
    assert_eq!(s["batch"]["messages"], 1);
    assert_eq!(s["billed_by_job"]["ok-1"], 1);
    let batch_cost = s["batch"]["cost_micros"].as_u64().unwrap();
    api.message(ask("What is a queue?")).await;
    let standard = api.stats().await["standard"]["cost_micros"]
        .as_u64()
        .unwrap();
    assert!(
        standard.abs_diff(2 * batch_cost) <= 1,
        "{standard} vs 2×{batch_cost}"
    );
}

#[tokio::test]
async fn invalid_batches_are_refused_whole() {
    let api = Api::start(fast_batches()).await;
    let dup = api
        .post(
            "/v1/messages/batches",
            json!({"requests": [
        {"custom_id": "a", "params": ask("x")}, {"custom_id": "a", "params": ask("y")}]}),
        )
        .await;
    assert_api_error(&dup, 400, "invalid_request_error");
    let empty = api
        .post("/v1/messages/batches", json!({"requests": []}))
        .await;
    assert_api_error(&empty, 400, "invalid_request_error");
    let bad_id = api
        .post(
            "/v1/messages/batches",
            json!({"requests": [{"custom_id": "a b", "params": ask("x")}]}),
        )
        .await;
    assert_api_error(&bad_id, 400, "invalid_request_error");
    let too_many: Vec<Value> = (0..100_001)
        .map(|i| json!({"custom_id": format!("r{i}"), "params": {}}))
        .collect();
    let big = api
        .post("/v1/messages/batches", json!({"requests": too_many}))
        .await;
    assert_api_error(&big, 400, "invalid_request_error");
    assert_eq!(api.get("/v1/messages/batches").await.2["data"], json!([]));
}

#[tokio::test]
async fn a_canceled_batch_ends_with_canceled_results_and_bills_nothing() {
    let api = Api::start(sim::Knobs {
        batch_ms: 60_000,
        ..sim::Knobs::default()
    })
    .await;
    let created = api
        .post(
            "/v1/messages/batches",
            json!({"requests": [
        {"custom_id": "a", "params": ask("x")}, {"custom_id": "b", "params": ask("y")}]}),
        )
        .await
        .2;
    let id = created["id"].as_str().unwrap();
    let canceling = api
        .post(&format!("/v1/messages/batches/{id}/cancel"), json!({}))
        .await
        .2;
    assert_eq!(canceling["processing_status"], "canceling");
    assert!(canceling["cancel_initiated_at"].is_string());
    let ended = wait_ended(&api, id).await;
    assert_eq!(ended["request_counts"]["canceled"], 2);
    let jsonl = api
        .get(&format!("/v1/messages/batches/{id}/results"))
        .await
        .2;
    let text = jsonl.as_str().unwrap();
    assert!(
        text.lines().all(|l| l.contains(r#""type":"canceled""#)),
        "{text}"
    );
    assert_eq!(api.stats().await["batch"]["messages"], 0);
}

#[tokio::test]
async fn batches_are_listed_newest_first_in_pages() {
    let api = Api::start(fast_batches()).await;
    let mut ids = Vec::new();
    for i in 0..3 {
        let b = api
            .post(
                "/v1/messages/batches",
                json!({"requests": [{"custom_id": format!("r{i}"), "params": ask("x")}]}),
            )
            .await
            .2;
        ids.push(b["id"].as_str().unwrap().to_string());
    }
    let page = api.get("/v1/messages/batches?limit=2").await.2;
    let got: Vec<&str> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_str().unwrap())
        .collect();
    assert_eq!(got, [ids[2].as_str(), ids[1].as_str()]);
    assert_eq!(page["has_more"], true);
    let last = page["last_id"].as_str().unwrap();
    let next = api
        .get(&format!("/v1/messages/batches?limit=2&after_id={last}"))
        .await
        .2;
    assert_eq!(next["data"][0]["id"], ids[0].as_str());
    assert_eq!(next["has_more"], false);
    let back = api
        .get(&format!(
            "/v1/messages/batches?limit=5&before_id={}",
            ids[0]
        ))
        .await
        .2;
    assert_eq!(back["data"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn a_slow_create_answer_still_creates_the_batch() {
    // The answer comes far later than the client waits, so how busy the machine is cannot
    // decide which ends first.
    let api = Api::start(sim::Knobs {
        create_batch_delay_ms: 60_000,
        ..fast_batches()
    })
    .await;
    let body = json!({"requests": [{"custom_id": "a", "params": ask("x")}]});
    let started = Instant::now();
    let http = reqwest::Client::builder()
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let gave_up = http
        .post(format!("{}/v1/messages/batches", api.base))
        .header("x-api-key", "sk-test")
        .header("anthropic-version", "2023-06-01")
        .json(&body)
        .send()
        .await;
    assert!(gave_up.is_err(), "the client timed out");
    assert!(started.elapsed() < Duration::from_secs(30));
    // The batch exists although its creator never heard so.
    let list = api.get("/v1/messages/batches").await.2;
    assert_eq!(list["data"].as_array().unwrap().len(), 1, "{list}");
}

#[tokio::test]
async fn a_batch_can_be_deleted_only_once_ended() {
    let api = Api::start(fast_batches()).await;
    let id = api
        .post(
            "/v1/messages/batches",
            json!({"requests": [{"custom_id": "a", "params": ask("x")}]}),
        )
        .await
        .2["id"]
        .as_str()
        .unwrap()
        .to_string();
    let early = Api::send(api.req(
        reqwest::Method::DELETE,
        &format!("/v1/messages/batches/{id}"),
    ))
    .await;
    assert_api_error(&early, 400, "invalid_request_error");
    wait_ended(&api, &id).await;
    let deleted = Api::send(api.req(
        reqwest::Method::DELETE,
        &format!("/v1/messages/batches/{id}"),
    ))
    .await;
    assert_eq!(
        deleted.2,
        json!({"id": id, "type": "message_batch_deleted"})
    );
    assert_api_error(
        &api.get(&format!("/v1/messages/batches/{id}")).await,
        404,
        "not_found_error",
    );
}

#[tokio::test]
async fn an_unknown_path_or_batch_is_a_404_in_the_api_shape() {
    let api = Api::start(sim::Knobs::default()).await;
    let wrong_method = api.get("/v1/messages").await;
    assert_api_error(&wrong_method, 405, "invalid_request_error");
    assert_api_error(&api.get("/v1/nothing").await, 404, "not_found_error");
    assert_api_error(
        &api.get("/v1/messages/batches/msgbatch_nope").await,
        404,
        "not_found_error",
    );
}

#[tokio::test]
async fn batch_faults_hit_the_batch_endpoints_and_the_requests_inside() {
    let body = json!({"requests": [{"custom_id": "a", "params": ask("x")}]});
    let faults_off = json!({"batch_faults": false});

    // Every call overloaded: the create is refused and makes nothing.
    let api = Api::start(sim::Knobs {
        error_rates: [(529, 1.0)].into(),
        batch_faults: true,
        ..fast_batches()
    })
    .await;
    let a = api.post("/v1/messages/batches", body.clone()).await;
    assert_api_error(&a, 529, "overloaded_error");
    let patched = Api::send(
        api.req(reqwest::Method::PATCH, "/_sim/config")
            .json(&faults_off),
    )
    .await;
    assert_eq!(patched.0, 200, "{:?}", patched.2);
    let list = api.get("/v1/messages/batches").await.2;
    assert_eq!(list["data"].as_array().unwrap().len(), 0, "{list}");

    // A hung create has made its batch all the same.
    let api = Api::start(sim::Knobs {
        hang_rate: 1.0,
        hang_ms: 300,
        batch_faults: true,
        ..fast_batches()
    })
    .await;
    let started = Instant::now();
    let hung = api.post("/v1/messages/batches", body.clone()).await;
    assert!(hung.0 >= 500, "{:?}", hung.2);
    assert!(started.elapsed() >= Duration::from_millis(300));
    Api::send(
        api.req(reqwest::Method::PATCH, "/_sim/config")
            .json(&faults_off),
    )
    .await;
    let list = api.get("/v1/messages/batches").await.2;
    assert_eq!(list["data"].as_array().unwrap().len(), 1, "{list}");

    // A 400 rate spares the endpoints (a valid call is not refused at random) but ends the
    // requests inside the batch `errored`.
    let api = Api::start(sim::Knobs {
        error_rates: [(400, 1.0)].into(),
        batch_faults: true,
        ..fast_batches()
    })
    .await;
    let (status, _, created) = api.post("/v1/messages/batches", body).await;
    assert_eq!(status, 200, "{created}");
    let id = created["id"].as_str().unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (status, _, b) = api.get(&format!("/v1/messages/batches/{id}")).await;
    assert_eq!(status, 200, "{b}");
    assert_eq!(b["processing_status"], "ended", "{b}");
    assert_eq!(b["request_counts"]["errored"], 1, "{b}");
}

// ---- Files API ----

impl Api {
    /// Uploads with the body the Worker builds.
    async fn upload(&self, name: &str, mime: &str, bytes: &[u8], beta: bool) -> Answer {
        let (ctype, body) = pipeline::anthropic::files::upload_body(name, mime, bytes, None, 1);
        let mut rb = self
            .req(reqwest::Method::POST, "/v1/files")
            .header("content-type", ctype)
            .body(body);
        if beta {
            rb = rb.header("anthropic-beta", "files-api-2025-04-14");
        }
        Self::send(rb).await
    }
}

#[tokio::test]
async fn files_are_uploaded_listed_read_by_reference_and_deleted_as_the_guide_says() {
    let api = Api::start(sim::Knobs::default()).await;
    let pdf = sim::pdf::sample(2, "Filed report");
    let (status, _, f) = api
        .upload("reports/q3.pdf", "application/pdf", &pdf, false)
        .await;
    assert_eq!(status, 200, "{f}");
    let id = f["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("file_"), "{f}");
    // Only the final path component is kept; the current shape carries expires_at.
    assert_eq!(f["filename"], "q3.pdf");
    assert_eq!(f["type"], "file");
    assert_eq!(f["mime_type"], "application/pdf");
    assert_eq!(f["size_bytes"], pdf.len());
    assert_eq!(f["downloadable"], false);
    assert!(f.as_object().unwrap().contains_key("expires_at"), "{f}");
    assert_eq!(api.get(&format!("/v1/files/{id}")).await.2, f);

    // A Messages request reads it by reference, billed as the same document inline would be.
    let ask = |source: Value| {
        json!({"model": "claude-sonnet-4-6", "max_tokens": 256, "messages": [{"role": "user",
            "content": [{"type": "document", "source": source}, {"type": "text", "text": "Summarize."}]}]})
    };
    let by_ref = api
        .message(ask(json!({"type": "file", "file_id": id})))
        .await;
    assert_eq!(by_ref.0, 200, "{}", by_ref.2);
    let mut count = ask(json!({"type": "file", "file_id": id}));
    count.as_object_mut().unwrap().remove("max_tokens");
    let counted = api.post("/v1/messages/count_tokens", count).await;
    assert_eq!(counted.0, 200, "{}", counted.2);
    let stats = api.stats().await;
    assert_eq!(
        (
            stats["file_documents"].as_u64(),
            stats["base64_documents"].as_u64()
        ),
        (Some(2), Some(0))
    );
    assert_eq!(stats["files_uploaded"], 1);

    // Uploaded files cannot be downloaded; the beta header brings the beta shapes.
    assert_api_error(
        &api.get(&format!("/v1/files/{id}/content")).await,
        400,
        "invalid_request_error",
    );
    let (_, _, second) = api.upload("b.pdf", "application/pdf", &pdf, true).await;
    assert!(
        !second.as_object().unwrap().contains_key("expires_at"),
        "{second}"
    );
    let (_, _, page) = api.get("/v1/files?limit=1").await;
    assert_eq!(page["data"][0]["id"], second["id"], "newest first: {page}");
    let next = page["next_page"].as_str().expect("a next page").to_owned();
    let (_, _, rest) = api.get(&format!("/v1/files?page={next}")).await;
    assert_eq!(rest["data"][0]["id"], id.as_str(), "{rest}");
    assert_eq!(rest["next_page"], Value::Null);
    assert_api_error(
        &api.get(&format!("/v1/files?after_id={id}")).await,
        400,
        "invalid_request_error",
    );
    let beta = Api::send(
        api.req(
            reqwest::Method::GET,
            &format!("/v1/files?after_id={}", second["id"].as_str().unwrap()),
        )
        .header("anthropic-beta", "files-api-2025-04-14"),
    )
    .await;
    assert_eq!(beta.2["data"][0]["id"], id.as_str(), "{}", beta.2);
    assert_eq!(beta.2["has_more"], false);

    // Refusals: a bad filename, a bad expiry, no file part.
    let (s, _, e) = api.upload("a|b.pdf", "application/pdf", &pdf, false).await;
    assert_eq!(
        (s, e["error"]["type"].as_str()),
        (400, Some("invalid_request_error")),
        "{e}"
    );
    let (ctype, body) =
        pipeline::anthropic::files::upload_body("a.pdf", "application/pdf", &pdf, Some(60), 1);
    let short = Api::send(
        api.req(reqwest::Method::POST, "/v1/files")
            .header("content-type", ctype)
            .body(body),
    )
    .await;
    assert_api_error(&short, 400, "invalid_request_error");

    // Deleted: gone for metadata and for Messages.
    let del = Api::send(api.req(reqwest::Method::DELETE, &format!("/v1/files/{id}"))).await;
    assert_eq!(del.2, json!({"id": id, "type": "file_deleted"}));
    assert_api_error(
        &api.get(&format!("/v1/files/{id}")).await,
        404,
        "not_found_error",
    );
    assert_api_error(
        &api.message(ask(json!({"type": "file", "file_id": id})))
            .await,
        404,
        "not_found_error",
    );
}

#[tokio::test]
async fn without_the_files_api_its_routes_and_file_sources_are_refused() {
    let api = Api::start(sim::Knobs {
        files_api: false,
        ..sim::Knobs::default()
    })
    .await;
    let pdf = sim::pdf::sample(1, "T");
    assert_api_error(
        &api.upload("a.pdf", "application/pdf", &pdf, false).await,
        404,
        "not_found_error",
    );
    let refused = api
        .message(json!({"model": "claude-sonnet-4-6", "max_tokens": 256, "messages": [{"role": "user",
            "content": [{"type": "document", "source": {"type": "file", "file_id": "file_x"}}, {"type": "text", "text": "Hi"}]}]}))
        .await;
    assert_api_error(&refused, 400, "invalid_request_error");
}
