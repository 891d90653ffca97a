//! Who spends what (admins): cost, tokens and jobs by user and model over a range of UTC days,
//! top spenders first, from the same usage rollup as each user's own usage report — so a user's
//! row here equals their `GET /api/usage` totals for the same days.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::usage::{csv_field, RouteSpend, UsageTotals};
use crate::clock::{day_of, DAY_MS};
use crate::dto::SpendColumns;
use crate::models::providers::Provider;
use crate::money::UsdMicros;

/// At most this many users in one report (the rest are counted in `others`).
pub const MAX_SPENDERS: usize = 1000;
/// Users in a report unless `limit` says otherwise.
pub const DEFAULT_SPENDERS: usize = 100;

/// One user, day range and model from the rollup, as the store's query groups it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct SpenderGroup {
    pub user_id: String,
    /// `None` for jobs no model answered yet.
    pub model: Option<String>,
    pub jobs: u64,
    #[serde(flatten)]
    pub columns: SpendColumns,
    #[serde(default)]
    pub cost_unknown: u64,
    #[serde(default)]
    pub failures: u64,
    #[serde(default)]
    pub refusals: u64,
    #[serde(default)]
    pub fast_jobs: u64,
    #[serde(default)]
    pub fast_cost_micros: UsdMicros,
    /// Jobs answered on Bedrock and on Vertex AI, and their cost (migration 0025's keys).
    #[serde(default)]
    pub bedrock_jobs: u64,
    #[serde(default)]
    pub bedrock_cost_micros: UsdMicros,
    #[serde(default)]
    pub vertex_jobs: u64,
    #[serde(default)]
    pub vertex_cost_micros: UsdMicros,
}

/// One model's share of a user's spend.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SpenderModel {
    pub model: String,
    #[serde(flatten)]
    pub totals: UsageTotals,
    pub failures: u64,
}

/// One user: totals over the range and the models, dearest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Spender {
    /// 1 for the top spender.
    pub rank: usize,
    pub user_id: String,
    #[serde(flatten)]
    pub totals: UsageTotals,
    pub failures: u64,
    /// This user's share of the range's whole cost (0 when nothing was spent).
    pub share: f64,
    pub models: Vec<SpenderModel>,
}

/// `GET /api/usage/spenders`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SpendersReport {
    pub from: String,
    pub to: String,
    /// Every user's work in the range, the ones past `limit` included.
    pub totals: UsageTotals,
    pub users: Vec<Spender>,
    /// Users left out by the limit.
    pub others: usize,
}

impl SpendersReport {
    /// Ranks the groups' users by cost, then jobs, then name; keeps the first `limit`.
    pub fn build(groups: &[SpenderGroup], from_ms: i64, to_ms: i64, limit: usize) -> Self {
        let mut totals = UsageTotals::default();
        let mut users: Vec<Spender> = Vec::new();
        for g in groups {
            let t = totals_of(g);
            totals.plus(&t);
            let i = match users.iter().position(|u| u.user_id == g.user_id) {
                Some(i) => i,
                None => {
                    users.push(Spender {
                        rank: 0,
                        user_id: g.user_id.clone(),
                        totals: UsageTotals::default(),
                        failures: 0,
                        share: 0.0,
                        models: Vec::new(),
                    });
                    users.len() - 1
                }
            };
            let u = &mut users[i];
            u.totals.plus(&t);
            u.failures += g.failures;
            let model = g.model.clone().unwrap_or_else(|| "unknown".into());
            match u.models.iter_mut().find(|m| m.model == model) {
                Some(m) => {
                    m.totals.plus(&t);
                    m.failures += g.failures;
                }
                None => u.models.push(SpenderModel {
                    model,
                    totals: t,
                    failures: g.failures,
                }),
            }
        }
        users.sort_by(|a, b| {
            b.totals
                .spend
                .cost_micros
                .cmp(&a.totals.spend.cost_micros)
                .then(b.totals.jobs.cmp(&a.totals.jobs))
                .then(a.user_id.cmp(&b.user_id))
        });
        let others = users.len().saturating_sub(limit);
        users.truncate(limit);
        for (i, u) in users.iter_mut().enumerate() {
            u.rank = i + 1;
            u.share = if totals.spend.cost_micros.micros() == 0 {
                0.0
            } else {
                u.totals.spend.cost_micros.micros() as f64
                    / totals.spend.cost_micros.micros() as f64
            };
            u.models.sort_by(|a, b| {
                b.totals
                    .spend
                    .cost_micros
                    .cmp(&a.totals.spend.cost_micros)
                    .then(a.model.cmp(&b.model))
            });
        }
        SpendersReport {
            from: day_of(from_ms),
            to: day_of(to_ms - DAY_MS),
            totals,
            users,
            others,
        }
    }

