//! Money is integer micro-dollars everywhere (a `u64`: no float ever touches a price or a cost);
//! this module is how amounts are written for people and read back from them — one spelling for
//! the Worker's CSV and messages and the SPA's pages.

/// Micro-dollars as dollars with six decimals, no sign: `1.234567` (the CSV's and the alerts'
/// spelling).
pub fn dollars(micros: u64) -> String {
    format!("{}.{:06}", micros / 1_000_000, micros % 1_000_000)
}

/// Micro-dollars as a price tag: `$0.000303`.
pub fn usd(micros: u64) -> String {
    format!("${}", dollars(micros))
}

/// Dollars typed by a person (`1.5`, `$0.25`, `3`) as micro-dollars; empty means none. Exact:
/// no floating point, at most six decimals.
pub fn parse_dollars(text: &str) -> Result<Option<u64>, String> {
    let t = text.trim();
    let t = t.strip_prefix('$').unwrap_or(t).trim();
    if t.is_empty() {
        return Ok(None);
    }
    let bad = || format!("{text:?} is not an amount in dollars (such as 1.50)");
    let (whole, frac) = t.split_once('.').unwrap_or((t, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && frac.is_empty()) || !digits(whole) || !digits(frac) || frac.len() > 6 {
        return Err(bad());
    }
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| bad())?
    };
    let frac: u64 = format!("{frac:0<6}").parse().map_err(|_| bad())?;
    whole
        .checked_mul(1_000_000)
        .and_then(|w| w.checked_add(frac))
        .map(Some)
        .ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn amounts_are_written_with_six_decimals() {
        assert_eq!(dollars(1_234_567), "1.234567");
        assert_eq!(usd(303), "$0.000303");
        assert_eq!(usd(12_500_000), "$12.500000");
    }

    #[test]
    fn typed_dollars_become_exact_micro_dollars() {
        assert_eq!(parse_dollars("1.5"), Ok(Some(1_500_000)));
        assert_eq!(parse_dollars(" $0.000001 "), Ok(Some(1)));
        assert_eq!(parse_dollars("3"), Ok(Some(3_000_000)));
        assert_eq!(parse_dollars(".25"), Ok(Some(250_000)));
        assert_eq!(parse_dollars(""), Ok(None));
        for bad in ["-1", "1.0000001", "abc", ".", "1e3", "99999999999999999999"] {
            assert!(parse_dollars(bad).is_err(), "{bad}");
        }
    }

    proptest! {
        #[test]
        fn what_is_written_reads_back_exactly(micros in 0u64..u64::MAX / 2) {
            prop_assert_eq!(parse_dollars(&usd(micros)), Ok(Some(micros)));
        }
    }
}
