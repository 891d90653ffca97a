//! Money is integer micro-dollars everywhere ([`UsdMicros`]: no float ever touches a price or a
//! cost); this module is how amounts are written for people and read back from them — one
//! spelling for the Worker's CSV and messages and the SPA's pages.

use serde::{Deserialize, Serialize};

/// An amount of US dollars in millionths: how every cost, cap and saving is kept — exactly, as
/// an integer. On the wire it is the bare number (`"cost_micros": 303`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(transparent)]
pub struct UsdMicros(u64);

impl UsdMicros {
    pub const ZERO: UsdMicros = UsdMicros(0);

    /// `micros` millionths of a dollar.
    pub const fn new(micros: u64) -> UsdMicros {
        UsdMicros(micros)
    }

    /// The amount in millionths of a dollar (to store, to compare with a count, to bind).
    pub const fn micros(self) -> u64 {
        self.0
    }

    /// Dollars with six decimals, no sign: `1.234567` (the CSV's and the alerts' spelling).
    pub fn dollars(self) -> String {
        format!("{}.{:06}", self.0 / 1_000_000, self.0 % 1_000_000)
    }

    /// A price tag: `$0.000303`.
    pub fn usd(self) -> String {
        format!("${}", self.dollars())
    }

    /// As a chart's value.
    pub fn as_f64(self) -> f64 {
        self.0 as f64
    }

    pub fn saturating_sub(self, other: UsdMicros) -> UsdMicros {
        UsdMicros(self.0.saturating_sub(other.0))
    }
}

impl std::fmt::Display for UsdMicros {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.usd())
    }
}

impl std::ops::Add for UsdMicros {
    type Output = UsdMicros;
    fn add(self, other: UsdMicros) -> UsdMicros {
        UsdMicros(self.0 + other.0)
    }
}

impl std::ops::AddAssign for UsdMicros {
    fn add_assign(&mut self, other: UsdMicros) {
        self.0 += other.0;
    }
}

impl std::iter::Sum for UsdMicros {
    fn sum<I: Iterator<Item = UsdMicros>>(iter: I) -> UsdMicros {
        UsdMicros(iter.map(|m| m.0).sum())
    }
}

/// Tests and literals compare an amount with a plain number of micro-dollars.
impl PartialEq<u64> for UsdMicros {
    fn eq(&self, other: &u64) -> bool {
        self.0 == *other
    }
}

/// Dollars typed by a person (`1.5`, `$0.25`, `3`) as micro-dollars; empty means none. Exact:
/// no floating point, at most six decimals.
pub fn parse_dollars(text: &str) -> Result<Option<UsdMicros>, String> {
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
        .map(|m| Some(UsdMicros(m)))
        .ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn amounts_are_written_with_six_decimals() {
        assert_eq!(UsdMicros(1_234_567).dollars(), "1.234567");
        assert_eq!(UsdMicros(303).usd(), "$0.000303");
        assert_eq!(UsdMicros(12_500_000).to_string(), "$12.500000");
    }

    #[test]
    fn typed_dollars_become_exact_micro_dollars() {
        assert_eq!(parse_dollars("1.5"), Ok(Some(UsdMicros(1_500_000))));
        assert_eq!(parse_dollars(" $0.000001 "), Ok(Some(UsdMicros(1))));
        assert_eq!(parse_dollars("3"), Ok(Some(UsdMicros(3_000_000))));
        assert_eq!(parse_dollars(".25"), Ok(Some(UsdMicros(250_000))));
        assert_eq!(parse_dollars(""), Ok(None));
        for bad in ["-1", "1.0000001", "abc", ".", "1e3", "99999999999999999999"] {
            assert!(parse_dollars(bad).is_err(), "{bad}");
        }
    }

    proptest! {
        #[test]
        fn what_is_written_reads_back_exactly(micros in 0u64..u64::MAX / 2) {
            prop_assert_eq!(parse_dollars(&UsdMicros(micros).usd()), Ok(Some(UsdMicros(micros))));
        }
    }
}
