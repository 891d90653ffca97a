//! Prompt-cache use you can see (issue 20, part 5): per template and model, how much of the
//! prompts was read from the cache and what that saved, from the jobs' own token counts.
//!
//! What a cache costs and saves, from the pricing page
//! (<https://docs.anthropic.com/en/docs/about-claude/pricing>, prompt caching): a 5-minute
//! write costs 1.25× the input price, a 1-hour write 2×, a read 0.1× — and batches half of all
//! of it. The saving of a group is what its prompts would have cost read in full (every cache
//! token billed as plain input) minus what they cost: reads save, writes cost extra. Our jobs
//! write 1-hour entries in batches and 5-minute ones in synchronous calls
//! (`MessagesRequest::with_one_hour_cache`), which is the lifetime the saving assumes for a
//! group's writes.

use serde::{Deserialize, Serialize};

use crate::anthropic::{CacheCreation, Usage};
use crate::pricing::{cost_micros, Tier};

/// One group's sums, as the store reads them.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CacheSums {
    /// The job's template (PDF prompts), else its kind (`prompt`, `feedback`).
    pub template: String,
    pub model: String,
    /// `sync` or `batch`.
    pub mode: String,
    pub jobs: u64,
    pub input_tokens: u64,
    pub cache_write_tokens: u64,
    pub cache_read_tokens: u64,
}

/// One line of `GET /api/usage/cache`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CacheLine {
    pub template: String,
    pub model: String,
    pub mode: String,
    pub jobs: u64,
    /// Prompt tokens in all: uncached input, cache writes and cache reads.
    pub prompt_tokens: u64,
    pub cache_write_tokens: u64,
    pub cache_read_tokens: u64,
    /// Share of the prompt tokens read from the cache (0 to 1).
    pub hit_rate: f64,
    /// What the cache saved (negative: the writes cost more than the reads saved).
    pub saved_micros: i64,
    /// The model is not in the price table: no saving is computed.
    pub unpriced: bool,
}

/// `GET /api/usage/cache`: the lines, most saved first, and their totals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CacheReport {
    pub from: String,
    pub to: String,
    /// Whose jobs: one user's, or `null` for every user's (admins).
    pub user_id: Option<String>,
    pub lines: Vec<CacheLine>,
    pub cache_read_tokens: u64,
    pub prompt_tokens: u64,
    pub hit_rate: f64,
    pub saved_micros: i64,
}

fn clamp(n: u64) -> u32 {
    n.min(u64::from(u32::MAX)) as u32
}

/// What the cache saved a group at the prices in force at `at_ms`; `None` for an unpriced
/// model.
pub fn saved_micros(s: &CacheSums, at_ms: i64) -> Option<i64> {
    let tier = if s.mode == "batch" {
        Tier::Batch
    } else {
        Tier::Standard
    };
    let writes = clamp(s.cache_write_tokens);
    let creation = if tier == Tier::Batch {
        CacheCreation {
            ephemeral_5m_input_tokens: 0,
            ephemeral_1h_input_tokens: writes,
        }
    } else {
        CacheCreation {
            ephemeral_5m_input_tokens: writes,
            ephemeral_1h_input_tokens: 0,
        }
    };
    let actual = Usage {
        input_tokens: clamp(s.input_tokens),
        output_tokens: 0,
        cache_creation_input_tokens: writes,
        cache_read_input_tokens: clamp(s.cache_read_tokens),
        cache_creation: Some(creation),
        speed: None,
    };
    let uncached = Usage {
        input_tokens: clamp(s.input_tokens + s.cache_write_tokens + s.cache_read_tokens),
        output_tokens: 0,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation: None,
        speed: None,
    };
    let with = cost_micros(&s.model, &actual, tier, at_ms)?;
    let without = cost_micros(&s.model, &uncached, tier, at_ms)?;
    Some(without.micros() as i64 - with.micros() as i64)
}

fn rate(read: u64, prompt: u64) -> f64 {
    if prompt == 0 {
        0.0
    } else {
        read as f64 / prompt as f64
    }
}

