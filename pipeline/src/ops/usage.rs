//! Per-user usage reports: which UTC days, tokens and cost by day and model, what batches and
//! caching saved, and the CSV export.

use crate::dto::{Spend, SpendColumns};
use crate::money::UsdMicros;
use serde::{Deserialize, Serialize};

use super::budgets::DailyBudget;
use crate::clock::{day_of, parse_day, DAY_MS};
use crate::error::ApiError;

use crate::models::providers::Provider;
use crate::status::Mode;
use std::collections::BTreeMap;

/// The longest range one usage request may cover.
pub const MAX_USAGE_DAYS: i64 = 366;

/// A usage request: whose, and which UTC days (inclusive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageQuery {
    pub user_id: String,
    pub from_ms: i64,
    /// Exclusive end (the start of the day after `to`).
    pub to_ms: i64,
}

impl UsageQuery {
    /// The days `from` and `to` name (`YYYY-MM-DD`, inclusive; default: the 30 days up to
    /// today) as `[from_ms, to_ms)`, at most [`MAX_USAGE_DAYS`] long.
    pub fn range(from: Option<&str>, to: Option<&str>, now: i64) -> Result<(i64, i64), ApiError> {
        let day = |s: Option<&str>, field: &str, default: i64| match s.filter(|s| !s.is_empty()) {
            None => Ok(default),
            Some(s) => parse_day(s).ok_or_else(|| {
                ApiError::bad_request(
                    "invalid_date",
                    format!("{field} must be a date written YYYY-MM-DD"),
                    Some(field),
                )
            }),
        };
        let today = now.div_euclid(DAY_MS) * DAY_MS;
        let to_ms = day(to, "to", today)? + DAY_MS;
        let from_ms = day(from, "from", to_ms - 30 * DAY_MS)?;
        if from_ms >= to_ms {
            return Err(ApiError::bad_request(
                "invalid_range",
                "from must not be after to",
                Some("from"),
            ));
        }
        if to_ms - from_ms > MAX_USAGE_DAYS * DAY_MS {
            return Err(ApiError::bad_request(
                "invalid_range",
                format!("a usage range covers at most {MAX_USAGE_DAYS} days"),
                Some("from"),
            ));
        }
        Ok((from_ms, to_ms))
    }

    /// From the query string's `from`, `to` (`YYYY-MM-DD`, default: the last 30 days up to
    /// today) and `user` (admins only; others get 403 for another user's name).
    pub fn parse(
        from: Option<&str>,
        to: Option<&str>,
        user: Option<&str>,
        caller: &str,
        admin: bool,
        now: i64,
    ) -> Result<UsageQuery, ApiError> {
        let (from_ms, to_ms) = Self::range(from, to, now)?;
        let user_id = match user.filter(|u| !u.is_empty()) {
            None => caller.to_owned(),
            Some(u) if u == caller => caller.to_owned(),
            Some(u) if admin => crate::identity::UserId::parse(u)
                .map_err(|e| ApiError::bad_request("invalid_user", e, Some("user")))?
                .as_str()
                .to_owned(),
            Some(_) => {
                return Err(ApiError::forbidden(
                    "only admins may see another user's usage",
                ))
            }
        };
        Ok(UsageQuery {
            user_id,
            from_ms,
            to_ms,
        })
    }
}

/// One group of the usage query: a day's jobs of one model and mode.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct UsageGroup {
    pub day: i64,
    pub model: Option<String>,
    pub mode: String,
    pub jobs: u64,
    #[serde(flatten)]
    pub columns: SpendColumns,
    #[serde(default)]
    pub cost_unknown: u64,
    /// Refused attempts billed under this model (their jobs fell back to another model).
    #[serde(default)]
    pub refusals: u64,
}

impl UsageGroup {
    /// The group's tokens and cost.
    pub fn spend(&self) -> Spend {
        self.columns.spend(self.cost_unknown > 0)
    }
}

/// The rollups' mode of jobs answered in fast mode (migration 0024): their mode and `_fast`.
pub const FAST_MODE_KEY: &str = "sync_fast";

