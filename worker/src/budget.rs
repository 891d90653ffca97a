//! The `TokenBudget` Durable Object: one instance guards the provider's rate limits for the whole
//! Worker. In this first version it answers pings and counts them in its SQLite-backed storage;
//! the budget arithmetic (in `pipeline`) arrives with the rate-limit work.

use worker::{durable_object, DurableObject, Env, Request, Response, Result, State};

#[durable_object(fetch)]
pub struct TokenBudget {
    state: State,
    #[allow(dead_code)] // Limits come from vars once the budget arithmetic lands.
    env: Env,
}

impl DurableObject for TokenBudget {
    fn new(state: State, env: Env) -> Self {
        TokenBudget { state, env }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        match req.path().as_str() {
            "/ping" => {
                let storage = self.state.storage();
                let pings: u64 = storage.get("pings").await?.unwrap_or(0) + 1;
                storage.put("pings", pings).await?;
                Response::from_json(&serde_json::json!({ "ok": true, "pings": pings }))
            }
            _ => Response::error("no such Durable Object endpoint", 404),
        }
    }
}
