//! A float as decimal text with a fixed number of digits after the point, for what people read
//! (seconds, percents, rates, chart coordinates), written from integers: `format!("{:.1}")`
//! links core's float formatting (its shortest and exact digit generators, ≈ 12 KiB of code),
//! which the SPA carries only for these labels.

/// `x` with `digits` (at most 6) digits after the point, rounded half away from zero on the
/// scaled value. It reads as `format!("{x:.digits$}")` does except on an exact tie of the
/// last digit (0.125 → "0.13" where Rust's formatting writes "0.12") and for a negative value
/// that rounds to zero ("0.0", not "-0.0"). Not finite: "NaN", "inf", "-inf". Values whose
/// scaled magnitude passes 2^53 lose their last digits (no label here comes near).
pub fn fixed(x: f64, digits: u32) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    let scale = 10u64.pow(digits.min(6));
    // `as` saturates: a value past u64 (never a label's) reads as the largest.
    let n = (x.abs() * scale as f64).round() as u64;
    let sign = if x < 0.0 && n != 0 { "-" } else { "" };
    let int = n / scale;
    if scale == 1 {
        return format!("{sign}{int}");
    }
    let width = digits.min(6) as usize;
    format!("{sign}{int}.{:0width$}", n % scale)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn reads_as_rust_formatting_does() {
        assert_eq!(fixed(1.25, 1), "1.3");
        assert_eq!(fixed(12.34, 1), "12.3");
        assert_eq!(fixed(0.0, 1), "0.0");
        assert_eq!(fixed(-0.04, 1), "0.0");
        assert_eq!(fixed(-2.06, 1), "-2.1");
        assert_eq!(fixed(99.96, 1), "100.0");
        assert_eq!(fixed(7.5, 0), "8");
        assert_eq!(fixed(1234.5678, 3), "1234.568");
        assert_eq!(fixed(0.05, 2), "0.05");
        assert_eq!(fixed(f64::NAN, 1), "NaN");
        assert_eq!(fixed(f64::NEG_INFINITY, 1), "-inf");
    }

    proptest! {
        /// Away from a tie of the last digit, the same text as `format!`.
        #[test]
        fn the_same_text_as_format_away_from_a_tie(x in -1.0e9f64..1.0e9, digits in 0u32..4) {
            let scaled = x.abs() * 10f64.powi(digits as i32);
            prop_assume!((scaled - scaled.floor() - 0.5).abs() > 1e-6);
            let rust = format!("{x:.*}", digits as usize);
            let rust = rust.strip_prefix('-').filter(|r| r.trim_matches(['0', '.']).is_empty())
                .map_or(rust.clone(), str::to_string);
            prop_assert_eq!(fixed(x, digits), rust);
        }
    }
}
