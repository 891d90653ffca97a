//! Small display helpers shared by the pages.

use pipeline::decimal::fixed;

/// A duration for people: milliseconds under a second (`42 ms` — sync jobs are that fast), then
/// seconds with one decimal (`1.5 s`).
pub fn seconds(ms: i64) -> String {
    if (0..1_000).contains(&ms) {
        format!("{ms} ms")
    } else {
        format!("{} s", fixed(ms as f64 / 1000.0, 1))
    }
}

/// A byte count for people: `512 B`, `3.4 KB`, `20.0 MB` (powers of 1,024).
pub fn bytes(n: u64) -> String {
    match n {
        0..1_024 => format!("{n} B"),
        1_024..1_048_576 => format!("{} KB", fixed(n as f64 / 1_024.0, 1)),
        _ => format!("{} MB", fixed(n as f64 / 1_048_576.0, 1)),
    }
}

/// A share as a percentage with one decimal: `0.125` → `12.5 %`.
pub fn percent(share: f64) -> String {
    format!("{} %", fixed(share * 100.0, 1))
}

/// The UTC time of day of an epoch-ms instant: `14:05`.
pub fn clock(ms: i64) -> String {
    let m = ms.div_euclid(60_000).rem_euclid(24 * 60);
    format!("{:02}:{:02}", m / 60, m % 60)
}

/// An epoch-ms instant in UTC: `2026-11-29 14:05:09`.
pub fn when(ms: i64) -> String {
    let s = ms.div_euclid(1000).rem_euclid(86_400);
    format!(
        "{} {:02}:{:02}:{:02}",
        pipeline::clock::day_of(ms),
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// A count with its noun, singular for one: `1 call`, `2 calls`, `0 calls`.
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The first eight characters of an id, enough to tell jobs apart on a page.
pub fn short_id(id: &str) -> String {
    id.chars().take(8).collect()
}

/// Now, in milliseconds since the epoch: the browser's clock, or the build's when a shell is
/// rendered ahead of time.
pub fn now_ms() -> i64 {
    #[cfg(not(feature = "ssr"))]
    return js_sys::Date::now() as i64;
    #[cfg(feature = "ssr")]
    return std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_shares_read_naturally() {
        assert_eq!(percent(0.125), "12.5 %");
        assert_eq!(clock(3_600_000 + 5 * 60_000 + 9_000), "01:05");
        assert_eq!(when(86_400_000 + 3_723_000), "1970-01-02 01:02:03");
    }

    #[test]
    fn durations_and_sizes_read_naturally() {
        assert_eq!(seconds(42), "42 ms");
        assert_eq!(seconds(999), "999 ms");
        assert_eq!(seconds(1_000), "1.0 s");
        assert_eq!(seconds(1_520), "1.5 s");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(3_500), "3.4 KB");
        assert_eq!(bytes(20 * 1_048_576), "20.0 MB");
    }

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(count(1, "call", "calls"), "1 call");
        assert_eq!(count(0, "call", "calls"), "0 calls");
        assert_eq!(
            count(2, "Message Batch", "Message Batches"),
            "2 Message Batches"
        );
    }

    #[test]
    fn ids_read_short() {
        assert_eq!(short_id("0123456789abcdef"), "01234567");
        assert_eq!(short_id("abc"), "abc");
    }
}
