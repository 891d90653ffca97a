//! Cost. Money is integer micro-dollars; the prices are the model catalog's
//! ([`crate::models`], each with its source and the day it took effect), and the simulator
//! keeps an independent table, so each checks the other.
//!
//! Every cost is computed in integers, so a job's cost is exact and reproducible. Cache writes
//! cost 1.25× input (5-minute) or 2× (1-hour); cache reads the model's own rate; the Message
//! Batches API half of everything (platform.claude.com/docs/en/about-claude/pricing).

use crate::money::UsdMicros;
use serde::{Deserialize, Serialize};

use crate::anthropic::Usage;
pub use crate::models::DEFAULT_MODEL;
use crate::models::{find, Model, Price};

/// How the call was billed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    Standard,
    Batch,
}

/// The price list of `model` (an id or an alias) in force at `at_ms`.
pub fn price_of(model: &str, at_ms: i64) -> Option<(&'static Model, &'static Price)> {
    let m = find(model)?;
    Some((m, m.price_at(at_ms)?))
}

/// Cost in micro-dollars at the rates in force at `at_ms` (when the job completed), exact and
/// rounded half up once at the end: input at the input price, 5-minute cache writes at 1.25×,
/// 1-hour cache writes at 2×, cache reads at the model's read price, output (thinking included:
/// the API counts it in `output_tokens`) at the output price; a long-prompt band multiplies
/// everything, and so does fast mode (`usage.speed: "fast"`, the model's fast multiplier); the
/// Message Batches API halves all of it (stacking with the cache multipliers).
/// `None` for a model the catalog does not know: flagged, never priced 0.
pub fn cost_micros(model: &str, usage: &Usage, tier: Tier, at_ms: i64) -> Option<UsdMicros> {
    let (m, p) = price_of(model, at_ms)?;
    let prompt = usage.input_tokens as u64
        + usage.cache_creation_input_tokens as u64
        + usage.cache_read_input_tokens as u64;
    let times = match m.long_prompt {
        Some(l) if prompt > l.tokens => l.times,
        _ => 1,
    } as u128;
    // Fast mode multiplies every rate (FAST; `crate::models::FastMode`).
    let fast = match (usage.is_fast(), m.fast) {
        (true, Some(f)) => f.price_permille as u128,
        _ => 1_000,
    };
    let (input, output, read) = (
        p.input as u128 * times,
        p.output as u128 * times,
        p.cache_read as u128 * times,
    );
    let write_1h = usage.cache_write_1h() as u128;
    let write_5m = usage.cache_creation_input_tokens as u128 - write_1h;
    // Everything in µ$·tok/MTok × 4 (the common denominator of 5/4 and 2), then ½ for batches.
    let numerator = usage.input_tokens as u128 * input * 4
        + write_5m * input * 5
        + write_1h * input * 8
        + usage.cache_read_input_tokens as u128 * read * 4
        + usage.output_tokens as u128 * output * 4;
    let numerator = numerator * fast;
    let denominator: u128 = 4
        * 1_000
        * 1_000_000
        * match tier {
            Tier::Standard => 1,
            Tier::Batch => 2,
        };
    Some(UsdMicros::new(
        ((numerator + denominator / 2) / denominator) as u64,
    ))
}

