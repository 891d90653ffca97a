//! The simulator's billing, from its own model table ([`crate::models`], written independently
//! of `pipeline`'s catalog so that each checks the other). Cache writes cost 1.25× input
//! (5-minute TTL) or 2× (1-hour TTL), cache reads the model's own rate, batches half of
//! everything, and Haiku 5.5 five times every rate for prompts over 100,000 tokens
//! (platform.claude.com/docs/en/about-claude/pricing and the model pages).

use pipeline::anthropic::Usage;

use crate::models;

/// Cost in micro-dollars of one answer at the rates in force at `now_ms`, rounded half up to
/// the micro-dollar. Computed in pico-dollars per token (a $/MTok price is 10^6 pico-dollars per
/// token), so nothing is lost to floating point: 5-minute cache writes 1.25×, 1-hour writes 2×,
/// reads the model's rate, batches half of the sum. 0 for a model the table does not know.
pub fn cost_micros(model: &str, u: &Usage, batch: bool, now_ms: i64) -> u64 {
    let Some(m) = models::lookup(model) else {
        return 0;
    };
    let rates = m.rates_at(now_ms);
    let prompt = u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens;
    let band = match m.long_band {
        Some((over, times)) if prompt > over => times,
        _ => 1.0,
    };
    let pico = |dollars_per_mtok: f64| (dollars_per_mtok * band * 1e6).round() as u128;
    let (input, output, read) = (
        pico(rates.input),
        pico(rates.output),
        pico(rates.cache_read),
    );
    let hour = u
        .cache_creation
        .map(|c| c.ephemeral_1h_input_tokens)
        .unwrap_or(0)
        .min(u.cache_creation_input_tokens) as u128;
    let five = u.cache_creation_input_tokens as u128 - hour;
    // Quarter pico-dollars, so the 1.25× of 5-minute writes stays whole.
    let quarters = 4 * u.input_tokens as u128 * input
        + 5 * five * input
        + 8 * hour * input
        + 4 * u.cache_read_input_tokens as u128 * read
        + 4 * u.output_tokens as u128 * output;
    // Fast mode: 2× every rate, on the models that offer it.
    let quarters = quarters * if m.fast && u.is_fast() { 2 } else { 1 };
    let per_micro: u128 = 4 * 1_000_000 * if batch { 2 } else { 1 };
    ((quarters + per_micro / 2) / per_micro) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-12-01.
    const NOW: i64 = 1_796_083_200_000;

    fn usage(i: u32, o: u32, cw: u32, cr: u32) -> Usage {
        Usage {
            input_tokens: i,
            output_tokens: o,
            cache_creation_input_tokens: cw,
            cache_read_input_tokens: cr,
            cache_creation: None,
            speed: None,
        }
    }

    #[test]
    fn a_million_sonnet_tokens_cost_the_list_price() {
        assert_eq!(
            cost_micros("claude-sonnet-4-6", &usage(1_000_000, 0, 0, 0), false, NOW),
            3_000_000
        );
        assert_eq!(
            cost_micros("claude-sonnet-4-6", &usage(0, 1_000_000, 0, 0), false, NOW),
            15_000_000
        );
    }

    #[test]
    fn batches_cost_half_and_cache_reads_a_tenth() {
        let u = usage(1000, 1000, 0, 0);
        assert_eq!(
            cost_micros("claude-haiku-4-5", &u, true, NOW) * 2,
            cost_micros("claude-haiku-4-5", &u, false, NOW)
        );
        assert_eq!(
            cost_micros("claude-haiku-4-5", &usage(0, 0, 0, 10_000), false, NOW),
            1_000
        );
        assert_eq!(
            cost_micros("claude-haiku-4-5", &usage(0, 0, 10_000, 0), false, NOW),
            12_500
        );
    }

    #[test]
    fn every_current_model_is_known_and_priced() {
        for m in [
            "claude-haiku-5-5",
            "claude-sonnet-5-5",
            "claude-fable-5-2",
            "claude-mythos-5-2",
            "claude-fable-5-1",
            "claude-opus-5-5",
            "claude-mythos-5-1",
            "claude-sonnet-5",
            "claude-fable-5",
            "claude-mythos-5",
            "claude-opus-5",
            "claude-opus-4-8",
            "claude-opus-4-7",
            "claude-opus-4-6",
            "claude-sonnet-4-6",
            "claude-haiku-4-5",
            "claude-haiku-4-5-20251001",
            "claude-opus-4-5",
            "claude-opus-4-5-20251101",
        ] {
            assert!(crate::models::available(m, NOW).is_some(), "{m}");
            assert!(
                cost_micros(m, &usage(1000, 1000, 0, 0), false, NOW) > 0,
                "{m}"
            );
        }
        assert!(crate::models::lookup("gpt-4o").is_none());
    }

    #[test]
    fn each_model_has_its_own_rates() {
        let u = usage(1_000_000, 0, 0, 0);
        assert_eq!(cost_micros("claude-opus-5-5", &u, false, NOW), 4_000_000);
        assert_eq!(cost_micros("claude-opus-5", &u, false, NOW), 5_000_000);
        assert_eq!(cost_micros("claude-opus-4-1", &u, false, NOW), 15_000_000);
        assert_eq!(
            cost_micros("claude-opus-4-20250514", &u, false, NOW),
            15_000_000
        );
        assert_eq!(cost_micros("claude-opus-4-6", &u, false, NOW), 5_000_000);
        // Sonnet 5.5 cache reads: half Sonnet 5's.
        let reads = usage(0, 0, 0, 1_000_000);
        assert_eq!(
            cost_micros("claude-sonnet-5-5", &reads, false, NOW),
            100_000
        );
        assert_eq!(cost_micros("claude-sonnet-5", &reads, false, NOW), 200_000);
    }

    #[test]
    fn long_haiku_5_5_prompts_cost_five_times_more() {
        assert_eq!(
            cost_micros("claude-haiku-5-5", &usage(100_000, 0, 0, 0), false, NOW),
            10_000
        );
        assert_eq!(
            cost_micros("claude-haiku-5-5", &usage(100_001, 0, 0, 0), false, NOW),
            50_001
        );
    }

    #[test]
    fn one_hour_cache_writes_cost_twice_the_input_and_stack_with_the_batch_discount() {
        let mut u = usage(0, 0, 1_000, 0);
        u.cache_creation = Some(pipeline::anthropic::CacheCreation {
            ephemeral_5m_input_tokens: 0,
            ephemeral_1h_input_tokens: 1_000,
        });
        assert_eq!(cost_micros("claude-sonnet-4-6", &u, false, NOW), 6_000);
        assert_eq!(cost_micros("claude-sonnet-4-6", &u, true, NOW), 3_000);
        assert_eq!(
            cost_micros("claude-sonnet-4-6", &usage(0, 0, 1_000, 0), false, NOW),
            3_750
        );
    }

    #[test]
    fn opus_4_5_is_cheaper_than_earlier_opus() {
        let u = usage(1000, 0, 0, 0);
        assert!(
            cost_micros("claude-opus-4-5", &u, false, NOW)
                < cost_micros("claude-opus-4-1", &u, false, NOW)
        );
    }
}
