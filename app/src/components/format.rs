//! Small display helpers shared by the pages.

/// Seconds with one decimal: `1.5 s`.
pub fn seconds(ms: i64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

/// Micro-dollars as dollars: `$0.000303`.
pub fn dollars(micros: u64) -> String {
    format!("${}.{:06}", micros / 1_000_000, micros % 1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_and_time_read_naturally() {
        assert_eq!(dollars(303), "$0.000303");
        assert_eq!(dollars(12_500_000), "$12.500000");
        assert_eq!(seconds(952), "1.0 s");
    }
}
