//! `GET /api/routes` (admins; issue 36): each configured route's breakers (one per model that
//! has called it), its calls and errors over the last hour, and what its jobs cost in that hour
//! — what the Dashboard's Routes panel and status line show during an incident.

use serde::{Deserialize, Serialize};

use crate::breaker::Phase;
use crate::budget::BreakerView;
use crate::models::providers::Provider;
use crate::money::UsdMicros;

/// The window of the figures.
pub const WINDOW_MS: i64 = 3_600_000;

/// Calls made on a route in the window, from the attempt log (`route` NULL: the Anthropic API).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct RouteCalls {
    pub route: Option<String>,
    pub calls: u64,
    /// Calls that did not end their job well (a retry, a failure, a dead letter).
    pub errors: u64,
}

/// Jobs a route answered in the window, and their cost, from the jobs (`route` NULL likewise).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct RouteSpendRow {
    pub route: Option<String>,
    pub jobs: u64,
    pub cost_micros: UsdMicros,
}

/// One route as the Dashboard shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RouteHealth {
    pub route: Provider,
    pub name: String,
    /// Priced 10% over the list price (a regional or multi-region endpoint).
    pub regional: bool,
    /// The worst of its breakers: open, else half-open, else closed.
    pub phase: Phase,
    pub breakers: Vec<BreakerView>,
    pub calls: u64,
    pub errors: u64,
    /// `errors / calls` (0 without calls).
    pub error_rate: f64,
    pub jobs: u64,
    pub cost_micros: UsdMicros,
}

/// `GET /api/routes`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RoutesReport {
    pub window_s: u64,
    pub routes: Vec<RouteHealth>,
}

fn of(route: &Option<String>) -> Provider {
    route
        .as_deref()
        .and_then(Provider::parse)
        .unwrap_or(Provider::Anthropic)
}

fn rank(p: Phase) -> u8 {
    match p {
        Phase::Closed => 0,
        Phase::HalfOpen => 1,
        Phase::Open => 2,
    }
}

/// The report of the `configured` routes (`(route, regional)`, failover order) from the budget's
/// breakers and the window's calls and spend.
pub fn report(
    configured: &[(Provider, bool)],
    breakers: &[BreakerView],
    calls: &[RouteCalls],
    spend: &[RouteSpendRow],
) -> RoutesReport {
    let routes = configured
        .iter()
        .map(|&(route, regional)| {
            let mine: Vec<BreakerView> = breakers
                .iter()
                .filter(|b| b.route == route)
                .cloned()
                .collect();
            let phase = mine
                .iter()
                .map(|b| b.phase)
                .max_by_key(|p| rank(*p))
                .unwrap_or(Phase::Closed);
            let (calls, errors) = calls
                .iter()
                .filter(|c| of(&c.route) == route)
                .fold((0, 0), |(n, e), c| (n + c.calls, e + c.errors));
            let (jobs, cost_micros) = spend
                .iter()
                .filter(|s| of(&s.route) == route)
                .fold((0, UsdMicros::ZERO), |(n, c), s| {
                    (n + s.jobs, c + s.cost_micros)
                });
            RouteHealth {
                route,
                name: route.display_name().to_owned(),
                regional,
                phase,
                breakers: mine,
                calls,
                errors,
                error_rate: if calls == 0 {
                    0.0
                } else {
                    errors as f64 / calls as f64
                },
                jobs,
                cost_micros,
            }
        })
        .collect();
    RoutesReport {
        window_s: (WINDOW_MS / 1000) as u64,
        routes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn breaker(route: Provider, model: &str, phase: Phase) -> BreakerView {
        BreakerView {
            route,
            model: model.into(),
            phase,
            streak: 0,
            open_since: (phase != Phase::Closed).then_some(5),
        }
    }

    #[test]
    fn each_route_shows_its_worst_breaker_its_error_rate_and_its_hours_cost() {
        let configured = [
            (Provider::Anthropic, false),
            (Provider::Bedrock, false),
            (Provider::Vertex, true),
        ];
        let breakers = [
            breaker(Provider::Anthropic, "claude-sonnet-5-5", Phase::Open),
            breaker(Provider::Anthropic, "claude-haiku-5-5", Phase::HalfOpen),
            breaker(Provider::Bedrock, "claude-sonnet-5-5", Phase::Closed),
        ];
        let calls = [
            RouteCalls {
                route: None,
                calls: 10,
                errors: 8,
            },
            RouteCalls {
                route: Some("bedrock".into()),
                calls: 4,
                errors: 0,
            },
        ];
        let spend = [RouteSpendRow {
            route: Some("bedrock".into()),
            jobs: 4,
            cost_micros: UsdMicros::new(1_200),
        }];
        let r = report(&configured, &breakers, &calls, &spend);
        assert_eq!(r.window_s, 3_600);
        let [a, b, v] = &r.routes[..] else {
            panic!("{r:?}")
        };
        assert_eq!(
            (a.phase, a.breakers.len(), a.error_rate),
            (Phase::Open, 2, 0.8)
        );
        assert_eq!(
            (b.phase, b.jobs, b.cost_micros),
            (Phase::Closed, 4, UsdMicros::new(1_200))
        );
        assert_eq!(
            (v.phase, v.calls, v.error_rate, v.regional),
            (Phase::Closed, 0, 0.0, true)
        );
        assert_eq!(v.name, "Google Vertex AI");
    }
}
