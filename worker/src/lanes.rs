//! The consumer's side of the `BUDGET` Durable Object: reserve before a call, settle after it.

use pipeline::budget::{BudgetView, Grant, Reserve, Settle};
use wasm_bindgen::JsValue;
use worker::{Env, Headers, Method, Request, RequestInit};

use crate::config::BUDGET;

/// The one instance that holds the whole budget.
const INSTANCE: &str = "global";

async fn call(
    env: &Env,
    method: Method,
    path: &str,
    body: Option<String>,
) -> worker::Result<worker::Response> {
    let stub = env.durable_object(BUDGET)?.get_by_name(INSTANCE)?;
    let mut init = RequestInit::new();
    init.with_method(method);
    if let Some(b) = body {
        let headers = Headers::new();
        headers.set("content-type", "application/json")?;
        init.with_headers(headers)
            .with_body(Some(JsValue::from_str(&b)));
    }
    stub.fetch_with_request(Request::new_with_init(
        &format!("https://budget{path}"),
        &init,
    )?)
    .await
}

fn json<T: serde::Serialize>(v: &T) -> worker::Result<String> {
    serde_json::to_string(v).map_err(|e| worker::Error::RustError(e.to_string()))
}

/// Asks for a reservation (tokens and a lane slot).
pub async fn reserve(env: &Env, r: &Reserve) -> worker::Result<Grant> {
    call(env, Method::Post, "/reserve", Some(json(r)?))
        .await?
        .json()
        .await
}

/// Settles a reservation; a failure only means the lease lapses on its own.
pub async fn settle(env: &Env, s: &Settle) {
    let sent = async { call(env, Method::Post, "/settle", Some(json(s)?)).await }.await;
    if let Err(e) = sent {
        worker::console_error!("settling the budget of {} failed: {e}", s.job_id);
    }
}

/// The budget as it stands, for `GET /api/budget`.
pub async fn state(env: &Env) -> worker::Result<BudgetView> {
    call(env, Method::Get, "/state", None).await?.json().await
}
