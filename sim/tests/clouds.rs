//! The other routes over real HTTP (issue 36): Bedrock's `InvokeModel` with a SigV4 signature,
//! Vertex AI's `rawPredict` with a bearer token, their refusals, their bills, and the outage knob.

use pipeline::sigv4;
use serde_json::{json, Value};

struct Sim {
    base: String,
    host: String,
    http: reqwest::Client,
}

type Answer = (u16, reqwest::header::HeaderMap, Value);

async fn start(knobs: sim::Knobs) -> Sim {
    let (addr, _) = sim::spawn(sim::Config {
        api_key: None,
        knobs,
        clouds: Default::default(),
    })
    .await
    .unwrap();
    Sim {
        base: format!("http://{addr}"),
        host: addr.to_string(),
        http: reqwest::Client::new(),
    }
}

async fn read(rb: reqwest::RequestBuilder) -> Answer {
    let resp = rb.send().await.unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = resp.text().await.unwrap();
    (
        status,
        headers,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

fn wrapped(version: &str) -> Value {
    json!({"anthropic_version": version, "max_tokens": 64,
           "messages": [{"role": "user", "content": "Say hello"}]})
}

impl Sim {
    /// `InvokeModel` for `model_id`, signed with `secret` at `at_ms`.
    async fn bedrock(&self, model_id: &str, body: &Value, secret: &str, at_ms: i64) -> Answer {
        let body = serde_json::to_vec(body).unwrap();
        let path = format!("/model/{model_id}/invoke");
        let amz_date = sigv4::amz_date(at_ms);
        let creds = sigv4::Credentials {
            access_key_id: sim::config::SIM_AWS_ACCESS_KEY_ID.into(),
            secret_access_key: secret.into(),
            session_token: None,
        };
        let req = sigv4::Request {
            method: "POST",
            host: &self.host,
            path: &path,
            query: &[],
            headers: &[("content-type", "application/json")],
            payload: sigv4::Payload::Bytes(&body),
        };
        let scope = sigv4::Scope {
            region: "us-east-1",
            service: "bedrock",
            amz_date: &amz_date,
        };
        let signed = sigv4::sign(&req, &creds, &scope);
        let url = format!("{}{}", self.base, sigv4::request_path(&path));
        read(
            self.http
                .post(url)
                .header("content-type", "application/json")
                .header("authorization", signed.authorization)
                .header("x-amz-date", signed.amz_date)
                .header("x-amz-content-sha256", signed.content_sha256)
                .header("x-job-id", "job-b")
                .body(body),
        )
        .await
    }

    async fn vertex(&self, location: &str, model: &str, body: &Value, token: &str) -> Answer {
        let url = format!(
            "{}/v1/projects/acme/locations/{location}/publishers/anthropic/models/{model}:rawPredict",
            self.base
        );
        read(
            self.http
                .post(url)
                .bearer_auth(token)
                .header("x-job-id", "job-v")
                .json(body),
        )
        .await
    }

    async fn stats(&self) -> Value {
        read(self.http.get(format!("{}/_sim/stats", self.base)))
            .await
            .2
    }

    async fn patch(&self, patch: Value) {
        let a = read(
            self.http
                .patch(format!("{}/_sim/config", self.base))
                .json(&patch),
        )
        .await;
        assert_eq!(a.0, 200, "{}", a.2);
    }

    async fn anthropic(&self) -> Answer {
        read(
            self.http
                .post(format!("{}/v1/messages", self.base))
                .header("x-api-key", "sk")
                .header("anthropic-version", "2023-06-01")
                .json(&json!({"model": "claude-sonnet-5-5", "max_tokens": 64,
                    "messages": [{"role": "user", "content": "hi"}]})),
        )
        .await
    }
}

fn now() -> i64 {
    sim::now_ms()
}

const SECRET: &str = sim::config::SIM_AWS_SECRET_ACCESS_KEY;
const TOKEN: &str = sim::config::SIM_VERTEX_TOKEN;

#[tokio::test]
async fn bedrock_answers_a_signed_invoke_and_bills_it_apart() {
    let s = start(sim::Knobs::default()).await;
    let body = wrapped("bedrock-2023-05-31");
    let (status, _, m) = s
        .bedrock("global.anthropic.claude-sonnet-5-5", &body, SECRET, now())
        .await;
    assert_eq!(status, 200, "{m}");
    assert_eq!(m["type"], "message");
    assert_eq!(m["model"], "claude-sonnet-5-5");
    let stats = s.stats().await;
    assert_eq!(stats["clouds"]["bedrock"]["messages"], 1, "{stats}");
    assert_eq!(
        stats["standard"]["messages"], 0,
        "not on the Anthropic API's bill"
    );
    let global = stats["cost_micros_by_job"]["job-b"].as_u64().unwrap();
    // A geography's profile costs 10% more than the global one.
    let (status, _, m) = s
        .bedrock("eu.anthropic.claude-sonnet-5-5", &body, SECRET, now())
        .await;
    assert_eq!(status, 200, "{m}");
    let both = s.stats().await["cost_micros_by_job"]["job-b"]
        .as_u64()
        .unwrap();
    assert_eq!(both - global, (global * 1_100 + 500) / 1_000);
}

#[tokio::test]
async fn bedrock_refuses_a_wrong_signature_an_old_one_and_a_bad_body_as_aws_does() {
    let s = start(sim::Knobs::default()).await;
    let body = wrapped("bedrock-2023-05-31");
    let id = "global.anthropic.claude-opus-4-5-20251101-v1:0";
    let (status, h, e) = s.bedrock(id, &body, "wrong-secret", now()).await;
    assert_eq!(status, 403, "{e}");
    assert!(h["x-amzn-errortype"]
        .to_str()
        .unwrap()
        .starts_with("InvalidSignatureException:"));
    assert!(e["message"]
        .as_str()
        .unwrap()
        .contains("signature we calculated does not match"));
    let (status, _, e) = s.bedrock(id, &body, SECRET, now() - 16 * 60 * 1000).await;
    assert_eq!(status, 403);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .starts_with("Signature expired"),
        "{e}"
    );
    // The `:` of a versioned id, encoded once on the wire, twice when signed: let in.
    assert_eq!(s.bedrock(id, &body, SECRET, now()).await.0, 200);
    let (status, h, e) = s
        .bedrock("anthropic.claude-sonnet-5-5", &body, SECRET, now())
        .await;
    assert_eq!(status, 400);
    assert!(h["x-amzn-errortype"]
        .to_str()
        .unwrap()
        .starts_with("ValidationException"));
    assert!(e["message"]
        .as_str()
        .unwrap()
        .contains("on-demand throughput isn't supported"));
    let mut with_model = body.clone();
    with_model["model"] = json!("claude-sonnet-5-5");
    let (status, _, e) = s
        .bedrock("us.anthropic.claude-sonnet-5-5", &with_model, SECRET, now())
        .await;
    assert_eq!(status, 400);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("extraneous key [model]"),
        "{e}"
    );
    let (status, _, _) = s
        .bedrock("global.anthropic.claude-mythos-5-2", &body, SECRET, now())
        .await;
    assert_eq!(status, 400, "a model Bedrock does not serve");
    assert_eq!(s.stats().await["clouds"]["bedrock"]["messages"], 1);
}

