//! The `TokenBudget` Durable Object: one instance guards the provider's limits for the whole
//! Worker. It keeps the per-lane in-flight slots (`pipeline::lanes`) so that the lanes'
//! concurrency holds even where the queue runtime ignores `max_concurrency`; the token buckets
//! join it with the budget work.

use std::cell::RefCell;

use pipeline::lanes::{LaneLimits, Slots};
use pipeline::status::Lane;
use serde::Deserialize;
use worker::{durable_object, DurableObject, Env, Method, Request, Response, Result, State};

#[durable_object(fetch)]
pub struct TokenBudget {
    state: State,
    env: Env,
    /// In memory: leases are short-lived, and an evicted object only forgets slots that are
    /// about to lapse anyway.
    slots: RefCell<Slots>,
}

#[derive(Deserialize)]
struct Acquire {
    lane: Lane,
    job_id: String,
    ttl_ms: i64,
}

#[derive(Deserialize)]
struct Release {
    job_id: String,
}

impl TokenBudget {
    fn limits(&self) -> LaneLimits {
        let read = |name: &str, default: u32| {
            self.env
                .var(name)
                .ok()
                .and_then(|v| v.to_string().trim().parse::<u32>().ok())
                .filter(|n| *n > 0)
                .unwrap_or(default)
        };
        let d = LaneLimits::default();
        LaneLimits {
            high: read("LANE_HIGH_CONCURRENCY", d.high),
            bulk: read("LANE_BULK_CONCURRENCY", d.bulk),
        }
    }
}

impl DurableObject for TokenBudget {
    fn new(state: State, env: Env) -> Self {
        TokenBudget {
            state,
            env,
            slots: RefCell::new(Slots::default()),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let now = worker::Date::now().as_millis() as i64;
        match (req.method(), req.path().as_str()) {
            (Method::Get, "/ping") => {
                let storage = self.state.storage();
                let pings: u64 = storage.get("pings").await?.unwrap_or(0) + 1;
                storage.put("pings", pings).await?;
                Response::from_json(&serde_json::json!({ "ok": true, "pings": pings }))
            }
            (Method::Post, "/lanes/acquire") => {
                let a: Acquire = req.json().await?;
                let limits = self.limits();
                let grant = self
                    .slots
                    .borrow_mut()
                    .acquire(a.lane, &a.job_id, now, a.ttl_ms, &limits);
                Response::from_json(&grant)
            }
            (Method::Post, "/lanes/release") => {
                let r: Release = req.json().await?;
                self.slots.borrow_mut().release(&r.job_id);
                Response::from_json(&serde_json::json!({ "ok": true }))
            }
            (Method::Get, "/lanes") => {
                let limits = self.limits();
                let mut slots = self.slots.borrow_mut();
                Response::from_json(&serde_json::json!({
                    "high": { "in_flight": slots.in_flight(Lane::High, now), "limit": limits.high },
                    "bulk": { "in_flight": slots.in_flight(Lane::Bulk, now), "limit": limits.bulk },
                }))
            }
            _ => Response::error("no such Durable Object endpoint", 404),
        }
    }
}
