//! The consumers' side of the `TokenBudget` Durable Object: reserve before a call, settle after
//! it, read the state for the ops views.

use pipeline::budget::{BudgetView, Grant, Reserve, Settle};
use wasm_bindgen::JsValue;
use worker::{Headers, Method, ObjectNamespace, Request, RequestInit};

/// The one instance that holds the whole budget.
const INSTANCE: &str = "global";

/// The `BUDGET` namespace.
#[derive(Clone)]
pub struct BudgetClient {
    ns: ObjectNamespace,
    meter: std::sync::Arc<crate::meter::Meter>,
}

fn json<T: serde::Serialize>(v: &T) -> worker::Result<String> {
    serde_json::to_string(v).map_err(|e| worker::Error::RustError(e.to_string()))
}

impl BudgetClient {
    pub fn new(ns: ObjectNamespace, meter: std::sync::Arc<crate::meter::Meter>) -> BudgetClient {
        BudgetClient { ns, meter }
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<String>,
    ) -> worker::Result<worker::Response> {
        self.meter.count(crate::meter::Op::DoRequest, 1)?;
        let stub = self.ns.get_by_name(INSTANCE)?;
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

    /// Asks for a reservation (tokens and a lane slot).
    pub async fn reserve(&self, r: &Reserve) -> worker::Result<Grant> {
        self.call(Method::Post, "/reserve", Some(json(r)?))
            .await?
            .json()
            .await
    }

    /// Settles a reservation; a failure only means the lease lapses on its own.
    pub async fn settle(&self, s: &Settle) {
        let sent = async { self.call(Method::Post, "/settle", Some(json(s)?)).await }.await;
        if let Err(e) = sent {
            worker::console_error!("settling the budget of {} failed: {e}", s.job_id);
        }
    }

    /// The tokens each of `users` was granted over the last minute (fair shares).
    pub async fn usage(
        &self,
        users: &[String],
    ) -> worker::Result<std::collections::BTreeMap<String, u64>> {
        self.call(Method::Post, "/usage", Some(json(&users)?))
            .await?
            .json()
            .await
    }

    /// The budget as it stands, for `GET /api/budget` and the metrics row.
    pub async fn state(&self) -> worker::Result<BudgetView> {
        self.call(Method::Get, "/state", None).await?.json().await
    }

    /// The health check's probe: the object answers and keeps state between requests.
    pub async fn ping(&self) -> worker::Result<serde_json::Value> {
        self.call(Method::Get, "/ping", None).await?.json().await
    }
}
