//! Time as data: RFC 3339 timestamps (the simulator writes `anthropic-ratelimit-*-reset`
//! headers and batch times with them, the Worker reads them back) and UTC calendar days (usage
//! reports, daily budgets, model retirement dates). The calendar is `chrono`'s; nothing here
//! reads a clock — every instant is an argument, in epoch milliseconds.

use chrono::{DateTime, Datelike, NaiveDate, Timelike};

/// One UTC day in milliseconds.
pub const DAY_MS: i64 = 86_400_000;

/// Formats epoch milliseconds as `YYYY-MM-DDTHH:MM:SSZ` (UTC, second precision).
pub fn format_rfc3339(epoch_ms: i64) -> String {
    match DateTime::from_timestamp_millis(epoch_ms) {
        Some(t) => format!(
            "{}T{:02}:{:02}:{:02}Z",
            ymd(t.date_naive()),
            t.hour(),
            t.minute(),
            t.second()
        ),
        // Beyond chrono's ±262,000 years: no header or batch ever carries such a time.
        None => "1970-01-01T00:00:00Z".to_owned(),
    }
}

/// Parses an RFC 3339 timestamp (`YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)`) into epoch milliseconds.
pub fn parse_rfc3339(s: &str) -> Option<i64> {
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.timestamp_millis())
}

/// `YYYY-MM-DD` of an epoch-ms instant (UTC).
pub fn day_of(ms: i64) -> String {
    DateTime::from_timestamp_millis(ms.div_euclid(DAY_MS) * DAY_MS)
        .map(|t| ymd(t.date_naive()))
        .unwrap_or_default()
}

/// Epoch ms of the start of a `YYYY-MM-DD` day (UTC); `None` for anything else, including days
/// the calendar does not have (`2026-02-30`).
pub fn parse_day(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let digits = |r: std::ops::Range<usize>| {
        let part = &s[r];
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse::<u32>().ok())
            .flatten()
    };
    date_ms(digits(0..4)? as i32, digits(5..7)?, digits(8..10)?)
}

/// Epoch ms of the start of the UTC day `y-m-d`, if the calendar has it.
pub fn date_ms(y: i32, m: u32, d: u32) -> Option<i64> {
    NaiveDate::from_ymd_opt(y, m, d)
        .and_then(|date| date.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc().timestamp_millis())
}

fn ymd(d: NaiveDate) -> String {
    format!("{:04}-{:02}-{:02}", d.year(), d.month(), d.day())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_instants_format_as_expected() {
        assert_eq!(format_rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_rfc3339(1_795_000_000_000), "2026-11-18T11:06:40Z");
        assert_eq!(format_rfc3339(951_782_400_000), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn offsets_and_fractions_are_understood() {
        assert_eq!(parse_rfc3339("1970-01-01T01:00:00+01:00"), Some(0));
        assert_eq!(parse_rfc3339("1970-01-01T00:00:01.5Z"), Some(1500));
        assert_eq!(parse_rfc3339("not a date at all!!"), None);
        assert_eq!(parse_rfc3339("2026-13-01T00:00:00Z"), None);
    }

    #[test]
    fn days_are_utc_calendar_days() {
        assert_eq!(day_of(0), "1970-01-01");
        assert_eq!(day_of(DAY_MS - 1), "1970-01-01");
        assert_eq!(day_of(-1), "1969-12-31");
        assert_eq!(parse_day("2026-11-29"), Some(1_795_910_400_000));
        assert_eq!(day_of(parse_day("2024-02-29").unwrap()), "2024-02-29");
        assert_eq!(date_ms(2026, 11, 29), parse_day("2026-11-29"));
    }

    #[test]
    fn days_the_calendar_does_not_have_are_refused() {
        for bad in [
            "2026-02-30",
            "2025-02-29",
            "2026-13-01",
            "2026-00-10",
            "2026-1-01",
            "26-11-29",
            "2026/11/29",
            "+026-11-29",
            "",
        ] {
            assert_eq!(parse_day(bad), None, "{bad}");
        }
    }

    proptest! {
        #[test]
        fn formatting_then_parsing_is_the_identity_at_second_precision(s in 0i64..8_000_000_000) {
            prop_assert_eq!(parse_rfc3339(&format_rfc3339(s * 1000)), Some(s * 1000));
        }

        #[test]
        fn every_day_round_trips_through_its_name(d in -100_000i64..100_000) {
            prop_assert_eq!(parse_day(&day_of(d * DAY_MS)), Some(d * DAY_MS));
            prop_assert_eq!(day_of(d * DAY_MS + 12_345), day_of(d * DAY_MS));
        }
    }
}