/// The route of a rollup group (migration 0025 keys a job answered on another route under its
/// mode, `@` and the route: `sync@bedrock`; every other group is the Anthropic API's).
pub fn route_of_mode(mode: &str) -> Provider {
    mode.split_once('@')
        .and_then(|(_, r)| Provider::parse(r))
        .unwrap_or(Provider::Anthropic)
}

/// Jobs and cost on one route.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RouteSpend {
    pub jobs: u64,
    pub cost_micros: UsdMicros,
}

/// Tokens and cost of a set of jobs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UsageTotals {
    pub jobs: u64,
    /// Their tokens and cost (`cost_unknown`: some of them have no price).
    #[serde(flatten)]
    pub spend: Spend,
    /// Jobs answered by a model the price table does not know (their cost is not included).
    pub cost_unknown_jobs: u64,
    /// Refused attempts (`pipeline::refusal`): their tokens and cost are in the figures above,
    /// under the model that refused, though their jobs are counted under the model that
    /// answered.
    #[serde(default)]
    pub refusals: u64,
    /// Jobs answered in fast mode, and their cost (included in the figures above).
    #[serde(default)]
    pub fast_jobs: u64,
    #[serde(default)]
    pub fast_cost_micros: UsdMicros,
    /// Jobs and cost by the route that answered them (issue 36: the Anthropic API, Bedrock,
    /// Vertex AI), included in the figures above.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub by_route: BTreeMap<Provider, RouteSpend>,
}

impl UsageTotals {
    fn add(&mut self, g: &UsageGroup) {
        let fast = g.mode == FAST_MODE_KEY;
        let on_route = RouteSpend {
            jobs: g.jobs,
            cost_micros: g.columns.cost_micros,
        };
        self.plus(&UsageTotals {
            by_route: BTreeMap::from([(route_of_mode(&g.mode), on_route)]),
            jobs: g.jobs,
            spend: g.spend(),
            cost_unknown_jobs: g.cost_unknown,
            refusals: g.refusals,
            fast_jobs: if fast { g.jobs } else { 0 },
            fast_cost_micros: if fast {
                g.columns.cost_micros
            } else {
                UsdMicros::ZERO
            },
        });
    }

    /// Adds another set's totals to these.
    pub fn plus(&mut self, t: &UsageTotals) {
        self.jobs += t.jobs;
        self.spend = self.spend + t.spend;
        self.cost_unknown_jobs += t.cost_unknown_jobs;
        self.refusals += t.refusals;
        self.fast_jobs += t.fast_jobs;
        self.fast_cost_micros += t.fast_cost_micros;
        for (route, r) in &t.by_route {
            let mine = self.by_route.entry(*route).or_default();
            mine.jobs += r.jobs;
            mine.cost_micros += r.cost_micros;
        }
    }
}

/// A row of the usage table: one day and model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UsageRow {
    pub day: String,
    pub model: String,
    #[serde(flatten)]
    pub totals: UsageTotals,
}

/// One day's totals (the chart's bars; days without jobs included as zero).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UsageDay {
    pub day: String,
    pub cost_micros: UsdMicros,
    pub jobs: u64,
}

/// What batches and caching saved, in micro-dollars.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Savings {
    /// The Message Batches API bills half: batch jobs would have cost this much more in sync.
    pub batch_micros: UsdMicros,
    /// Cache reads billed at the read price instead of the input price, less the 5-minute write
    /// premium (0.25× input) paid for the writes; never below 0.
    pub cache_micros: UsdMicros,
}

/// `GET /api/usage`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UsageReport {
    pub user_id: String,
    pub from: String,
    pub to: String,
    pub rows: Vec<UsageRow>,
    pub days: Vec<UsageDay>,
    pub totals: UsageTotals,
    pub savings: Savings,
    pub budget: DailyBudget,
}