#[tokio::test]
async fn vertex_answers_with_its_token_and_refuses_an_expired_one() {
    let s = start(sim::Knobs::default()).await;
    let body = wrapped("vertex-2023-10-16");
    let (status, _, m) = s
        .vertex("global", "claude-haiku-4-5@20251001", &body, TOKEN)
        .await;
    assert_eq!(status, 200, "{m}");
    assert_eq!(m["model"], "claude-haiku-4-5-20251001");
    let (status, _, e) = s
        .vertex("global", "claude-sonnet-5-5", &body, "ya29.other")
        .await;
    assert_eq!(status, 401);
    assert_eq!(e["error"]["status"], "UNAUTHENTICATED");
    s.patch(json!({"vertex_token_expires_at": now() - 1})).await;
    let (status, _, e) = s.vertex("global", "claude-sonnet-5-5", &body, TOKEN).await;
    assert_eq!(
        (status, e["error"]["code"].as_u64()),
        (401, Some(401)),
        "{e}"
    );
    s.patch(json!({"vertex_token_expires_at": null})).await;
    let (status, _, e) = s
        .vertex("global", "claude-sonnet-5-5", &wrapped("2023-06-01"), TOKEN)
        .await;
    assert_eq!(status, 400);
    assert_eq!(
        e["error"]["type"], "invalid_request_error",
        "the model's own error body"
    );
    let (status, _, e) = s.vertex("us-east5", "claude-nonesuch", &body, TOKEN).await;
    assert_eq!(
        (status, e["error"]["status"].as_str()),
        (404, Some("NOT_FOUND"))
    );
}

#[tokio::test]
async fn an_outage_takes_one_route_down_and_leaves_the_others() {
    let s = start(sim::Knobs::default()).await;
    s.patch(json!({"outages": {"anthropic": {"status": 529}}}))
        .await;
    let (status, _, e) = s.anthropic().await;
    assert_eq!(status, 529);
    assert_eq!(e["error"]["type"], "overloaded_error");
    let body = wrapped("bedrock-2023-05-31");
    assert_eq!(
        s.bedrock("global.anthropic.claude-sonnet-5-5", &body, SECRET, now())
            .await
            .0,
        200
    );
    s.patch(json!({"outages": {"bedrock": {"status": 503}}}))
        .await;
    assert_eq!(s.anthropic().await.0, 200, "the Anthropic API is back");
    let (status, h, _) = s
        .bedrock("global.anthropic.claude-sonnet-5-5", &body, SECRET, now())
        .await;
    assert_eq!(status, 503);
    assert!(h["x-amzn-errortype"]
        .to_str()
        .unwrap()
        .starts_with("ServiceUnavailableException"));
    let a = read(
        s.http
            .patch(format!("{}/_sim/config", s.base))
            .json(&json!({"outages": {"azure": {"status": 500}}})),
    )
    .await;
    assert_eq!(a.0, 400, "an unknown route is refused");
}
