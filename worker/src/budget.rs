//! The `TokenBudget` Durable Object: one instance guards the provider's limits for the whole
//! Worker. The arithmetic is `pipeline::budget`; this object only keeps the state (in memory,
//! and in its storage after every change, so an evicted object picks up where it was) and
//! answers reservations and settlements in arrival order.

use std::cell::RefCell;

use pipeline::budget::{Budget, Limits, Reserve, Settings, Settle};
use pipeline::lanes::LaneLimits;
use worker::{durable_object, DurableObject, Env, Method, Request, Response, Result, State};

/// Vars that configure the budget.
pub const BUDGET_RPM: &str = "BUDGET_RPM";
pub const BUDGET_ITPM: &str = "BUDGET_ITPM";
pub const BUDGET_OTPM: &str = "BUDGET_OTPM";
/// `off` switches enforcement off (tokens tracked, never refused) to compare with and without.
pub const BUDGET_ENFORCE: &str = "BUDGET_ENFORCE";

const KEY: &str = "budget";

#[durable_object(fetch)]
pub struct TokenBudget {
    state: State,
    env: Env,
    budget: RefCell<Option<Budget>>,
}

impl TokenBudget {
    fn settings(&self) -> Settings {
        let read = |name: &str, default: u64| {
            self.env
                .var(name)
                .ok()
                .and_then(|v| v.to_string().trim().parse::<u64>().ok())
                .filter(|n| *n > 0)
                .unwrap_or(default)
        };
        let l = Limits::default();
        let d = LaneLimits::default();
        Settings {
            limits: Limits {
                rpm: read(BUDGET_RPM, l.rpm),
                itpm: read(BUDGET_ITPM, l.itpm),
                otpm: read(BUDGET_OTPM, l.otpm),
            },
            lanes: LaneLimits {
                high: read("LANE_HIGH_CONCURRENCY", d.high as u64) as u32,
                bulk: read("LANE_BULK_CONCURRENCY", d.bulk as u64) as u32,
            },
            enforce: !self
                .env
                .var(BUDGET_ENFORCE)
                .map(|v| v.to_string().trim().eq_ignore_ascii_case("off"))
                .unwrap_or(false),
        }
    }

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
        let now = worker::Date::now().as_millis() as i64;
        let settings = self.settings();
        match (req.method(), req.path().as_str()) {
            (Method::Get, "/ping") => {
                let storage = self.state.storage();
                let pings: u64 = storage.get("pings").await?.unwrap_or(0) + 1;
                storage.put("pings", pings).await?;
                Response::from_json(&serde_json::json!({ "ok": true, "pings": pings }))
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
                self.with(|b| b.settle(&s, &settings, now));
                self.save().await?;
                Response::from_json(&serde_json::json!({ "ok": true }))
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
