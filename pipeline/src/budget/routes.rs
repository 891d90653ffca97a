//! The routes' breakers, kept with the budget (issue 36): the Durable Object that serialises
//! every reservation and settlement is where every invocation sees one breaker per route and
//! model. A reservation names the routes that can serve its call; the first whose breaker lets
//! a call through is reserved on. With one route only, the breaker is kept (the Dashboard shows
//! it) but never refuses: there is nowhere else to go, and the calls behave as before routes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::breaker::{Admit, Breaker, Change, Phase, Policy, Signal};
use crate::models::providers::Provider;

/// Every breaker, by `{route}/{model}` (what the budget keeps and persists).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Breakers(BTreeMap<String, Breaker>);

/// A breaker that changed state, for the log and the alerts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tripped {
    pub route: Provider,
    pub model: String,
    pub change: Change,
}

/// One breaker as the Dashboard shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BreakerView {
    pub route: Provider,
    pub model: String,
    pub phase: Phase,
    /// Failures in a row while closed.
    pub streak: u32,
    /// Since when it has been open or half-open (epoch ms).
    pub open_since: Option<i64>,
}

/// The breaker key of `model` (an id or an alias) on `route`.
fn key(route: Provider, model: &str) -> String {
    let id = crate::models::find(model).map_or(model, |m| m.id);
    format!("{}/{id}", route.as_str())
}

impl Breakers {
    /// The route a call for `model` goes to among `routes` (failover order), and how its
    /// breaker admits it (not yet recorded: a reservation refused for tokens must not hold a
    /// probe's place); `Err`: every route's breaker refuses, for this long at least.
    pub fn pick(
        &self,
        (routes, model): (&[Provider], &str),
        p: &Policy,
        now: i64,
    ) -> Result<(Provider, Admit), u64> {
        let Some(&first) = routes.first() else {
            return Ok((Provider::Anthropic, Admit::Call));
        };
        if routes.len() == 1 {
            return Ok((first, Admit::Call));
        }
        let mut wait = i64::MAX;
        for &route in routes {
            let mut b = self.breaker(route, model);
            match b.admit(now, p) {
                Admit::Refuse { retry_in_ms } => wait = wait.min(retry_in_ms),
                admit => return Ok((route, admit)),
            }
        }
        Err(wait.max(0) as u64)
    }

    /// Records that a call was let through on `route` at `now`; answers whether it is the
    /// half-open breaker's probe (its place taken only now that the reservation holds).
    pub fn let_through(
        &mut self,
        (route, model): (Provider, &str),
        admit: Admit,
        now: i64,
        p: &Policy,
    ) -> bool {
        if admit != Admit::Probe {
            return false;
        }
        let taken = self.0.entry(key(route, model)).or_default().admit(now, p);
        taken == Admit::Probe
    }

    fn breaker(&self, route: Provider, model: &str) -> Breaker {
        self.0.get(&key(route, model)).copied().unwrap_or_default()
    }

    /// A call's signal on `route` for `model`, recorded by its breaker.
    pub fn record(
        &mut self,
        (route, model): (Provider, Option<&str>),
        signal: Option<Signal>,
        p: &Policy,
        now: i64,
    ) -> Option<Tripped> {
        let (signal, model) = (signal?, model?);
        let k = key(route, model);
        let change = self.0.entry(k).or_default().record(signal, now, p)?;
        Some(Tripped {
            route,
            model: crate::models::find(model)
                .map_or(model, |m| m.id)
                .to_owned(),
            change,
        })
    }

    /// Every breaker that has seen a call, for `GET /api/budget`.
    pub fn views(&self, p: &Policy, now: i64) -> Vec<BreakerView> {
        self.0
            .iter()
            .filter_map(|(k, b)| {
                let (route, model) = k.split_once('/')?;
                let (streak, open_since) = match *b {
                    Breaker::Closed { streak, .. } => (streak, None),
                    Breaker::Open { at } | Breaker::HalfOpen { opened_at: at, .. } => (0, Some(at)),
                };
                Some(BreakerView {
                    route: Provider::parse(route)?,
                    model: model.to_owned(),
                    phase: b.phase(now, p),
                    streak,
                    open_since,
                })
            })
            .collect()
    }
}
