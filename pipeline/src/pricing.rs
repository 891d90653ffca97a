//! Prices and cost. Money is integer micro-dollars; this table is the product's own (the
//! simulator keeps an independent one, so each checks the other).
//!
//! Prices are US dollars per million tokens, which is exactly micro-dollars per token. Cache
//! writes (5-minute) cost 1.25× input; cache reads a model-specific fraction of input; the
//! Message Batches API half of everything.

use serde::{Deserialize, Serialize};

use crate::anthropic::Usage;

/// The model the product uses unless a job names another.
pub const DEFAULT_MODEL: &str = "claude-sonnet-5-5";

/// One model family's prices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelPrice {
    /// The row applies to model ids starting with this.
    pub prefix: &'static str,
    pub input_per_mtok: f64,
    pub output_per_mtok: f64,
    /// Cache reads as a fraction of the input price.
    pub cache_read_factor: f64,
}

/// Most specific prefixes first: the first match wins.
pub const PRICES: &[ModelPrice] = &[
    row("claude-fable-5-", 10.0, 50.0, 0.025),
    row("claude-mythos-5-", 10.0, 50.0, 0.025),
    row("claude-fable-5", 10.0, 50.0, 0.1),
    row("claude-mythos", 10.0, 50.0, 0.1),
    row("claude-opus-5-5", 4.0, 20.0, 0.05),
    row("claude-opus-5", 5.0, 25.0, 0.1),
    row("claude-opus-4-0", 15.0, 75.0, 0.1),
    row("claude-opus-4-1", 15.0, 75.0, 0.1),
    row("claude-opus-4-2025", 15.0, 75.0, 0.1),
    row("claude-opus-4-", 5.0, 25.0, 0.1),
    row("claude-sonnet-5", 2.0, 10.0, 0.1),
    row("claude-sonnet-4", 3.0, 15.0, 0.1),
    row("claude-haiku-5-5", 0.1, 0.5, 0.1),
    row("claude-haiku-4-5", 1.0, 5.0, 0.1),
    row("claude-3-5-haiku", 0.8, 4.0, 0.1),
    row("claude-3-haiku", 0.25, 1.25, 0.1),
];

const fn row(prefix: &'static str, input: f64, output: f64, cache_read: f64) -> ModelPrice {
    ModelPrice {
        prefix,
        input_per_mtok: input,
        output_per_mtok: output,
        cache_read_factor: cache_read,
    }
}

/// Haiku 5.5 prompts over this many tokens are billed at five times the rate.
const HAIKU_5_5_LONG: u64 = 100_000;

/// How the call was billed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    Standard,
    Batch,
}

pub fn price_of(model: &str) -> Option<&'static ModelPrice> {
    PRICES.iter().find(|p| model.starts_with(p.prefix))
}

/// Cost in micro-dollars, rounded to the nearest. An unknown model costs 0 (and is reported by
/// whoever accepted it; job APIs only accept known models).
pub fn cost_micros(model: &str, usage: &Usage, tier: Tier) -> u64 {
    let Some(p) = price_of(model) else {
        return 0;
    };
    let prompt = usage.input_tokens as u64
        + usage.cache_creation_input_tokens as u64
        + usage.cache_read_input_tokens as u64;
    let long = if p.prefix == "claude-haiku-5-5" && prompt > HAIKU_5_5_LONG {
        5.0
    } else {
        1.0
    };
    let input = p.input_per_mtok * long;
    let micros = usage.input_tokens as f64 * input
        + usage.cache_creation_input_tokens as f64 * input * 1.25
        + usage.cache_read_input_tokens as f64 * input * p.cache_read_factor
        + usage.output_tokens as f64 * p.output_per_mtok * long;
    let micros = match tier {
        Tier::Standard => micros,
        Tier::Batch => micros / 2.0,
    };
    micros.round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn u(i: u32, o: u32, cw: u32, cr: u32) -> Usage {
        Usage {
            input_tokens: i,
            output_tokens: o,
            cache_creation_input_tokens: cw,
            cache_read_input_tokens: cr,
        }
    }

    #[test]
    fn the_default_model_is_priced() {
        assert!(price_of(DEFAULT_MODEL).is_some());
        assert_eq!(
            cost_micros(
                DEFAULT_MODEL,
                &u(1_000_000, 1_000_000, 0, 0),
                Tier::Standard
            ),
            12_000_000
        );
    }

    #[test]
    fn batches_cost_half() {
        let usage = u(12_345, 678, 0, 0);
        let s = cost_micros("claude-haiku-4-5", &usage, Tier::Standard);
        let b = cost_micros("claude-haiku-4-5", &usage, Tier::Batch);
        assert!(s.abs_diff(2 * b) <= 1);
    }

    #[test]
    fn cache_writes_cost_more_and_reads_less_than_input() {
        let m = "claude-sonnet-4-6";
        let plain = cost_micros(m, &u(10_000, 0, 0, 0), Tier::Standard);
        assert_eq!(
            cost_micros(m, &u(0, 0, 10_000, 0), Tier::Standard),
            plain * 5 / 4
        );
        assert_eq!(
            cost_micros(m, &u(0, 0, 0, 10_000), Tier::Standard),
            plain / 10
        );
    }

    proptest! {
        #[test]
        fn cost_grows_with_tokens(i in 0u32..1_000_000, o in 0u32..100_000, extra in 1u32..10_000) {
            for p in PRICES {
                let m = p.prefix;
                let base = cost_micros(m, &u(i, o, 0, 0), Tier::Standard);
                prop_assert!(cost_micros(m, &u(i, o + extra, 0, 0), Tier::Standard) >= base);
                prop_assert!(cost_micros(m, &u(i + extra, o, 0, 0), Tier::Standard) >= base);
            }
        }
    }
}