    /// One line per user and model, top spenders first.
    pub fn to_csv(&self) -> String {
        let mut out = String::from(
            "rank,user_id,model,jobs,input_tokens,output_tokens,cache_write_tokens,\
             cache_read_tokens,cost_usd,failures\n",
        );
        for u in &self.users {
            for m in &u.models {
                out.push_str(&csv_line(u.rank, &u.user_id, m));
            }
        }
        out
    }
}

/// One CSV line of a ranked report: rank, who (a user or a tag), the model's figures.
pub(crate) fn csv_line(rank: usize, who: &str, m: &SpenderModel) -> String {
    let t = &m.totals;
    format!(
        "{},{},{},{},{},{},{},{},{},{}\n",
        rank,
        csv_field(who),
        csv_field(&m.model),
        t.jobs,
        t.spend.input_tokens,
        t.spend.output_tokens,
        t.spend.cache_write_tokens,
        t.spend.cache_read_tokens,
        t.spend.cost_micros.dollars(),
        m.failures
    )
}

/// `limit` from the query string: 1 to [`MAX_SPENDERS`], [`DEFAULT_SPENDERS`] when absent.
pub fn parse_limit(s: Option<&str>) -> Result<usize, crate::error::ApiError> {
    match s.filter(|s| !s.is_empty()) {
        None => Ok(DEFAULT_SPENDERS),
        Some(s) => s
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=MAX_SPENDERS).contains(n))
            .ok_or_else(|| {
                crate::error::ApiError::bad_request(
                    "invalid_limit",
                    format!("limit must be a whole number from 1 to {MAX_SPENDERS}"),
                    Some("limit"),
                )
            }),
    }
}

fn totals_of(g: &SpenderGroup) -> UsageTotals {
    let spend = g.columns.spend(g.cost_unknown > 0);
    UsageTotals {
        jobs: g.jobs,
        spend,
        cost_unknown_jobs: g.cost_unknown,
        refusals: g.refusals,
        fast_jobs: g.fast_jobs,
        fast_cost_micros: g.fast_cost_micros,
        by_route: by_route(g),
    }
}