/// The most a request can cost, to reserve against a spending cap at admission: `input_tokens`
/// (its [`crate::tokens::worst_input_tokens`]) billed as cache writes when the request has a
/// cache breakpoint (at the 1-hour rate if any breakpoint asks for it, which is the dearer), plus
/// every one of its `max_tokens` of output — at the dearest of `models` (the requested one and
/// the fallbacks it may move to), with the long-prompt band where it applies, halved on the
/// Message Batches API. Models the catalog cannot price are skipped (they are refused at
/// submission); with none priced the answer is 0.
pub fn worst_case_micros(
    req: &crate::anthropic::MessagesRequest,
    input_tokens: u64,
    tier: Tier,
    models: &[&str],
    at_ms: i64,
) -> UsdMicros {
    let json = serde_json::to_string(req).unwrap_or_default();
    let input = input_tokens.min(u32::MAX as u64) as u32;
    let (plain, written_1h) = if !json.contains("\"cache_control\"") {
        (input, 0)
    } else if json.contains("\"ttl\":\"1h\"") {
        (0, input)
    } else {
        (0, 0)
    };
    let usage = Usage {
        input_tokens: plain,
        output_tokens: req.max_tokens,
        cache_creation_input_tokens: input - plain,
        cache_read_input_tokens: 0,
        cache_creation: Some(crate::anthropic::CacheCreation {
            ephemeral_5m_input_tokens: input - plain - written_1h,
            ephemeral_1h_input_tokens: written_1h,
        }),
        // Reserved at the fast price when fast mode is asked for.
        speed: req.speed,
    };
    models
        .iter()
        .filter_map(|m| cost_micros(m, &usage, tier, at_ms))
        .max()
        .unwrap_or(UsdMicros::ZERO)
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
            speed: None,
        }
    }

    /// 2026-12-01, the day these tests were written against the pricing page.
    const NOW: i64 = 1_796_083_200_000;

    fn cost(m: &str, usage: &Usage, tier: Tier) -> u64 {
        cost_micros(m, usage, tier, NOW).unwrap().micros()
    }

    fn live() -> impl Iterator<Item = &'static str> {
        crate::models::CATALOG
            .iter()
            .filter(|m| !m.is_retired(NOW))
            .map(|m| m.id)
    }

    #[test]
    fn fast_mode_doubles_every_rate_where_it_is_offered_and_nothing_elsewhere() {
        let fast = |u: Usage| Usage {
            speed: Some(crate::anthropic::Speed::Fast),
            ..u
        };
        // Opus 5.5: $4 / $20, cache read $0.20; fast 2× of each.
        let plain = u(1_000_000, 1_000_000, 0, 1_000_000);
        assert_eq!(cost("claude-opus-5-5", &plain, Tier::Standard), 24_200_000);
        assert_eq!(
            cost("claude-opus-5-5", &fast(plain), Tier::Standard),
            48_400_000
        );
        assert_eq!(
            cost("claude-fable-5-2", &fast(plain), Tier::Standard),
            97_600_000
        );
        // A model without fast mode: an answer claiming it is priced as standard.
        assert_eq!(
            cost(DEFAULT_MODEL, &fast(plain), Tier::Standard),
            cost(DEFAULT_MODEL, &plain, Tier::Standard)
        );
    }

    #[test]
    fn the_default_model_is_priced() {
        assert!(price_of(DEFAULT_MODEL, NOW).is_some());
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
            cost_micros("gpt-4o", &u(1_000, 1_000, 0, 0), Tier::Standard, NOW),
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
        let (_, h) = price_of("claude-haiku-5-5", NOW).unwrap();
        assert_eq!(
            (h.input, h.output, h.cache_read),
            (100_000, 500_000, 10_000)
        );
        let (_, o) = price_of("claude-opus-5-5", NOW).unwrap();
        assert_eq!(
            (o.input, o.output, o.cache_read),
            (4_000_000, 20_000_000, 200_000)
        );
        // An alias is priced as its snapshot.
        assert_eq!(
            price_of("claude-haiku-4-5", NOW),
            price_of("claude-haiku-4-5-20251001", NOW)
        );
    }

    #[test]
    fn a_job_is_priced_at_the_rates_in_force_when_it_completed() {
        let reads = u(0, 0, 0, 1_000_000);
        let before = 1_791_244_800_000; // 2026-10-06
        let after = 1_791_331_200_000; // 2026-10-07
        let at = |t| {
            cost_micros("claude-sonnet-5-5", &reads, Tier::Standard, t)
                .unwrap()
                .micros()
        };
        assert_eq!((at(before), at(after)), (200_000, 100_000));
    }

    #[test]
    fn haiku_5_5_prompts_over_100k_tokens_cost_five_times_more() {
        let m = "claude-haiku-5-5";
        assert_eq!(cost(m, &u(100_000, 1_000, 0, 0), Tier::Standard), 10_500);
        assert_eq!(cost(m, &u(100_001, 1_000, 0, 0), Tier::Standard), 52_501);
    }

    proptest! {
        #[test]
        fn cost_grows_with_tokens(i in 0u32..1_000_000, o in 0u32..100_000, extra in 1u32..10_000) {
            for m in live() {
                let base = cost(m, &u(i, o, 0, 0), Tier::Standard);
                prop_assert!(cost(m, &u(i, o + extra, 0, 0), Tier::Standard) >= base);
                prop_assert!(cost(m, &u(i + extra, o, 0, 0), Tier::Standard) >= base);
            }
        }

        #[test]
        fn a_batch_costs_half_to_the_micro_dollar(i in 0u32..1_000_000, o in 0u32..100_000, cw in 0u32..50_000, cr in 0u32..50_000) {
            for m in live() {
                let usage = u(i, o, cw, cr);
                let s = cost(m, &usage, Tier::Standard);
                let b = cost(m, &usage, Tier::Batch);
                prop_assert!((2 * b).abs_diff(s) <= 1);
            }
        }
    }
    #[test]
    fn the_worst_case_is_all_of_max_tokens_at_the_dearest_model_and_half_in_a_batch() {
        let req = crate::prompt::parse_input(
            br#"{"prompt":"Slow checkout.","model":"claude-haiku-5-5","max_tokens":300}"#,
            NOW,
        )
        .unwrap()
        .request();
        let input = 1_000;
        let haiku = worst_case_micros(&req, input, Tier::Standard, &["claude-haiku-5-5"], NOW);
        let full = cost(
            "claude-haiku-5-5",
            &u(input as u32, req.max_tokens, 0, 0),
            Tier::Standard,
        );
        assert_eq!(haiku.micros(), full);
        let chain = worst_case_micros(
            &req,
            input,
            Tier::Standard,
            &["claude-haiku-5-5", "claude-opus-5-5", "gpt-4o"],
            NOW,
        );
        assert!(
            chain > haiku,
            "a fallback to a dearer model is reserved for"
        );
        let batch = worst_case_micros(&req, input, Tier::Batch, &["claude-haiku-5-5"], NOW);
        assert!(batch.micros() * 2 >= haiku.micros() && batch.micros() * 2 <= haiku.micros() + 1);
        assert_eq!(
            worst_case_micros(&req, input, Tier::Standard, &["gpt-4o"], NOW),
            UsdMicros::ZERO
        );
    }

    #[test]
    fn a_request_with_a_cache_breakpoint_reserves_its_input_as_cache_writes() {
        let pdf = crate::pdf::request(
            "claude-sonnet-5-5",
            crate::pdf::Template::Brief,
            String::new(),
        );
        let mut plain = pdf.clone();
        plain.system = None;
        plain.messages[0].content = crate::anthropic::Content::Text("hi".into());
        let m = ["claude-sonnet-5-5"];
        let cached = worst_case_micros(&pdf, 100_000, Tier::Standard, &m, NOW);
        let uncached = worst_case_micros(&plain, 100_000, Tier::Standard, &m, NOW);
        let out = cost(
            "claude-sonnet-5-5",
            &u(0, pdf.max_tokens, 0, 0),
            Tier::Standard,
        );
        // 5-minute writes cost 1.25× input.
        assert_eq!((cached.micros() - out) * 4, (uncached.micros() - out) * 5);
    }

    proptest! {
        #[test]
        fn the_worst_case_never_falls_below_what_a_call_within_it_costs(
            input in 0u32..200_000, output_share in 0u32..=100, model_i in 0usize..3,
        ) {
            let model = ["claude-haiku-5-5", "claude-sonnet-5-5", "claude-opus-5-5"][model_i];
            let req = crate::prompt::parse_input(br#"{"prompt":"x","max_tokens":4000}"#, NOW)
                .unwrap()
                .request();
            let worst = worst_case_micros(&req, input as u64, Tier::Standard, &[model], NOW);
            let used = u(input, req.max_tokens * output_share / 100, 0, 0);
            prop_assert!(worst.micros() >= cost(model, &used, Tier::Standard));
        }
    }
}
