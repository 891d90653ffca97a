//! The simulator's model table against `pipeline`'s catalog: two tables typed in separately
//! from the same official pages. Every difference is listed (and fails the test), so a price or
//! a rule corrected in one table and not the other cannot go unnoticed.

use pipeline::anthropic::Effort;
use pipeline::models::{Sampling, CATALOG};
use sim::models::{self as simm, Sampling as SimSampling};

/// Epoch ms of a civil day.
fn at(y: i64, m: i64, d: i64) -> i64 {
    simm::day(y, m, d) * 86_400_000
}

#[test]
fn the_simulators_table_and_the_pipelines_catalog_agree_on_every_model() {
    let diffs = std::cell::RefCell::new(Vec::new());
    let diff = |id: &str, what: &str, ours: String, sims: String| {
        if ours != sims {
            diffs
                .borrow_mut()
                .push(format!("{id}: {what}: pipeline {ours}, sim {sims}"));
        }
    };
    // Days on which prices are compared: each model's launch and every price change since.
    let days = [
        at(2025, 10, 1),
        at(2026, 6, 30),
        at(2026, 9, 28),
        at(2026, 10, 6),
        at(2026, 10, 7),
        at(2026, 12, 1),
    ];
    for m in CATALOG {
        for id in std::iter::once(&m.id).chain(m.aliases) {
            let Some(s) = simm::lookup(id) else {
                diffs.borrow_mut().push(format!(
                    "{id}: in the pipeline's catalog, not in the simulator's"
                ));
                continue;
            };
            for now in days {
                diff(
                    id,
                    &format!("retired at {now}"),
                    m.is_retired(now).to_string(),
                    s.retired(now).to_string(),
                );
            }
            diff(id, "answers as", m.id.into(), s.id.into());
            diff(
                id,
                "context",
                m.context_window.to_string(),
                s.context.to_string(),
            );
            if m.is_retired(at(2026, 12, 1)) {
                // Gone: only the retirement matters.
                continue;
            }
            diff(
                id,
                "max output",
                m.max_output.to_string(),
                s.max_output.to_string(),
            );
            diff(
                id,
                "cache minimum",
                m.min_cacheable.to_string(),
                s.min_cache.to_string(),
            );
            diff(
                id,
                "tokenizer",
                m.tokenizer_permille.to_string(),
                s.tokens_permille.to_string(),
            );
            let sampling = match m.sampling {
                Sampling::Any => SimSampling::Free,
                Sampling::OneOf => SimSampling::NotBoth,
                Sampling::DefaultOnly => SimSampling::Defaults,
            };
            diff(
                id,
                "sampling",
                format!("{sampling:?}"),
                format!("{:?}", s.sampling),
            );
            let t = m.thinking;
            diff(
                id,
                "thinking (on by default, adaptive, budget, disabled, disabled at high or below)",
                format!(
                    "{:?}",
                    (
                        t.on_by_default,
                        t.adaptive,
                        t.budget,
                        t.disabled,
                        t.disabled_needs_high_or_below
                    )
                ),
                format!(
                    "{:?}",
                    (
                        s.thinking.default_on,
                        s.thinking.adaptive,
                        s.thinking.enabled,
                        s.thinking.disabled,
                        s.thinking.disabled_at_high_or_below
                    )
                ),
            );
            diff(id, "prefill", m.prefill.to_string(), s.prefill.to_string());
            diff(
                id,
                "forced tool choice",
                m.forced_tool_choice.to_string(),
                s.forced_tools.to_string(),
            );
            let efforts: Vec<&str> = m.efforts.iter().map(|e| e.as_str()).collect();
            diff(id, "efforts", efforts.join(","), s.efforts.join(","));
            diff(
                id,
                "default effort",
                m.default_effort.map_or("", Effort::as_str).into(),
                s.default_effort.into(),
            );
            diff(
                id,
                "structured outputs",
                m.structured_outputs.to_string(),
                s.structured.to_string(),
            );
            diff(
                id,
                "fast mode",
                m.fast.is_some().to_string(),
                s.fast.to_string(),
            );
            diff(
                id,
                "long-prompt band",
                format!("{:?}", m.long_prompt.map(|l| (l.tokens, l.times))),
                format!("{:?}", s.long_band.map(|(t, x)| (t as u64, x as u64))),
            );
            for now in days {
                let Some(p) = m.price_at(now) else { continue };
                let r = s.rates_at(now);
                let micros = |d: f64| (d * 1e6).round() as u64;
                diff(
                    id,
                    &format!("rates at {now} (input, output, cache read; µ$/MTok)"),
                    format!("{:?}", (p.input, p.output, p.cache_read)),
                    format!(
                        "{:?}",
                        (micros(r.input), micros(r.output), micros(r.cache_read))
                    ),
                );
            }
        }
    }
    for s in simm::MODELS {
        if pipeline::models::find(s.id).is_none() {
            diffs.borrow_mut().push(format!(
                "{}: in the simulator's table, not in the pipeline's catalog",
                s.id
            ));
        }
    }
    let diffs = diffs.into_inner();
    assert!(
        diffs.is_empty(),
        "{} differences between the tables:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}

#[test]
fn both_tables_bill_the_same_usage_the_same() {
    use pipeline::anthropic::{CacheCreation, Usage};
    use pipeline::pricing::{cost_micros, Tier};
    let now = at(2026, 12, 1);
    let usage = Usage {
        input_tokens: 123_457,
        output_tokens: 9_876,
        cache_creation_input_tokens: 5_000,
        cache_read_input_tokens: 20_001,
        cache_creation: Some(CacheCreation {
            ephemeral_5m_input_tokens: 3_000,
            ephemeral_1h_input_tokens: 2_000,
        }),
        speed: None,
    };
    let fast = Usage {
        speed: Some(pipeline::anthropic::Speed::Fast),
        ..usage
    };
    for m in CATALOG.iter().filter(|m| !m.is_retired(now)) {
        for (tier, batch) in [(Tier::Standard, false), (Tier::Batch, true)] {
            for usage in [usage, fast] {
                assert_eq!(
                    cost_micros(m.id, &usage, tier, now).map(|c| c.micros()),
                    Some(sim::pricing::cost_micros(m.id, &usage, batch, now)),
                    "{} {tier:?} {:?}",
                    m.id,
                    usage.speed
                );
            }
        }
    }
}
