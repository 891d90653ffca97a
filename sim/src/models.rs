//! The simulator's own model table, typed in from the official model pages, migration guides
//! and pricing page — never from `pipeline`'s catalog, so that each checks the other (a test in
//! `tests/tables.rs` lists every difference).
//!
//! This file is over 400 lines on purpose: it is one table of data, typed in from the pages
//! listed below, and splitting it would scatter the table (its tests are in `models/tests.rs`).
//!
//! Pages (read 2026-12-01; the 5.2 rows 2026-12-06):
//! - whats-new-fable-5-2 and the release notes of 2026-11-09: Fable 5.2 and Mythos 5.2, 1M / 128k,
//!   $8 / $40, thinking always on
//! - overview: platform.claude.com/docs/en/models/overview (ids, 1M context, 128K output, the
//!   300K batch output with the `output-300k-2026-03-24` beta header, retirement floors)
//! - sonnet-5-5 migration guide: five settings return 400 (thinking budgets, sampling, prefill,
//!   forced tool choice, `thinking: {"type":"disabled"}`); `between_tools`; cache minimum 512;
//!   cache reads $0.10, "half the Claude Sonnet 5 rate"; ~30% more tokens than Sonnet 4.6
//! - sonnet-5 migration guide: adaptive thinking on by default, `disabled` accepted, budgets 400
//! - haiku-5-5 migration guide: `temperature` must be 1, `top_p` 0.99, no `top_k`, not both;
//!   forced tool choice still accepted; prefill 400; two price bands around 100,000 tokens
//! - opus-5-5 what's new: always thinks; forced tool choice 400; default effort medium; $4/$20
//! - pricing: 5-minute writes 1.25×, 1-hour writes 2×, batches 50%; Sonnet 4.6 $3/$15 …
//! - model deprecations: Sonnet 4.5 retires 2026-11-30; the 4.1/4/3.x retirements

/// Thinking on by default and the `thinking` types a model accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Thinking {
    pub default_on: bool,
    pub adaptive: bool,
    pub enabled: bool,
    pub disabled: bool,
    /// `disabled` only at effort `high` or below (Opus 5, Haiku 5.5).
    pub disabled_at_high_or_below: bool,
    /// `between_tools` (Sonnet 5.5 only), at low, medium or high effort.
    pub between_tools: bool,
}

/// Sampling parameters accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampling {
    Free,
    /// `temperature` or `top_p`, not both (Haiku 4.5).
    NotBoth,
    /// Only `temperature: 1`, `top_p: 0.99`, no `top_k`, not both (the 5.x models, Opus 4.7+).
    Defaults,
}

/// Dollars per million tokens from a day on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rates {
    /// Epoch day (days since 1970-01-01) the rates took effect.
    pub from_day: i64,
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimModel {
    pub id: &'static str,
    /// The alias the API also accepts; answers name `id`.
    pub alias: Option<&'static str>,
    pub display_name: &'static str,
    /// RFC 3339 release day for `GET /v1/models`.
    pub created_at: &'static str,
    pub context: u32,
    pub max_output: u32,
    pub min_cache: u32,
    /// Tokens per 1,000 of the Sonnet 4.6 tokenizer's for the same text.
    pub tokens_permille: u32,
    pub sampling: Sampling,
    pub thinking: Thinking,
    pub prefill: bool,
    pub forced_tools: bool,
    /// Effort levels, as strings, lowest first; empty: no effort parameter.
    pub efforts: &'static [&'static str],
    pub default_effort: &'static str,
    pub structured: bool,
    pub rates: &'static [Rates],
    /// Haiku 5.5: prompts over 100,000 tokens cost five times as much.
    pub long_band: Option<(u32, f64)>,
    /// Epoch day from which the model is gone (404).
    pub retired_day: Option<i64>,
    pub deprecated_day: Option<i64>,
    /// Fast mode (`speed: "fast"`) without a beta header: the fast-mode page, read
    /// 2026-12-06 — "available on Claude Fable 5.2, Claude Mythos 5.2, and Claude Opus 5.5";
    /// priced at 2× every rate (Google Cloud's Fable 5.2 page; the official figure was not
    /// readable).
    pub fast: bool,
}