impl UsageReport {
    /// Builds the report from the query's groups.
    pub fn build(q: &UsageQuery, groups: &[UsageGroup], budget: DailyBudget) -> UsageReport {
        let mut rows: Vec<UsageRow> = Vec::new();
        let mut totals = UsageTotals::default();
        let mut savings = Savings::default();
        let first_day = q.from_ms.div_euclid(DAY_MS);
        let n_days = ((q.to_ms - q.from_ms) / DAY_MS) as usize;
        let mut days: Vec<UsageDay> = (0..n_days)
            .map(|i| UsageDay {
                day: day_of((first_day + i as i64) * DAY_MS),
                cost_micros: UsdMicros::ZERO,
                jobs: 0,
            })
            .collect();
        let mut cache_saved: i128 = 0;
        for g in groups {
            totals.add(g);
            let day = day_of(g.day * DAY_MS);
            let model = g.model.clone().unwrap_or_else(|| "unknown".into());
            match rows.iter_mut().find(|r| r.day == day && r.model == model) {
                Some(r) => r.totals.add(g),
                None => {
                    let mut t = UsageTotals::default();
                    t.add(g);
                    rows.push(UsageRow {
                        day: day.clone(),
                        model: model.clone(),
                        totals: t,
                    });
                }
            }
            if let Some(d) = usize::try_from(g.day - first_day)
                .ok()
                .and_then(|i| days.get_mut(i))
            {
                d.cost_micros += g.columns.cost_micros;
                d.jobs += g.jobs;
            }
            let batch = g.mode == Mode::Batch.as_str();
            if batch {
                savings.batch_micros += g.columns.cost_micros;
            }
            if let Some((_, p)) = crate::pricing::price_of(&model, g.day * DAY_MS) {
                // µ$ per MTok × tokens (at that day's prices); halved for batch jobs.
                let read =
                    g.columns.cache_read_tokens as i128 * (p.input as i128 - p.cache_read as i128);
                let premium = g.columns.cache_write_tokens as i128 * p.input as i128 / 4;
                let net = (read - premium) / if batch { 2 } else { 1 };
                cache_saved += net;
            }
        }
        savings.cache_micros = UsdMicros::new((cache_saved.max(0) / 1_000_000) as u64);
        rows.sort_by(|a, b| a.day.cmp(&b.day).then(a.model.cmp(&b.model)));
        UsageReport {
            user_id: q.user_id.clone(),
            from: day_of(q.from_ms),
            to: day_of(q.to_ms - DAY_MS),
            rows,
            days,
            totals,
            savings,
            budget,
        }
    }

    /// The CSV export: one line per day and model, a header first, dollars with six decimals.
    pub fn to_csv(&self) -> String {
        let mut out = String::from(
            "day,model,jobs,input_tokens,output_tokens,cache_write_tokens,cache_read_tokens,cost_usd\n",
        );
        for r in &self.rows {
            let t = &r.totals;
            out.push_str(&format!(
                "{},{},{},{},{},{},{},{}\n",
                r.day,
                csv_field(&r.model),
                t.jobs,
                t.spend.input_tokens,
                t.spend.output_tokens,
                t.spend.cache_write_tokens,
                t.spend.cache_read_tokens,
                t.spend.cost_micros.dollars()
            ));
        }
        out
    }
}

