//! Lane slots from the `BUDGET` Durable Object: taken before a call, given back after it.

use pipeline::lanes::Grant;
use pipeline::status::Lane;
use wasm_bindgen::JsValue;
use worker::{Env, Headers, Method, Request, RequestInit};

use crate::config::BUDGET;

/// The one instance that holds every slot.
const INSTANCE: &str = "global";

async fn call(
    env: &Env,
    method: Method,
    path: &str,
    body: Option<serde_json::Value>,
) -> worker::Result<worker::Response> {
    let stub = env.durable_object(BUDGET)?.get_by_name(INSTANCE)?;
    let mut init = RequestInit::new();
    init.with_method(method);
    if let Some(b) = body {
        let headers = Headers::new();
        headers.set("content-type", "application/json")?;
        init.with_headers(headers)
            .with_body(Some(JsValue::from_str(&b.to_string())));
    }
    stub.fetch_with_request(Request::new_with_init(
        &format!("https://budget{path}"),
        &init,
    )?)
    .await
}

/// Asks for a slot on `lane` for `job`, held at most `ttl_ms`.
pub async fn acquire(env: &Env, lane: Lane, job: &str, ttl_ms: i64) -> worker::Result<Grant> {
    let body = serde_json::json!({ "lane": lane, "job_id": job, "ttl_ms": ttl_ms });
    call(env, Method::Post, "/lanes/acquire", Some(body))
        .await?
        .json()
        .await
}

/// Gives the job's slot back; a failure only means the lease lapses on its own.
pub async fn release(env: &Env, job: &str) {
    let body = serde_json::json!({ "job_id": job });
    if let Err(e) = call(env, Method::Post, "/lanes/release", Some(body)).await {
        worker::console_error!("releasing the lane slot of {job} failed: {e}");
    }
}

/// Calls in flight per lane, for `GET /api/budget`.
pub async fn state(env: &Env) -> worker::Result<serde_json::Value> {
    call(env, Method::Get, "/lanes", None).await?.json().await
}
