//! Prices and cost. Money is integer micro-dollars; this table is the product's own (the
//! simulator keeps an independent one, so each checks the other).
//!
//! Prices are kept in micro-dollars per million tokens and every cost is computed in integers,
//! so a job's cost is exact and reproducible. Cache writes cost 1.25× input (5-minute) or 2×
//! (1-hour); cache reads a model-specific fraction of input; the Message Batches API half of
//! everything.

use serde::{Deserialize, Serialize};

use crate::anthropic::Usage;

/// The model the product uses unless a job names another.
pub const DEFAULT_MODEL: &str = "claude-sonnet-5-5";

/// One model family's prices, in micro-dollars per million tokens (so `3_000_000` is $3 / MTok).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelPrice {
    /// The row applies to model ids starting with this.
    pub prefix: &'static str,
    pub input: u64,
    pub output: u64,
    /// Cache reads, in thousandths of the input price (100 = 0.1×).
    pub cache_read_permille: u64,
}

/// Most specific prefixes first: the first match wins.
pub const PRICES: &[ModelPrice] = &[
    row("claude-fable-5-", 10.0, 50.0, 25),
    row("claude-mythos-5-", 10.0, 50.0, 25),
    row("claude-fable-5", 10.0, 50.0, 100),
    row("claude-mythos", 10.0, 50.0, 100),
    row("claude-opus-5-5", 4.0, 20.0, 50),
    row("claude-opus-5", 5.0, 25.0, 100),
    row("claude-opus-4-0", 15.0, 75.0, 100),
    row("claude-opus-4-1", 15.0, 75.0, 100),
    row("claude-opus-4-2025", 15.0, 75.0, 100),
    row("claude-opus-4-", 5.0, 25.0, 100),
    row("claude-sonnet-5", 2.0, 10.0, 100),
    row("claude-sonnet-4", 3.0, 15.0, 100),
    row("claude-haiku-5-5", 0.1, 0.5, 100),
    row("claude-haiku-4-5", 1.0, 5.0, 100),
    row("claude-3-5-haiku", 0.8, 4.0, 100),
    row("claude-3-haiku", 0.25, 1.25, 100),
];

