use super::*;

fn at(y: i32, m: u32, d: u32) -> i64 {
    day_ms((y, m, d))
}

#[test]
fn every_id_and_alias_is_unique_and_every_live_row_is_priced() {
    let mut seen = std::collections::HashSet::new();
    for m in CATALOG {
        for id in std::iter::once(&m.id).chain(m.aliases) {
            assert!(seen.insert(*id), "{id} twice");
        }
        if m.retires_on.is_none() {
            assert!(!m.prices.is_empty(), "{} has no price", m.id);
            assert!(!m.rate_group.is_empty(), "{} has no rate group", m.id);
            assert!(!m.source.is_empty(), "{} has no source", m.id);
        }
        assert!(m.prices.windows(2).all(|w| w[0].from < w[1].from));
        assert!(m.max_output <= m.max_output_batch);
    }
}

#[test]
fn the_default_model_is_current() {
    let m = admit(DEFAULT_MODEL, at(2026, 12, 1)).unwrap();
    assert_eq!(m.generation, (5, 5));
    assert_eq!(standing(DEFAULT_MODEL, at(2026, 12, 1)), None);
}

#[test]
fn sonnet_4_5_is_refused_from_its_retirement_day() {
    assert!(admit("claude-sonnet-4-5", at(2026, 11, 29)).is_ok());
    assert_eq!(
        admit("claude-sonnet-4-5-20250929", at(2026, 11, 30)),
        Err(Refusal::Retired { on: (2026, 11, 30) })
    );
    assert_eq!(admit("gpt-4o", 0), Err(Refusal::Unknown));
    assert!(!valid_ids(at(2026, 12, 1)).contains(&"claude-sonnet-4-5-20250929"));
    assert!(valid_ids(at(2026, 12, 1)).contains(&"claude-haiku-4-5-20251001"));
}

#[test]
fn a_model_near_or_past_retirement_raises_a_warning() {
    let w = standing("claude-sonnet-4-5", at(2026, 11, 1)).unwrap();
    assert!(w.contains("retires on 2026-11-30 (29 days)"), "{w}");
    let w = standing("claude-sonnet-4-5", at(2026, 12, 1)).unwrap();
    assert!(w.contains("retired on 2026-11-30"), "{w}");
    assert!(standing("claude-haiku-5-5", at(2026, 12, 1)).is_none());
    assert!(standing("claude-nonsense", 0)
        .unwrap()
        .contains("not in the catalog"));
}

#[test]
fn a_retired_fallback_is_left_out_of_the_chain_and_said_so() {
    let chain = vec![
        "claude-sonnet-5-5".to_owned(),
        "claude-sonnet-4-5".to_owned(),
        "claude-haiku-5-5".to_owned(),
    ];
    let (kept, problems) = checked_chain(&chain, at(2026, 12, 1));
    assert_eq!(kept, ["claude-sonnet-5-5", "claude-haiku-5-5"]);
    assert_eq!(problems.len(), 1);
    assert!(
        problems[0].contains("retired on 2026-11-30"),
        "{problems:?}"
    );
    assert_eq!(
        standings(
            ["claude-sonnet-4-5", "claude-sonnet-4-5", DEFAULT_MODEL],
            at(2026, 12, 1)
        )
        .len(),
        1
    );
}

#[test]
fn prices_change_on_the_day_they_take_effect() {
    let s = find("claude-sonnet-5-5").unwrap();
    assert_eq!(s.price_at(at(2026, 10, 6)).unwrap().cache_read, 200_000);
    assert_eq!(s.price_at(at(2026, 10, 7)).unwrap().cache_read, 100_000);
    assert_eq!(s.price_at(at(2026, 12, 1)).unwrap().cache_read, 100_000);
    // Half of Sonnet 5's rate, as the migration guide says.
    let five = find("claude-sonnet-5")
        .unwrap()
        .price_at(at(2026, 12, 1))
        .unwrap();
    assert_eq!(five.cache_read, 2 * 100_000);
}

#[test]
fn the_5_x_models_refuse_what_their_migration_guides_say() {
    let s55 = find("claude-sonnet-5-5").unwrap();
    assert_eq!(s55.sampling, Sampling::DefaultOnly);
    assert!(!s55.thinking.budget && !s55.thinking.disabled && s55.thinking.on_by_default);
    assert!(!s55.prefill && !s55.forced_tool_choice);
    let h55 = find("claude-haiku-5-5").unwrap();
    assert!(h55.forced_tool_choice && h55.thinking.disabled_needs_high_or_below);
    assert_eq!(h55.default_effort, Some(Effort::Medium));
    let h45 = find("claude-haiku-4-5").unwrap();
    assert!(h45.efforts.is_empty() && !h45.thinking.adaptive && h45.prefill);
}
