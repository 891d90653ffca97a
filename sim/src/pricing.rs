//! The simulator's own price table, written independently of `pipeline`'s so that each can check
//! the other. Dollars per million tokens. Cache writes cost 1.25× input (5-minute TTL) or 2×
//! (1-hour TTL), cache reads a model-specific fraction of input (0.1× for most), and batches
//! half of everything.
//!
//! Sources: the official pricing page for the 3.x and 4.x families; the 5.x rows (model ids from
//! the official Python SDK 2.14) come from secondary sources that quote the official page and
//! should be re-checked against it before they are relied on for real money.

use pipeline::anthropic::Usage;

/// A row of the table: the first row whose prefix starts the model id wins, so more specific
/// prefixes come first.
struct Price {
    prefix: &'static str,
    input: f64,
    output: f64,
    cache_read: f64,
}

const fn p(prefix: &'static str, input: f64, output: f64, cache_read: f64) -> Price {
    Price {
        prefix,
        input,
        output,
        cache_read,
    }
}

const PRICES: &[Price] = &[
    p("claude-fable-5-", 10.0, 50.0, 0.025),
    p("claude-mythos-5-", 10.0, 50.0, 0.025),
    p("claude-fable-5", 10.0, 50.0, 0.1),
    p("claude-mythos", 10.0, 50.0, 0.1),
    p("claude-opus-5-5", 4.0, 20.0, 0.05),
    p("claude-opus-5", 5.0, 25.0, 0.1),
    p("claude-opus-4-0", 15.0, 75.0, 0.1),
    p("claude-opus-4-1", 15.0, 75.0, 0.1),
    p("claude-opus-4-2025", 15.0, 75.0, 0.1),
    p("claude-opus-4-", 5.0, 25.0, 0.1),
    p("claude-3-opus", 15.0, 75.0, 0.1),
    p("claude-sonnet-5", 2.0, 10.0, 0.1),
    p("claude-sonnet-4", 3.0, 15.0, 0.1),
    p("claude-3-7-sonnet", 3.0, 15.0, 0.1),
    p("claude-3-5-sonnet", 3.0, 15.0, 0.1),
    p("claude-haiku-5-5", 0.1, 0.5, 0.1),
    p("claude-haiku-4-5", 1.0, 5.0, 0.1),
    p("claude-3-5-haiku", 0.8, 4.0, 0.1),
    p("claude-3-haiku", 0.25, 1.25, 0.1),
];

/// Haiku 5.5 costs five times more for prompts over 100k tokens.
const HAIKU_5_5_LONG_PROMPT: u32 = 100_000;

fn price(model: &str) -> Option<&'static Price> {
    PRICES.iter().find(|p| model.starts_with(p.prefix))
}

/// Models the simulator knows; anything else is a 404 like the real API.
pub fn known_model(model: &str) -> bool {
    price(model).is_some()
}

