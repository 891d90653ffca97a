use super::*;

#[test]
fn civil_days_are_exact() {
    assert_eq!(day(1970, 1, 1), 0);
    assert_eq!(day(2026, 12, 1), 1_796_083_200_000 / 86_400_000);
}

#[test]
fn sonnet_4_5_is_gone_from_its_retirement_day_and_aliases_resolve() {
    let before = day(2026, 11, 29) * 86_400_000;
    let after = day(2026, 11, 30) * 86_400_000;
    assert!(available("claude-sonnet-4-5", before).is_some());
    assert!(available("claude-sonnet-4-5-20250929", after).is_none());
    assert_eq!(
        lookup("claude-haiku-4-5").unwrap().id,
        "claude-haiku-4-5-20251001"
    );
}

#[test]
fn sonnet_5_5_cache_reads_halved_on_the_seventh_of_october() {
    let m = lookup("claude-sonnet-5-5").unwrap();
    assert_eq!(m.rates_at(day(2026, 10, 6) * 86_400_000).cache_read, 0.20);
    assert_eq!(m.rates_at(day(2026, 10, 7) * 86_400_000).cache_read, 0.10);
}
