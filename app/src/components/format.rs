//! Small display helpers shared by the pages.

/// Seconds with one decimal: `1.5 s`.
pub fn seconds(ms: i64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

/// A byte count for people: `512 B`, `3.4 KB`, `20.0 MB` (powers of 1,024).
pub fn bytes(n: u64) -> String {
    match n {
        0..1_024 => format!("{n} B"),
        1_024..1_048_576 => format!("{:.1} KB", n as f64 / 1_024.0),
        _ => format!("{:.1} MB", n as f64 / 1_048_576.0),
    }
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
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(3_500), "3.4 KB");
        assert_eq!(bytes(20 * 1_048_576), "20.0 MB");
    }
}
