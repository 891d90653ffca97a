//! Cost by tag (`GET /api/usage/tags`): tokens, cost and jobs per `key=value` tag and model over
//! a range of UTC days, dearest first, from the tag rollup (migration 0018) — the same figures,
//! summed the same way, as the per-user rollup, so a tag's cost equals the sum of its jobs'.
//! A job with two tags counts under each, so the tags' costs do not add up to a total.

use serde::{Deserialize, Serialize};

use super::spenders::{SpenderGroup, SpenderModel, SpendersReport};
use super::usage::UsageTotals;

/// One tag, totals over the range and its models, dearest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TagUsage {
    /// 1 for the dearest tag.
    pub rank: usize,
    pub tag: String,
    #[serde(flatten)]
    pub totals: UsageTotals,
    pub failures: u64,
    pub models: Vec<SpenderModel>,
}

/// `GET /api/usage/tags`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TagsReport {
    pub from: String,
    pub to: String,
    /// Whose jobs: one user's, or `null` for every user's (admins).
    pub user_id: Option<String>,
    pub tags: Vec<TagUsage>,
    /// Tags left out by the limit.
    pub others: usize,
}

impl TagsReport {
    /// `groups` are the rollup's sums per tag and model, the tag in `user_id` (the store's
    /// query names it so): ranked by cost, then jobs, then name, the first `limit` kept — the
    /// spenders report's rules, with tags for users.
    pub fn build(
        groups: &[SpenderGroup],
        user_id: Option<String>,
        from_ms: i64,
        to_ms: i64,
        limit: usize,
    ) -> Self {
        let ranked = SpendersReport::build(groups, from_ms, to_ms, limit);
        TagsReport {
            from: ranked.from,
            to: ranked.to,
            user_id,
            tags: ranked
                .users
                .into_iter()
                .map(|s| TagUsage {
                    rank: s.rank,
                    tag: s.user_id,
                    totals: s.totals,
                    failures: s.failures,
                    models: s.models,
                })
                .collect(),
            others: ranked.others,
        }
    }

    /// One line per tag and model, dearest tags first.
    pub fn to_csv(&self) -> String {
        let mut out = String::from(
            "rank,tag,model,jobs,input_tokens,output_tokens,cache_write_tokens,\
             cache_read_tokens,cost_usd,failures\n",
        );
        for t in &self.tags {
            for m in &t.models {
                out.push_str(&super::spenders::csv_line(t.rank, &t.tag, m));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
