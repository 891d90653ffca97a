//! The simulator's own price table, written independently of `pipeline`'s so that each can check
//! the other. Dollars per million tokens, as published on anthropic.com/pricing; cache writes
//! (5-minute TTL) cost 1.25× input, cache reads 0.1× input, and batches half of everything.

use pipeline::anthropic::Usage;

/// (model prefix, input $/MTok, output $/MTok). The first matching prefix wins.
const PRICES: &[(&str, f64, f64)] = &[
    ("claude-opus-4-5", 5.0, 25.0),
    ("claude-opus-4", 15.0, 75.0),
    ("claude-3-opus", 15.0, 75.0),
    ("claude-sonnet-4", 3.0, 15.0),
    ("claude-3-7-sonnet", 3.0, 15.0),
    ("claude-3-5-sonnet", 3.0, 15.0),
    ("claude-haiku-4-5", 1.0, 5.0),
    ("claude-3-5-haiku", 0.8, 4.0),
    ("claude-3-haiku", 0.25, 1.25),
];

/// Models the simulator knows (prefixes above); anything else is a 404 like the real API.
pub fn known_model(model: &str) -> bool {
    PRICES.iter().any(|(p, _, _)| model.starts_with(p))
}

/// Cost in micro-dollars of one answer (rounded to the nearest micro-dollar).
pub fn cost_micros(model: &str, u: &Usage, batch: bool) -> u64 {
    let Some(&(_, input, output)) = PRICES.iter().find(|(p, _, _)| model.starts_with(p)) else {
        return 0;
    };
    // $/MTok is exactly µ$/token.
    let micros = u.input_tokens as f64 * input
        + u.cache_creation_input_tokens as f64 * input * 1.25
        + u.cache_read_input_tokens as f64 * input * 0.1
        + u.output_tokens as f64 * output;
    let micros = if batch { micros / 2.0 } else { micros };
    micros.round() as u64
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
    fn opus_4_5_is_cheaper_than_earlier_opus() {
        let u = usage(1000, 0, 0, 0);
        assert!(
            cost_micros("claude-opus-4-5", &u, false) < cost_micros("claude-opus-4-1", &u, false)
        );
    }
}