/// A CSV field, quoted when needed; a leading `=+-@` is defused (spreadsheet formulas).
pub fn csv_field(s: &str) -> String {
    let s = if s.starts_with(['=', '+', '-', '@']) {
        format!("'{s}")
    } else {
        s.to_owned()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(day: i64, model: &str, mode: &str, cost: u64, cw: u64, cr: u64) -> UsageGroup {
        UsageGroup {
            day,
            model: Some(model.into()),
            mode: mode.into(),
            jobs: 1,
            columns: SpendColumns {
                input_tokens: 100,
                output_tokens: 10,
                cache_write_tokens: cw,
                cache_read_tokens: cr,
                cost_micros: UsdMicros::new(cost),
            },
            cost_unknown: 0,
            refusals: 0,
        }
    }

    #[test]
    fn usage_report_totals_days_and_savings() {
        let now = parse_day("2026-11-29").unwrap() + 3_600_000;
        let q = UsageQuery::parse(Some("2026-11-27"), None, None, "ann", false, now).unwrap();
        let d = parse_day("2026-11-27").unwrap() / DAY_MS;
        let groups = [
            g(d, "claude-sonnet-5-5", "sync", 1_000, 0, 0),
            g(d, "claude-sonnet-5-5", "batch", 500, 0, 0),
            g(d + 2, "claude-haiku-5-5", "sync", 7, 0, 1_000_000),
        ];
        let r = UsageReport::build(&q, &groups, DailyBudget::default());
        assert_eq!(
            (r.from.as_str(), r.to.as_str()),
            ("2026-11-27", "2026-11-29")
        );
        assert_eq!(r.days.len(), 3);
        assert_eq!(
            r.days.iter().map(|d| d.cost_micros).collect::<Vec<_>>(),
            [1_500, 0, 7]
        );
        assert_eq!(r.totals.spend.cost_micros, 1_507);
        assert_eq!(r.totals.jobs, 3);
        assert_eq!(
            r.rows.len(),
            2,
            "sync and batch of one model and day share a row"
        );
        assert_eq!(r.rows[0].totals.spend.cost_micros, 1_500);
        assert_eq!(r.savings.batch_micros, 500);
        // 1 MTok read on Haiku 5.5 ($0.10 input, reads at 0.1×): saved $0.09.
        assert_eq!(r.savings.cache_micros, 90_000);
        let csv = r.to_csv();
        assert!(csv.starts_with("day,model,jobs,"));
        assert!(
            csv.contains("2026-11-27,claude-sonnet-5-5,2,200,20,0,0,0.001500\n"),
            "{csv}"
        );
        assert_eq!(csv.lines().count(), 3);
    }

    #[test]
    fn usage_splits_by_the_route_that_answered() {
        let now = parse_day("2026-12-07").unwrap() + 3_600_000;
        let q = UsageQuery::parse(None, None, None, "ann", false, now).unwrap();
        let d = now / DAY_MS;
        let groups = [
            g(d, "claude-sonnet-5-5", "sync", 1_000, 0, 0),
            g(d, "claude-sonnet-5-5", "sync@bedrock", 1_000, 0, 0),
            g(d, "claude-sonnet-5-5", "sync@vertex", 1_100, 0, 0),
            g(d, "claude-sonnet-5-5", "batch", 500, 0, 0),
        ];
        let r = UsageReport::build(&q, &groups, DailyBudget::default());
        assert_eq!(r.totals.jobs, 4);
        assert_eq!(r.totals.spend.cost_micros, 3_600);
        let route = |p| r.totals.by_route[&p];
        assert_eq!(
            (
                route(Provider::Anthropic).jobs,
                route(Provider::Anthropic).cost_micros
            ),
            (2, UsdMicros::new(1_500))
        );
        assert_eq!(route(Provider::Bedrock).cost_micros, 1_000);
        assert_eq!(route(Provider::Vertex).cost_micros, 1_100);
        assert_eq!(r.savings.batch_micros, 500, "only the batch group saved");
        assert_eq!(route_of_mode("sync_fast"), Provider::Anthropic);
        let json = serde_json::to_value(&r.totals).unwrap();
        assert_eq!(json["by_route"]["vertex"]["jobs"], 1);
    }

    #[test]
    fn usage_query_rules() {
        let now = parse_day("2026-11-29").unwrap();
        let q = UsageQuery::parse(None, None, None, "ann", false, now).unwrap();
        assert_eq!((q.to_ms - q.from_ms) / DAY_MS, 30);
        assert_eq!(q.to_ms, now + DAY_MS);
        let e = UsageQuery::parse(None, None, Some("bob"), "ann", false, now).unwrap_err();
        assert_eq!(e.status, 403);
        assert_eq!(
            UsageQuery::parse(None, None, Some("bob"), "ann", true, now)
                .unwrap()
                .user_id,
            "bob"
        );
        assert_eq!(
            UsageQuery::parse(Some("x"), None, None, "a", false, now)
                .unwrap_err()
                .status,
            400
        );
        assert_eq!(
            UsageQuery::parse(
                Some("2026-11-29"),
                Some("2026-11-28"),
                None,
                "a",
                false,
                now
            )
            .unwrap_err()
            .status,
            400
        );
        assert!(UsageQuery::parse(Some("2020-01-01"), None, None, "a", false, now).is_err());
    }

    #[test]
    fn csv_defuses_formulas_and_quotes() {
        assert_eq!(csv_field("=cmd()"), "'=cmd()");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("plain"), "plain");
    }
}