/// A group's jobs and cost by route: what Bedrock and Vertex AI answered, the rest the
/// Anthropic API's.
fn by_route(g: &SpenderGroup) -> BTreeMap<Provider, RouteSpend> {
    let elsewhere = [
        (Provider::Bedrock, g.bedrock_jobs, g.bedrock_cost_micros),
        (Provider::Vertex, g.vertex_jobs, g.vertex_cost_micros),
    ];
    let mut routes = BTreeMap::new();
    let (mut jobs, mut cost) = (g.jobs, g.columns.cost_micros);
    for (route, n, c) in elsewhere {
        if n > 0 {
            routes.insert(
                route,
                RouteSpend {
                    jobs: n,
                    cost_micros: c,
                },
            );
            jobs = jobs.saturating_sub(n);
            cost = cost.saturating_sub(c);
        }
    }
    if jobs > 0 {
        let on = RouteSpend {
            jobs,
            cost_micros: cost,
        };
        routes.insert(Provider::Anthropic, on);
    }
    routes
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn group(user: &str, model: &str, jobs: u64, cost: u64) -> SpenderGroup {
        SpenderGroup {
            user_id: user.into(),
            model: Some(model.into()),
            jobs,
            columns: SpendColumns {
                input_tokens: jobs * 10,
                output_tokens: jobs * 5,
                cost_micros: UsdMicros::new(cost),
                ..SpendColumns::default()
            },
            failures: u64::from(jobs > 2),
            ..SpenderGroup::default()
        }
    }

    #[test]
    fn top_spenders_come_first_with_their_models_dearest_first() {
        let groups = [
            group("ann", "claude-haiku-5-5", 5, 100),
            group("bob", "claude-sonnet-5-5", 1, 900),
            group("ann", "claude-sonnet-5-5", 1, 300),
            group("cy", "claude-haiku-5-5", 2, 0),
        ];
        let r = SpendersReport::build(&groups, 0, 2 * DAY_MS, 10);
        let order: Vec<(&str, usize, u64)> = r
            .users
            .iter()
            .map(|u| {
                (
                    u.user_id.as_str(),
                    u.rank,
                    u.totals.spend.cost_micros.micros(),
                )
            })
            .collect();
        assert_eq!(order, [("bob", 1, 900), ("ann", 2, 400), ("cy", 3, 0)]);
        assert_eq!(r.users[1].models[0].model, "claude-sonnet-5-5");
        assert_eq!(r.users[1].totals.jobs, 6);
        assert_eq!(r.users[1].failures, 1);
        assert_eq!(r.totals.spend.cost_micros, 1300);
        assert_eq!(r.users[0].share, 900.0 / 1300.0);
        assert_eq!(
            (r.from.as_str(), r.to.as_str()),
            ("1970-01-01", "1970-01-02")
        );
        let csv = r.to_csv();
        assert_eq!(csv.lines().count(), 1 + 4);
        assert!(csv
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("1,bob,claude-sonnet-5-5,1,"));
    }

    #[test]
    fn the_limit_keeps_the_top_and_counts_the_rest() {
        let groups: Vec<SpenderGroup> = (0..5)
            .map(|i| group(&format!("u{i}"), "claude-haiku-5-5", 1, i * 10))
            .collect();
        let r = SpendersReport::build(&groups, 0, DAY_MS, 2);
        assert_eq!(r.users.len(), 2);
        assert_eq!(r.users[0].user_id, "u4");
        assert_eq!(r.others, 3);
        assert_eq!(r.totals.spend.cost_micros, 100, "the totals keep everyone");
    }

    #[test]
    fn limits_outside_the_range_are_refused() {
        assert_eq!(parse_limit(None).unwrap(), DEFAULT_SPENDERS);
        assert_eq!(parse_limit(Some("7")).unwrap(), 7);
        for bad in ["0", "1001", "ten", "-1"] {
            assert_eq!(
                parse_limit(Some(bad)).unwrap_err().body.field.as_deref(),
                Some("limit")
            );
        }
    }

    proptest! {
        #[test]
        fn every_micro_dollar_is_in_exactly_one_user_and_model(
            rows in proptest::collection::vec((0u8..6, 0u8..3, 1u64..50, 0u64..10_000), 0..60)
        ) {
            let groups: Vec<SpenderGroup> = rows
                .iter()
                .map(|(u, m, jobs, cost)| group(&format!("u{u}"), &format!("m{m}"), *jobs, *cost))
                .collect();
            let r = SpendersReport::build(&groups, 0, DAY_MS, MAX_SPENDERS);
            let total: u64 = groups.iter().map(|g| g.columns.cost_micros.micros()).sum();
            prop_assert_eq!(r.totals.spend.cost_micros.micros(), total);
            let by_users: u64 = r.users.iter().map(|u| u.totals.spend.cost_micros.micros()).sum();
            let by_models: u64 = r.users.iter().flat_map(|u| &u.models).map(|m| m.totals.spend.cost_micros.micros()).sum();
            prop_assert_eq!(by_users, total);
            prop_assert_eq!(by_models, total);
            for w in r.users.windows(2) {
                prop_assert!(w[0].totals.spend.cost_micros >= w[1].totals.spend.cost_micros);
            }
        }
    }
}