impl CacheReport {
    pub fn build(
        (from, to): (String, String),
        user_id: Option<String>,
        sums: &[CacheSums],
        at_ms: i64,
    ) -> CacheReport {
        let mut lines: Vec<CacheLine> = sums
            .iter()
            .map(|s| {
                let prompt = s.input_tokens + s.cache_write_tokens + s.cache_read_tokens;
                let saved = saved_micros(s, at_ms);
                CacheLine {
                    template: s.template.clone(),
                    model: s.model.clone(),
                    mode: s.mode.clone(),
                    jobs: s.jobs,
                    prompt_tokens: prompt,
                    cache_write_tokens: s.cache_write_tokens,
                    cache_read_tokens: s.cache_read_tokens,
                    hit_rate: rate(s.cache_read_tokens, prompt),
                    saved_micros: saved.unwrap_or(0),
                    unpriced: saved.is_none(),
                }
            })
            .collect();
        lines.sort_by(|a, b| {
            b.saved_micros
                .cmp(&a.saved_micros)
                .then_with(|| b.cache_read_tokens.cmp(&a.cache_read_tokens))
                .then_with(|| {
                    (&a.template, &a.model, &a.mode).cmp(&(&b.template, &b.model, &b.mode))
                })
        });
        let read: u64 = lines.iter().map(|l| l.cache_read_tokens).sum();
        let prompt: u64 = lines.iter().map(|l| l.prompt_tokens).sum();
        CacheReport {
            from,
            to,
            user_id,
            cache_read_tokens: read,
            prompt_tokens: prompt,
            hit_rate: rate(read, prompt),
            saved_micros: lines.iter().map(|l| l.saved_micros).sum(),
            lines,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sums(mode: &str, input: u64, write: u64, read: u64) -> CacheSums {
        CacheSums {
            template: "prompt".into(),
            model: "claude-sonnet-4-6".into(),
            mode: mode.into(),
            jobs: 1,
            input_tokens: input,
            cache_write_tokens: write,
            cache_read_tokens: read,
        }
    }

    const NOW: i64 = 1_796_000_000_000;

    #[test]
    fn a_read_million_saves_nine_tenths_of_the_input_price() {
        // Sonnet 4.6: $3 / MTok input, reads 0.1×: a million read tokens save $2.70.
        assert_eq!(
            saved_micros(&sums("sync", 0, 0, 1_000_000), NOW),
            Some(2_700_000)
        );
        // Half of that in a batch.
        assert_eq!(
            saved_micros(&sums("batch", 0, 0, 1_000_000), NOW),
            Some(1_350_000)
        );
    }

    #[test]
    fn writes_cost_extra_until_reads_pay_them_back() {
        // A 5-minute write of a million costs $0.75 more than plain input…
        assert_eq!(
            saved_micros(&sums("sync", 0, 1_000_000, 0), NOW),
            Some(-750_000)
        );
        // …and a 1-hour one (batches) $3.00 more, halved: $1.50.
        assert_eq!(
            saved_micros(&sums("batch", 0, 1_000_000, 0), NOW),
            Some(-1_500_000)
        );
        let r = CacheReport::build(
            ("2026-12-01".into(), "2026-12-01".into()),
            None,
            &[sums("sync", 500, 1_000, 9_000)],
            NOW,
        );
        assert!((r.hit_rate - 9_000.0 / 10_500.0).abs() < 1e-9);
        assert_eq!(r.lines[0].prompt_tokens, 10_500);
        assert!(r.saved_micros > 0);
    }

    #[test]
    fn an_unpriced_model_saves_nothing_it_can_state() {
        let mut s = sums("sync", 0, 0, 1_000);
        s.model = "claude-unknown-9".into();
        let r = CacheReport::build(("a".into(), "b".into()), None, &[s], NOW);
        assert!(r.lines[0].unpriced);
        assert_eq!(r.saved_micros, 0);
    }
}