const E5: &[&str] = &["low", "medium", "high", "xhigh", "max"];
const E4_6: &[&str] = &["low", "medium", "high", "max"];
const E4_5: &[&str] = &["low", "medium", "high"];

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
pub const fn day(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

const fn r(from_day: i64, input: f64, output: f64, cache_read: f64) -> Rates {
    Rates {
        from_day,
        input,
        output,
        cache_read,
    }
}

const ON: Thinking = Thinking {
    default_on: true,
    adaptive: true,
    enabled: false,
    disabled: true,
    disabled_at_high_or_below: false,
    between_tools: false,
};
const ALWAYS: Thinking = Thinking {
    disabled: false,
    ..ON
};
const OFF_ADAPTIVE: Thinking = Thinking {
    default_on: false,
    ..ON
};
const OFF_ALL: Thinking = Thinking {
    default_on: false,
    enabled: true,
    ..ON
};
const OFF_BUDGET: Thinking = Thinking {
    default_on: false,
    adaptive: false,
    enabled: true,
    ..ON
};

const NEW: SimModel = SimModel {
    id: "",
    alias: None,
    display_name: "",
    created_at: "",
    context: 1_000_000,
    max_output: 128_000,
    min_cache: 512,
    tokens_permille: 1_300,
    sampling: Sampling::Defaults,
    thinking: ON,
    prefill: false,
    forced_tools: true,
    efforts: E5,
    default_effort: "high",
    structured: true,
    rates: &[],
    long_band: None,
    retired_day: None,
    deprecated_day: None,
    fast: false,
};

const OLD: SimModel = SimModel {
    context: 200_000,
    max_output: 64_000,
    tokens_permille: 1_000,
    sampling: Sampling::Free,
    thinking: OFF_BUDGET,
    prefill: true,
    efforts: &[],
    default_effort: "",
    ..NEW
};

/// Fable 5.2, whose specs and prices Mythos 5.2 shares.
const FABLE_5_2: SimModel = SimModel {
    id: "claude-fable-5-2",
    display_name: "Claude Fable 5.2",
    created_at: "2026-11-09T00:00:00Z",
    thinking: ALWAYS,
    forced_tools: false,
    structured: false,
    rates: &[r(day(2026, 11, 9), 8.0, 40.0, 0.80)],
    fast: true,
    ..NEW
};

pub const MODELS: &[SimModel] = &[
    SimModel {
        id: "claude-haiku-5-5",
        display_name: "Claude Haiku 5.5",
        created_at: "2026-10-07T00:00:00Z",
        thinking: Thinking {
            disabled_at_high_or_below: true,
            ..ON
        },
        default_effort: "medium",
        rates: &[r(day(2026, 10, 7), 0.10, 0.50, 0.01)],
        long_band: Some((100_000, 5.0)),
        ..NEW
    },
    SimModel {
        id: "claude-sonnet-5-5",
        display_name: "Claude Sonnet 5.5",
        created_at: "2026-09-28T00:00:00Z",
        thinking: Thinking {
            disabled: false,
            between_tools: true,
            ..ON
        },
        forced_tools: false,
        rates: &[
            r(day(2026, 9, 28), 2.0, 10.0, 0.20),
            r(day(2026, 10, 7), 2.0, 10.0, 0.10),
        ],
        ..NEW
    },
    SimModel {
        id: "claude-opus-5-5",
        display_name: "Claude Opus 5.5",
        created_at: "2026-09-22T00:00:00Z",
        thinking: ALWAYS,
        forced_tools: false,
        default_effort: "medium",
        rates: &[r(day(2026, 9, 22), 4.0, 20.0, 0.20)],
        fast: true,
        ..NEW
    },
    // Fable 5.2 / Mythos 5.2, typed in from whats-new-fable-5-2 and the release notes
    // (2026-11-09; read 2026-12-06): 1M context, 128k output, $8 / $40; thinking always on,
    // default effort high. Cache prices are on no page read: the pricing page's general
    // multipliers (reads 0.1×: $0.80).
    FABLE_5_2,
    SimModel {
        id: "claude-mythos-5-2",
        display_name: "Claude Mythos 5.2",
        ..FABLE_5_2
    },
    SimModel {
        id: "claude-fable-5-1",
        display_name: "Claude Fable 5.1",
        created_at: "2026-09-01T00:00:00Z",
        thinking: ALWAYS,
        forced_tools: false,
        structured: false,
        rates: &[r(day(2026, 9, 1), 10.0, 50.0, 0.25)],
        ..NEW
    },
    SimModel {
        id: "claude-mythos-5-1",
        display_name: "Claude Mythos 5.1",
        created_at: "2026-09-01T00:00:00Z",
        thinking: ALWAYS,
        forced_tools: false,
        structured: false,
        rates: &[r(day(2026, 9, 1), 10.0, 50.0, 0.25)],
        ..NEW
    },
    SimModel {
        id: "claude-opus-5",
        display_name: "Claude Opus 5",
        created_at: "2026-07-24T00:00:00Z",
        thinking: Thinking {
            disabled_at_high_or_below: true,
            ..ON
        },
        rates: &[r(day(2026, 7, 24), 5.0, 25.0, 0.50)],
        ..NEW
    },
    SimModel {
        id: "claude-sonnet-5",
        display_name: "Claude Sonnet 5",
        created_at: "2026-06-30T00:00:00Z",
        min_cache: 1_024,
        rates: &[r(day(2026, 6, 30), 2.0, 10.0, 0.20)],
        ..NEW
    },
    SimModel {
        id: "claude-fable-5",
        display_name: "Claude Fable 5",
        created_at: "2026-06-09T00:00:00Z",
        thinking: ALWAYS,
        structured: false,
        rates: &[r(day(2026, 6, 9), 10.0, 50.0, 1.0)],
        ..NEW
    },
    SimModel {
        id: "claude-mythos-5",
        display_name: "Claude Mythos 5",
        created_at: "2026-06-09T00:00:00Z",
        thinking: ALWAYS,
        structured: false,
        rates: &[r(day(2026, 6, 9), 10.0, 50.0, 1.0)],
        ..NEW
    },
    SimModel {
        id: "claude-opus-4-8",
        display_name: "Claude Opus 4.8",
        created_at: "2026-05-28T00:00:00Z",
        min_cache: 1_024,
        thinking: OFF_ADAPTIVE,
        rates: &[r(day(2026, 5, 28), 5.0, 25.0, 0.50)],
        ..NEW
    },
    SimModel {
        id: "claude-opus-4-7",
        display_name: "Claude Opus 4.7",
        created_at: "2026-04-16T00:00:00Z",
        min_cache: 2_048,
        thinking: OFF_ADAPTIVE,
        rates: &[r(day(2026, 4, 16), 5.0, 25.0, 0.50)],
        ..NEW
    },
    SimModel {
        id: "claude-sonnet-4-6",
        display_name: "Claude Sonnet 4.6",
        created_at: "2026-02-17T00:00:00Z",
        context: 1_000_000,
        max_output: 128_000,
        min_cache: 1_024,
        thinking: OFF_ALL,
        prefill: false,
        efforts: E4_6,
        default_effort: "high",
        rates: &[r(day(2026, 2, 17), 3.0, 15.0, 0.30)],
        ..OLD
    },
    SimModel {
        id: "claude-opus-4-6",
        display_name: "Claude Opus 4.6",
        created_at: "2026-02-05T00:00:00Z",
        context: 1_000_000,
        max_output: 128_000,
        min_cache: 4_096,
        thinking: OFF_ALL,
        prefill: false,
        efforts: E4_6,
        default_effort: "high",
        rates: &[r(day(2026, 2, 5), 5.0, 25.0, 0.50)],
        ..OLD
    },
    SimModel {
        id: "claude-opus-4-5-20251101",
        alias: Some("claude-opus-4-5"),
        display_name: "Claude Opus 4.5",
        created_at: "2025-11-24T00:00:00Z",
        min_cache: 4_096,
        efforts: E4_5,
        default_effort: "high",
        rates: &[r(day(2025, 11, 24), 5.0, 25.0, 0.50)],
        // The deprecations page's status table, as a registry that re-read it gives it
        // (deprecated 2026-11-23, retiring 2027-01-22, tentative).
        deprecated_day: Some(day(2026, 11, 23)),
        retired_day: Some(day(2027, 1, 22)),
        ..OLD
    },
    SimModel {
        id: "claude-haiku-4-5-20251001",
        alias: Some("claude-haiku-4-5"),
        display_name: "Claude Haiku 4.5",
        created_at: "2025-10-15T00:00:00Z",
        min_cache: 4_096,
        sampling: Sampling::NotBoth,
        rates: &[r(day(2025, 10, 15), 1.0, 5.0, 0.10)],
        ..OLD
    },
    SimModel {
        id: "claude-sonnet-4-5-20250929",
        alias: Some("claude-sonnet-4-5"),
        display_name: "Claude Sonnet 4.5",
        created_at: "2025-09-29T00:00:00Z",
        min_cache: 1_024,
        rates: &[r(day(2025, 9, 29), 3.0, 15.0, 0.30)],
        deprecated_day: Some(day(2026, 9, 30)),
        retired_day: Some(day(2026, 11, 30)),
        ..OLD
    },
    SimModel {
        id: "claude-opus-4-1-20250805",
        alias: Some("claude-opus-4-1"),
        display_name: "Claude Opus 4.1",
        created_at: "2025-08-05T00:00:00Z",
        rates: &[r(day(2025, 8, 5), 15.0, 75.0, 1.50)],
        retired_day: Some(day(2026, 8, 5)),
        ..OLD
    },
    SimModel {
        id: "claude-sonnet-4-20250514",
        alias: Some("claude-sonnet-4-0"),
        display_name: "Claude Sonnet 4",
        created_at: "2025-05-14T00:00:00Z",
        rates: &[r(day(2025, 5, 14), 3.0, 15.0, 0.30)],
        retired_day: Some(day(2026, 6, 15)),
        ..OLD
    },
    SimModel {
        id: "claude-opus-4-20250514",
        alias: Some("claude-opus-4-0"),
        display_name: "Claude Opus 4",
        created_at: "2025-05-14T00:00:00Z",
        rates: &[r(day(2025, 5, 14), 15.0, 75.0, 1.50)],
        retired_day: Some(day(2026, 6, 15)),
        ..OLD
    },
    SimModel {
        id: "claude-3-7-sonnet-20250219",
        alias: Some("claude-3-7-sonnet-latest"),
        display_name: "Claude Sonnet 3.7",
        created_at: "2025-02-19T00:00:00Z",
        rates: &[r(day(2025, 2, 19), 3.0, 15.0, 0.30)],
        retired_day: Some(day(2026, 2, 19)),
        ..OLD
    },
    SimModel {
        id: "claude-3-5-haiku-20241022",
        alias: Some("claude-3-5-haiku-latest"),
        display_name: "Claude Haiku 3.5",
        created_at: "2024-10-22T00:00:00Z",
        rates: &[r(day(2024, 10, 22), 0.80, 4.0, 0.08)],
        retired_day: Some(day(2026, 2, 19)),
        ..OLD
    },
    SimModel {
        id: "claude-3-haiku-20240307",
        alias: None,
        display_name: "Claude Haiku 3",
        created_at: "2024-03-07T00:00:00Z",
        rates: &[r(day(2024, 3, 7), 0.25, 1.25, 0.03)],
        retired_day: Some(day(2026, 4, 20)),
        ..OLD
    },
];

impl SimModel {
    /// Gone at `now_ms`.
    pub fn retired(&self, now_ms: i64) -> bool {
        self.retired_day
            .is_some_and(|d| now_ms.div_euclid(86_400_000) >= d)
    }

    /// The rates in force at `now_ms`.
    pub fn rates_at(&self, now_ms: i64) -> &Rates {
        let today = now_ms.div_euclid(86_400_000);
        self.rates
            .iter()
            .rev()
            .find(|r| r.from_day <= today)
            .unwrap_or(&self.rates[0])
    }

    /// Index of an effort level in this model's list.
    pub fn effort_rank(&self, effort: &str) -> Option<usize> {
        self.efforts.iter().position(|e| *e == effort)
    }
}

/// The row for an id or alias, retired or not.
pub fn lookup(id: &str) -> Option<&'static SimModel> {
    MODELS.iter().find(|m| m.id == id || m.alias == Some(id))
}

/// The model a request may use at `now_ms`: unknown and retired ids are both a 404
/// `not_found_error` naming the model, as the API answers them.
pub fn available(id: &str, now_ms: i64) -> Option<&'static SimModel> {
    lookup(id).filter(|m| !m.retired(now_ms))
}

/// A model the knobs dropped (`models_dropped`): the API no longer offers it, and a call
/// naming it (by id or alias) is a 404 `not_found_error`, as for a retired one.
pub fn dropped(m: &SimModel, knobs: &crate::config::Knobs) -> bool {
    knobs
        .models_dropped
        .iter()
        .any(|d| d == m.id || m.alias == Some(d.as_str()))
}

/// The 404 a call for a dropped model gets.
pub fn refuse_dropped(
    (spec, asked): (&SimModel, &str),
    knobs: &crate::config::Knobs,
) -> Result<(), crate::errors::SimError> {
    match dropped(spec, knobs) {
        true => Err(crate::errors::SimError::not_found(format!(
            "model: {asked}"
        ))),
        false => Ok(()),
    }
}

#[cfg(test)]
mod tests;