/// A row from list prices in dollars per million tokens (written as on the pricing page).
const fn row(prefix: &'static str, input: f64, output: f64, read_permille: u64) -> ModelPrice {
    ModelPrice {
        prefix,
        input: (input * 1_000_000.0) as u64,
        output: (output * 1_000_000.0) as u64,
        cache_read_permille: read_permille,
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

/// Cost in micro-dollars, exact and rounded half up once at the end: input at the input price,
/// 5-minute cache writes at 1.25×, 1-hour cache writes at 2×, cache reads at the model's read
/// factor, output at the output price; the Message Batches API halves all of it (stacking with
/// the cache multipliers). `None` for a model the table does not know: flagged, never priced 0.
pub fn cost_micros(model: &str, usage: &Usage, tier: Tier) -> Option<u64> {
    let p = price_of(model)?;
    let prompt = usage.input_tokens as u64
        + usage.cache_creation_input_tokens as u64
        + usage.cache_read_input_tokens as u64;
    let long = if p.prefix == "claude-haiku-5-5" && prompt > HAIKU_5_5_LONG {
        5
    } else {
        1
    };
    let (input, output) = ((p.input * long) as u128, (p.output * long) as u128);
    let write_1h = usage.cache_write_1h() as u128;
    let write_5m = usage.cache_creation_input_tokens as u128 - write_1h;
    // Everything in µ$·tok/MTok × 8,000 (the common denominator of 5/4, 2, permille and ½).
    let numerator = usage.input_tokens as u128 * input * 8_000
        + write_5m * input * 10_000
        + write_1h * input * 16_000
        + usage.cache_read_input_tokens as u128 * input * p.cache_read_permille as u128 * 8
        + usage.output_tokens as u128 * output * 8_000;
    let denominator: u128 = 8_000
        * 1_000_000
        * match tier {
            Tier::Standard => 1,
            Tier::Batch => 2,
        };
    Some(((numerator + denominator / 2) / denominator) as u64)
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
            cache_creation: None,
        }
    }

    fn cost(m: &str, usage: &Usage, tier: Tier) -> u64 {
        cost_micros(m, usage, tier).unwrap()
    }

    #[test]
    fn the_default_model_is_priced() {
        assert!(price_of(DEFAULT_MODEL).is_some());
        assert_eq!(
            cost(
                DEFAULT_MODEL,
                &u(1_000_000, 1_000_000, 0, 0),
                Tier::Standard
            ),
            12_000_000
        );
    }

    #[test]
    fn an_unknown_model_is_flagged_not_free() {
        assert_eq!(
            cost_micros("gpt-4o", &u(1_000, 1_000, 0, 0), Tier::Standard),
            None
        );
    }

    #[test]
    fn the_seeds_worked_example_with_its_output_figure_corrected() {
        // 10,000 jobs × 3,000 input + 800 output tokens on Sonnet 4.6 at $3 / $15 per MTok:
        // $90 of input + $120 of output (the seed wrote $45) = $210; half through batches.
        let job = u(3_000, 800, 0, 0);
        let one = cost("claude-sonnet-4-6", &job, Tier::Standard);
        assert_eq!(one, 21_000);
        assert_eq!(one * 10_000, 210_000_000);
        let all = u(30_000_000, 8_000_000, 0, 0);
        assert_eq!(cost("claude-sonnet-4-6", &all, Tier::Standard), 210_000_000);
        assert_eq!(cost("claude-sonnet-4-6", &all, Tier::Batch), 105_000_000);
        assert_eq!(
            cost("claude-sonnet-4-6", &job, Tier::Batch) * 10_000,
            105_000_000
        );
    }

    #[test]
    fn batches_cost_half() {
        let usage = u(12_345, 678, 0, 0);
        let s = cost("claude-haiku-4-5", &usage, Tier::Standard);
        let b = cost("claude-haiku-4-5", &usage, Tier::Batch);
        assert!(s.abs_diff(2 * b) <= 1);
    }

    #[test]
    fn cache_writes_cost_more_and_reads_less_than_input() {
        let m = "claude-sonnet-4-6";
        let plain = cost(m, &u(10_000, 0, 0, 0), Tier::Standard);
        assert_eq!(plain, 30_000);
        assert_eq!(cost(m, &u(0, 0, 10_000, 0), Tier::Standard), plain * 5 / 4);
        assert_eq!(cost(m, &u(0, 0, 0, 10_000), Tier::Standard), plain / 10);
        let mut hour = u(0, 0, 10_000, 0);
        hour.cache_creation = Some(crate::anthropic::CacheCreation {
            ephemeral_5m_input_tokens: 4_000,
            ephemeral_1h_input_tokens: 6_000,
        });
        // 4,000 × 1.25 + 6,000 × 2 = 17,000 input-token equivalents.
        assert_eq!(cost(m, &hour, Tier::Standard), 51_000);
        // The batch discount stacks with the cache multipliers.
        assert_eq!(cost(m, &hour, Tier::Batch), 25_500);
        assert_eq!(cost(m, &u(0, 0, 0, 10_000), Tier::Batch), 1_500);
    }

    #[test]
    fn fractions_of_a_micro_dollar_round_half_up_once() {
        // Haiku 5.5 cache reads: $0.01 / MTok; 50 tokens are 0.5 µ$ and round up, 49 round down.
        assert_eq!(cost("claude-haiku-5-5", &u(0, 0, 0, 50), Tier::Standard), 1);
        assert_eq!(cost("claude-haiku-5-5", &u(0, 0, 0, 49), Tier::Standard), 0);
        // Three tokens of Sonnet 4.6 input in a batch: 4.5 µ$ → 5.
        assert_eq!(cost("claude-sonnet-4-6", &u(3, 0, 0, 0), Tier::Batch), 5);
    }

    #[test]
    fn list_prices_convert_exactly() {
        let h = price_of("claude-haiku-5-5").unwrap();
        assert_eq!((h.input, h.output), (100_000, 500_000));
        let f = price_of("claude-3-haiku-20240307").unwrap();
        assert_eq!((f.input, f.output), (250_000, 1_250_000));
    }

    proptest! {
        #[test]
        fn cost_grows_with_tokens(i in 0u32..1_000_000, o in 0u32..100_000, extra in 1u32..10_000) {
            for p in PRICES {
                let m = p.prefix;
                let base = cost(m, &u(i, o, 0, 0), Tier::Standard);
                prop_assert!(cost(m, &u(i, o + extra, 0, 0), Tier::Standard) >= base);
                prop_assert!(cost(m, &u(i + extra, o, 0, 0), Tier::Standard) >= base);
            }
        }

        #[test]
        fn a_batch_costs_half_to_the_micro_dollar(i in 0u32..1_000_000, o in 0u32..100_000, cw in 0u32..50_000, cr in 0u32..50_000) {
            for p in PRICES {
                let usage = u(i, o, cw, cr);
                let s = cost(p.prefix, &usage, Tier::Standard);
                let b = cost(p.prefix, &usage, Tier::Batch);
                prop_assert!((2 * b).abs_diff(s) <= 1);
            }
        }
    }
}
