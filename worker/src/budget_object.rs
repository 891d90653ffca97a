//! The `TokenBudget` Durable Object: one instance guards the provider's limits for the whole
//! Worker. The arithmetic is `pipeline::budget`; this object only keeps the state (in memory,
//! and in its storage after every change, so an evicted object picks up where it was) and
//! answers reservations and settlements in arrival order.

use std::cell::RefCell;

use pipeline::budget::{Budget, Reserve, Settle};
use worker::{durable_object, DurableObject, Env, Method, Request, Response, Result, State};

const KEY: &str = "budget";

/// The object's answer to a ping (with how many it has kept count of) or a settlement.
#[derive(serde::Serialize)]
struct Pong {
    ok: bool,
    pings: u64,
}

#[durable_object(fetch)]
pub struct TokenBudget {
    state: State,
    env: Env,
    budget: RefCell<Option<Budget>>,
}

impl TokenBudget {
    /// The budget, loaded from storage on first use.
    async fn load(&self) -> Result<()> {
        if self.budget.borrow().is_none() {
            let stored: Option<Budget> = self.state.storage().get(KEY).await.ok().flatten();
            *self.budget.borrow_mut() = Some(stored.unwrap_or_default());
        }
        Ok(())
    }

    async fn save(&self) -> Result<()> {
        let snapshot = self.budget.borrow().clone();
        if let Some(b) = snapshot {
            self.state.storage().put(KEY, &b).await?;
        }
        Ok(())
    }

    fn with<T>(&self, f: impl FnOnce(&mut Budget) -> T) -> T {
        let mut b = self.budget.borrow_mut();
        f(b.get_or_insert_with(Budget::default))
    }
}

impl DurableObject for TokenBudget {
    fn new(state: State, env: Env) -> Self {
        TokenBudget {
            state,
            env,
            budget: RefCell::new(None),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let now = crate::config::now_ms();
        let settings = match crate::config::budget_settings(&self.env) {
            Ok(s) => s,
            Err(e) => {
                worker::console_error!("budget: configuration error: {e}");
                return Response::error(format!("configuration error: {e}"), 500);
            }
        };
        match (req.method(), req.path().as_str()) {
            (Method::Get, "/ping") => {
                let storage = self.state.storage();
                let pings: u64 = storage.get("pings").await?.unwrap_or(0) + 1;
                storage.put("pings", pings).await?;
                Response::from_json(&Pong { ok: true, pings })
            }
            (Method::Post, "/reserve") => {
                let r: Reserve = req.json().await?;
                self.load().await?;
                let grant = self.with(|b| b.reserve(&r, &settings, now));
                self.save().await?;
                Response::from_json(&grant)
            }
            (Method::Post, "/settle") => {
                let s: Settle = req.json().await?;
                self.load().await?;
                let tripped = self.with(|b| b.settle(&s, &settings, now));
                self.save().await?;
                if let Some(t) = tripped {
                    // Read by people and log alerts: a route's breaker changed state.
                    worker::console_error!(
                        "ALERT breaker {}/{}: {:?} (job {})",
                        t.route.as_str(),
                        t.model,
                        t.change,
                        s.job_id
                    );
                }
                Response::from_json(&Pong { ok: true, pings: 0 })
            }
            (Method::Post, "/usage") => {
                let users: Vec<String> = req.json().await?;
                self.load().await?;
                let usage = self.with(|b| b.usage(&users, now));
                Response::from_json(&usage)
            }
            (Method::Get, "/state") => {
                self.load().await?;
                let view = self.with(|b| b.view(&settings, now));
                Response::from_json(&view)
            }
            _ => Response::error("no such Durable Object endpoint", 404),
        }
    }
}