/// Cost in micro-dollars of one answer, rounded half up to the micro-dollar. Computed in
/// pico-dollars per token (a $/MTok price is 10^6 pico-dollars per token), so nothing is lost
/// to floating point: 5-minute cache writes 1.25×, 1-hour writes 2×, reads the model's factor,
/// batches half of the sum.
pub fn cost_micros(model: &str, u: &Usage, batch: bool) -> u64 {
    let Some(p) = price(model) else {
        return 0;
    };
    let prompt = u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens;
    let tier: u128 = if p.prefix == "claude-haiku-5-5" && prompt > HAIKU_5_5_LONG_PROMPT {
        5
    } else {
        1
    };
    let pico = |dollars_per_mtok: f64| (dollars_per_mtok * 1e6).round() as u128 * tier;
    let (input, output) = (pico(p.input), pico(p.output));
    let read = pico(p.input * p.cache_read);
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
    let per_micro: u128 = 4 * 1_000_000 * if batch { 2 } else { 1 };
    ((quarters + per_micro / 2) / per_micro) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(i: u32, o: u32, cw: u32, cr: u32) -> Usage {
        Usage {
            input_tokens: i,
            output_tokens: o,
            cache_creation_input_tokens: cw,
            cache_read_input_tokens: cr,
            cache_creation: None,
        }
    }

    #[test]
    fn a_million_sonnet_tokens_cost_the_list_price() {
        assert_eq!(
            cost_micros("claude-sonnet-4-5", &usage(1_000_000, 0, 0, 0), false),
            3_000_000
        );
        assert_eq!(
            cost_micros("claude-sonnet-4-5", &usage(0, 1_000_000, 0, 0), false),
            15_000_000
        );
    }

    #[test]
    fn batches_cost_half_and_cache_reads_a_tenth() {
        let u = usage(1000, 1000, 0, 0);
        assert_eq!(
            cost_micros("claude-haiku-4-5", &u, true) * 2,
            cost_micros("claude-haiku-4-5", &u, false)
        );
        assert_eq!(
            cost_micros("claude-haiku-4-5", &usage(0, 0, 0, 10_000), false),
            1_000
        );
        assert_eq!(
            cost_micros("claude-haiku-4-5", &usage(0, 0, 10_000, 0), false),
            12_500
        );
    }

    #[test]
    fn every_model_of_the_current_sdk_is_known_and_priced() {
        for m in [
            "claude-fable-5-2",
            "claude-mythos-5-2",
            "claude-haiku-5-5",
            "claude-sonnet-5-5",
            "claude-fable-5-1",
            "claude-opus-5-5",
            "claude-mythos-5-1",
            "claude-sonnet-5",
            "claude-fable-5",
            "claude-mythos-5",
            "claude-opus-5",
            "claude-opus-4-8",
            "claude-opus-4-7",
            "claude-mythos-preview",
            "claude-opus-4-6",
            "claude-sonnet-4-6",
            "claude-haiku-4-5",
            "claude-haiku-4-5-20251001",
            "claude-opus-4-5",
            "claude-opus-4-5-20251101",
            "claude-sonnet-4-5",
            "claude-sonnet-4-5-20250929",
        ] {
            assert!(known_model(m), "{m}");
            assert!(cost_micros(m, &usage(1000, 1000, 0, 0), false) > 0, "{m}");
        }
        assert!(!known_model("gpt-4o"));
    }

    #[test]
    fn specific_prefixes_win_over_their_families() {
        let u = usage(1_000_000, 0, 0, 0);
        assert_eq!(cost_micros("claude-opus-5-5", &u, false), 4_000_000);
        assert_eq!(cost_micros("claude-opus-5", &u, false), 5_000_000);
        assert_eq!(cost_micros("claude-opus-4-1", &u, false), 15_000_000);
        assert_eq!(cost_micros("claude-opus-4-20250514", &u, false), 15_000_000);
        assert_eq!(cost_micros("claude-opus-4-6", &u, false), 5_000_000);
    }

    #[test]
    fn long_haiku_5_5_prompts_cost_five_times_more() {
        assert_eq!(
            cost_micros("claude-haiku-5-5", &usage(100_000, 0, 0, 0), false),
            10_000
        );
        assert_eq!(
            cost_micros("claude-haiku-5-5", &usage(100_001, 0, 0, 0), false),
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
        assert_eq!(cost_micros("claude-sonnet-4-6", &u, false), 6_000);
        assert_eq!(cost_micros("claude-sonnet-4-6", &u, true), 3_000);
        assert_eq!(
            cost_micros("claude-sonnet-4-6", &usage(0, 0, 1_000, 0), false),
            3_750
        );
    }

    #[test]
    fn opus_4_5_is_cheaper_than_earlier_opus() {
        let u = usage(1000, 0, 0, 0);
        assert!(
            cost_micros("claude-opus-4-5", &u, false) < cost_micros("claude-opus-4-1", &u, false)
        );
    }
}
