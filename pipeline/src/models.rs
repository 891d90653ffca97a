//! The model catalog: one row per Claude model id, and everything the product decides from it —
//! which ids are accepted at submission, what each model refuses, its limits, its prices with the
//! date each took effect, its tokenizer, its rate-limit group and its retirement.
//!
//! This file is over 400 lines on purpose: it is one table of data, each row citing its doc,
//! and splitting it would scatter the catalog (its tests are in `models/tests.rs`).
//!
//! Validation ([`admit`], [`crate::shape::check`]), request shaping ([`crate::shape`]), pricing
//! ([`crate::pricing`]), the budget's model classes ([`Model::rate_group`]) and token estimates
//! ([`crate::tokens`]) all read this table; nothing else in the product knows a model fact.
//! The simulator keeps its own table, typed in separately from the same pages, and a test there
//! lists every difference between the two.
//!
//! Sources (read 2026-12-01, the 5.2 rows 2026-12-06; each row names its own page):
//! - MODELS: platform.claude.com/docs/en/models/overview ("Compare models", legacy list, footnotes)
//! - per-model pages: `platform.claude.com/docs/en/models/<model>/overview` and whats-new-…
//! - S55-MIG: platform.claude.com/docs/en/models/sonnet-5-5/migration-guide
//! - S5-MIG: platform.claude.com/docs/en/models/sonnet-5/migration-guide
//! - H55-MIG: platform.claude.com/docs/en/models/haiku-5-5/migration-guide
//! - PRICING: platform.claude.com/docs/en/about-claude/pricing (multipliers: 5-minute cache
//!   writes 1.25× input, 1-hour writes 2×, reads 0.1× except where a row says otherwise; batches
//!   half of everything; "Claude 4.7 and later … produce approximately 30% more tokens")
//! - EFFORT: platform.claude.com/docs/en/build-with-claude/effort ("Most Claude models default
//!   to high effort …; Claude Opus 5.5 and Claude Haiku 5.5 default to medium")
//! - DEPRECATIONS: platform.claude.com/docs/en/about-claude/model-deprecations
//! - RATE-LIMITS: platform.claude.com/docs/en/api/rate-limits (pools: Fable 5.x, Opus 4.x and
//!   Sonnet 4.x are shared; every other model has its own)

use serde::{Deserialize, Serialize};

use crate::anthropic::Effort;
use crate::clock::date_ms;

pub mod providers;
pub mod readme;
pub mod view;
pub mod watch;

/// The model the product uses unless a job names another.
pub const DEFAULT_MODEL: &str = "claude-sonnet-5-5";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Family {
    Fable,
    Mythos,
    Opus,
    Sonnet,
    Haiku,
}

/// What a model does with `temperature`, `top_p` and `top_k`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Sampling {
    /// Any value in range.
    Any,
    /// Any value, but `temperature` and `top_p` not both (Haiku 4.5: "one at a time, not both").
    OneOf,
    /// Only the defaults: `temperature` 1, `top_p` 0.99, never `top_k`, never both
    /// (H55-MIG: "Any other `temperature` or `top_p` value returns a 400 error, including a
    /// `top_p` of `1`. So does any `top_k` value, and so does a request that includes both").
    DefaultOnly,
}

/// Which `thinking` settings a model accepts, and what it does without one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ThinkingRules {
    /// Adaptive thinking runs when the request says nothing (the 5.x default).
    pub on_by_default: bool,
    pub adaptive: bool,
    /// `{"type":"enabled","budget_tokens":N}`.
    pub budget: bool,
    /// `{"type":"disabled"}`.
    pub disabled: bool,
    /// `disabled` only at effort `high` or below (Opus 5, Haiku 5.5).
    pub disabled_needs_high_or_below: bool,
}

/// A price list in micro-dollars per million tokens (`2_000_000` is $2 / MTok), in force from
/// `from` (UTC day) until the next entry's day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Price {
    /// `(year, month, day)` the price took effect.
    pub from: (i32, u32, u32),
    pub input: u64,
    pub output: u64,
    /// Cache reads; cache writes are 1.25× (5 minutes) and 2× (1 hour) of `input` on every model.
    pub cache_read: u64,
}

/// Prompts (input + cache writes + cache reads) over `tokens` are billed at `times` every rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LongPrompt {
    pub tokens: u64,
    pub times: u64,
}

/// One model of the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Model {
    pub id: &'static str,
    /// Other ids the API accepts for it (a pre-4.6 alias, the dated snapshot).
    pub aliases: &'static [&'static str],
    pub display_name: &'static str,
    pub family: Family,
    /// `(major, minor)`: Sonnet 5.5 is `(5, 5)`.
    pub generation: (u8, u8),
    pub context_window: u32,
    /// `max_tokens` limit on the Messages API.
    pub max_output: u32,
    /// On the Message Batches API, with the `output-300k-2026-03-24` beta header (which this
    /// product does not send, so batch jobs are held to `max_output`).
    pub max_output_batch: u32,
    /// Shorter cache prefixes are silently not cached.
    pub min_cacheable: u32,
    /// Tokens per 1,000 of the 4.x tokenizer's for the same text.
    pub tokenizer_permille: u32,
    pub sampling: Sampling,
    pub thinking: ThinkingRules,
    /// A conversation may end with an assistant turn.
    pub prefill: bool,
    /// `tool_choice` of type `any` or `tool`.
    pub forced_tool_choice: bool,
    /// Accepted `output_config.effort` levels; empty when the model has no effort parameter.
    pub efforts: &'static [Effort],
    pub default_effort: Option<Effort>,
    /// `output_config.format` (JSON schema).
    pub structured_outputs: bool,
    pub prices: &'static [Price],
    pub long_prompt: Option<LongPrompt>,
    /// Models in one group share the provider's rate limits.
    pub rate_group: &'static str,
    pub deprecated_on: Option<(i32, u32, u32)>,
    /// From this UTC day on, the API answers 404 and the product refuses the id.
    pub retires_on: Option<(i32, u32, u32)>,
    /// The page each figure of the row comes from.
    pub source: &'static str,
    /// Facts the model's own pages are silent on, taken from the documented general rule
    /// instead (served by `GET /api/models`, so an operator sees which figures are assumed).
    pub general_rules: &'static [GeneralRule],
    /// Fast mode (`speed: "fast"`), where the model offers it without a beta header.
    pub fast: Option<FastMode>,
    /// The UTC day the row's figures were last read from its pages.
    pub read_on: (i32, u32, u32),
}

/// Fast mode on a model (FAST: platform.claude.com/docs/en/build-with-claude/fast-mode, read
/// 2026-12-06: "Fast mode is available on Claude Fable 5.2, Claude Mythos 5.2, and Claude Opus
/// 5.5. Fast mode is in research preview on Claude Opus 5 and deprecated on Claude Opus 4.8";
/// Opus 4.8's was removed on 2026-11-30). The research preview needs the
/// `fast-mode-2026-02-01` beta header, which this product does not send: Opus 5 is not offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FastMode {
    /// Every rate (input, output, cache writes and reads) times this, in thousandths.
    pub price_permille: u64,
}

/// FAST: "Fast mode is priced at a multiplier on standard rates across the full context
/// window" — the page's figure itself was not readable here; Google Cloud's Fable 5.2 page
/// gives it: "priced at 2x the standard-speed token rates across all token types (input,
/// output, 5-minute and 1-hour cache write, and cache hit tokens)" (read 2026-12-06). An
/// assumption, shown by `GET /api/models` as [`GeneralRule::FastPrices`].
pub const FAST_2X: FastMode = FastMode {
    price_permille: 2_000,
};

/// A fact taken from a general rule of the docs rather than from the model's own pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum GeneralRule {
    /// Cache prices from PRICING's multipliers: writes 1.25× (5 minutes) and 2× (1 hour) of
    /// input, reads 0.1×.
    CachePrices,
    /// The minimum cacheable prompt of the model's generation.
    MinCacheable,
    /// Fast-mode prices as 2× every standard rate ([`FAST_2X`]).
    FastPrices,
}

const fn usd(dollars_per_mtok: f64) -> u64 {
    (dollars_per_mtok * 1_000_000.0 + 0.5) as u64
}

const fn price(from: (i32, u32, u32), input: f64, output: f64, cache_read: f64) -> Price {
    Price {
        from,
        input: usd(input),
        output: usd(output),
        cache_read: usd(cache_read),
    }
}

const ALL_EFFORTS: &[Effort] = &[
    Effort::Low,
    Effort::Medium,
    Effort::High,
    Effort::Xhigh,
    Effort::Max,
];
const NO_XHIGH: &[Effort] = &[Effort::Low, Effort::Medium, Effort::High, Effort::Max];
const UP_TO_HIGH: &[Effort] = &[Effort::Low, Effort::Medium, Effort::High];

/// Adaptive only, always on: `disabled` and `enabled` are 400s (Opus 5.5 "What's new": "thinking
/// can't be disabled"; Fable 5.1 page: "Adaptive thinking: The only thinking mode").
const ALWAYS_ADAPTIVE: ThinkingRules = ThinkingRules {
    on_by_default: true,
    adaptive: true,
    budget: false,
    disabled: false,
    disabled_needs_high_or_below: false,
};
/// On by default, `disabled` accepted, budgets refused (S5-MIG: "To turn thinking off, pass
/// `thinking: {type: "disabled"}`. Manual extended thinking … returns a 400 error").
const ADAPTIVE_ON: ThinkingRules = ThinkingRules {
    on_by_default: true,
    adaptive: true,
    budget: false,
    disabled: true,
    disabled_needs_high_or_below: false,
};
/// As [`ADAPTIVE_ON`], but `disabled` only at effort `high` or below (Opus 5 page: "Disabling
/// thinking requires effort `high` or below"; Haiku 5.5 "What's new", the same).
const ADAPTIVE_ON_DISABLE_AT_HIGH: ThinkingRules = ThinkingRules {
    disabled_needs_high_or_below: true,
    ..ADAPTIVE_ON
};
/// Off by default; adaptive or disabled; budgets refused (Opus 4.7 and 4.8).
const ADAPTIVE_OFF: ThinkingRules = ThinkingRules {
    on_by_default: false,
    adaptive: true,
    budget: false,
    disabled: true,
    disabled_needs_high_or_below: false,
};
/// Off by default; every setting accepted, budgets deprecated (S55-MIG table: Sonnet 4.6 "Off |
/// adaptive, disabled, enabled (deprecated)").
const ANY_THINKING_OFF: ThinkingRules = ThinkingRules {
    on_by_default: false,
    adaptive: true,
    budget: true,
    disabled: true,
    disabled_needs_high_or_below: false,
};
/// Off by default; budgets or disabled; `adaptive` is a 400 (S55-MIG table: "Claude Sonnet 4.5
/// and Claude Haiku 4.5 | Off | disabled, enabled").
const BUDGET_ONLY_OFF: ThinkingRules = ThinkingRules {
    on_by_default: false,
    adaptive: false,
    budget: true,
    disabled: true,
    disabled_needs_high_or_below: false,
};

/// A 5.x-or-later row's shared settings (changed per row where a page says otherwise).
const GEN5: Model = Model {
    id: "",
    aliases: &[],
    display_name: "",
    family: Family::Sonnet,
    generation: (5, 0),
    // MODELS: "1M" context, "128K" max output; the footnote on the Batches API's 300k.
    context_window: 1_000_000,
    max_output: 128_000,
    max_output_batch: 300_000,
    min_cacheable: 512,
    // PRICING / S55-MIG: "about 30% more tokens" than the Sonnet 4.6 tokenizer.
    tokenizer_permille: 1_300,
    sampling: Sampling::DefaultOnly,
    thinking: ADAPTIVE_ON,
    // S55-MIG: prefill "returns a 400 error … as Claude Sonnet 4.6 and Claude Sonnet 5 do".
    prefill: false,
    forced_tool_choice: true,
    efforts: ALL_EFFORTS,
    default_effort: Some(Effort::High),
    structured_outputs: true,
    prices: &[],
    long_prompt: None,
    rate_group: "",
    deprecated_on: None,
    retires_on: None,
    source: "",
    general_rules: &[],
    fast: None,
    read_on: (2026, 12, 1),
};

/// Fable 5.2's row, which Mythos 5.2 shares but for its name (FABLE52: "Claude Fable 5.2 and
/// Claude Mythos 5.2 share these specs").
const FABLE_5_2: Model = Model {
    id: "claude-fable-5-2",
    display_name: "Claude Fable 5.2",
    family: Family::Fable,
    generation: (5, 2),
    thinking: ALWAYS_ADAPTIVE,
    forced_tool_choice: false,
    structured_outputs: false,
    prices: &[price((2026, 11, 9), 8.0, 40.0, 0.80)],
    rate_group: "fable-5",
    source: "platform.claude.com/docs/en/models/fable-5-2/whats-new-fable-5-2",
    general_rules: &[
        GeneralRule::CachePrices,
        GeneralRule::MinCacheable,
        GeneralRule::FastPrices,
    ],
    fast: Some(FAST_2X),
    read_on: (2026, 12, 6),
    ..GEN5
};

/// The catalog: current models first, then legacy, deprecated and retired ones.
pub const CATALOG: &[Model] = &[
    Model {
        id: "claude-opus-5-5",
        display_name: "Claude Opus 5.5",
        family: Family::Opus,
        generation: (5, 5),
        thinking: ALWAYS_ADAPTIVE,
        // Opus 5.5 "What's new": "tool_choice: type \"tool\" and \"any\" are not supported".
        forced_tool_choice: false,
        // EFFORT: Opus 5.5 defaults to medium.
        default_effort: Some(Effort::Medium),
        // Opus 5.5 "What's new": "$4 … input and $20 … output … cache reads at $0.20 (0.05x)".
        prices: &[price((2026, 9, 22), 4.0, 20.0, 0.20)],
        rate_group: "opus-5-5",
        source: "platform.claude.com/docs/en/models/opus-5-5/whats-new-opus-5-5",
        general_rules: &[GeneralRule::FastPrices],
        fast: Some(FAST_2X),
        read_on: (2026, 12, 6),
        ..GEN5
    },
    Model {
        id: "claude-sonnet-5-5",
        display_name: "Claude Sonnet 5.5",
        family: Family::Sonnet,
        generation: (5, 5),
        // S55-MIG: five settings return 400: budgets, sampling, prefill, forced tool choice and
        // `thinking: {"type":"disabled"}`.
        thinking: ThinkingRules {
            disabled: false,
            ..ADAPTIVE_ON
        },
        forced_tool_choice: false,
        // S55-MIG: "the same prices as Claude Sonnet 5, except for prompt cache reads, which
        // cost $0.10 … half the Claude Sonnet 5 rate". Launched at $0.20 (earlier snapshots of
        // the model page); the cut is dated 2026-10-07 by changelogs, not by the official page.
        prices: &[
            price((2026, 9, 28), 2.0, 10.0, 0.20),
            price((2026, 10, 7), 2.0, 10.0, 0.10),
        ],
        rate_group: "sonnet-5-5",
        source: "platform.claude.com/docs/en/models/sonnet-5-5/migration-guide",
        ..GEN5
    },
    Model {
        id: "claude-haiku-5-5",
        display_name: "Claude Haiku 5.5",
        family: Family::Haiku,
        generation: (5, 5),
        thinking: ADAPTIVE_ON_DISABLE_AT_HIGH,
        // H55-MIG: forced tool_choice is still accepted ("the response starts with the tool call").
        forced_tool_choice: true,
        default_effort: Some(Effort::Medium),
        // Haiku 5.5 page: "$0.10 / MTok for prompts up to 100,000 tokens; $0.50 / MTok for
        // prompts over 100,000 tokens", the same two bands for output, writes and reads.
        prices: &[price((2026, 10, 7), 0.10, 0.50, 0.01)],
        long_prompt: Some(LongPrompt {
            tokens: 100_000,
            times: 5,
        }),
        rate_group: "haiku-5-5",
        source: "platform.claude.com/docs/en/models/haiku-5-5/overview",
        ..GEN5
    },
    // Fable 5.2 and Mythos 5.2 (release notes, 2026-11-09; FABLE52: platform.claude.com/docs/
    // en/models/fable-5-2/whats-new-fable-5-2, read 2026-12-06): "a 1M token context window
    // (default and maximum) and 128k max output tokens", shared by both; $8 / $40 per MTok (the
    // overview's Fable 5.2 column; the release note gives Mythos 5.2 the same); adaptive
    // thinking always on, default effort high (MODELS). No page read gives their cache prices
    // or minimum cacheable prompt: PRICING's general multipliers (reads 0.1× = $0.80) and the
    // generation's 512 are assumed, and `general_rules` says so. Structured outputs and forced
    // tool choice are not confirmed for Fable by any page read: not used, as on 5.1. Mythos 5.2
    // is offered to organizations verified through Anthropic's programs (FABLE52).
    FABLE_5_2,
    Model {
        id: "claude-mythos-5-2",
        display_name: "Claude Mythos 5.2",
        family: Family::Mythos,
        ..FABLE_5_2
    },
    Model {
        id: "claude-fable-5-1",
        display_name: "Claude Fable 5.1",
        family: Family::Fable,
        generation: (5, 1),
        thinking: ALWAYS_ADAPTIVE,
        forced_tool_choice: false,
        // Structured outputs on Fable are not confirmed by any page read: not used.
        structured_outputs: false,
        // Fable 5.1 page: $10 / $50; cache reads 2.5% of input.
        prices: &[price((2026, 9, 1), 10.0, 50.0, 0.25)],
        rate_group: "fable-5",
        source: "platform.claude.com/docs/en/models/fable-5-1/overview",
        ..GEN5
    },
    Model {
        id: "claude-mythos-5-1",
        display_name: "Claude Mythos 5.1",
        family: Family::Mythos,
        generation: (5, 1),
        thinking: ALWAYS_ADAPTIVE,
        forced_tool_choice: false,
        structured_outputs: false,
        prices: &[price((2026, 9, 1), 10.0, 50.0, 0.25)],
        rate_group: "fable-5",
        source: "platform.claude.com/docs/en/models/overview",
        ..GEN5
    },
    Model {
        id: "claude-fable-5",
        display_name: "Claude Fable 5",
        family: Family::Fable,
        generation: (5, 0),
        thinking: ALWAYS_ADAPTIVE,
        structured_outputs: false,
        max_output_batch: 128_000,
        prices: &[price((2026, 6, 9), 10.0, 50.0, 1.0)],
        rate_group: "fable-5",
        source: "platform.claude.com/docs/en/about-claude/pricing",
        ..GEN5
    },
    Model {
        id: "claude-mythos-5",
        display_name: "Claude Mythos 5",
        family: Family::Mythos,
        generation: (5, 0),
        thinking: ALWAYS_ADAPTIVE,
        structured_outputs: false,
        max_output_batch: 128_000,
        prices: &[price((2026, 6, 9), 10.0, 50.0, 1.0)],
        rate_group: "fable-5",
        source: "platform.claude.com/docs/en/models/mythos-5/overview",
        ..GEN5
    },
    Model {
        id: "claude-opus-5",
        display_name: "Claude Opus 5",
        family: Family::Opus,
        generation: (5, 0),
        thinking: ADAPTIVE_ON_DISABLE_AT_HIGH,
        prices: &[price((2026, 7, 24), 5.0, 25.0, 0.50)],
        rate_group: "opus-5",
        source: "platform.claude.com/docs/en/models/opus-5/overview",
        ..GEN5
    },
    Model {
        id: "claude-sonnet-5",
        display_name: "Claude Sonnet 5",
        family: Family::Sonnet,
        generation: (5, 0),
        // S55-MIG: "down from 1,024 on Claude Sonnet 5".
        min_cacheable: 1_024,
        // PRICING: "The $2/$10 … introductory pricing through August 31, 2026, is now the
        // standard price. The previously scheduled increase … will not occur."
        prices: &[price((2026, 6, 30), 2.0, 10.0, 0.20)],
        rate_group: "sonnet-5",
        source: "platform.claude.com/docs/en/models/sonnet-5/migration-guide",
        ..GEN5
    },
    Model {
        id: "claude-opus-4-8",
        display_name: "Claude Opus 4.8",
        family: Family::Opus,
        generation: (4, 8),
        // Not on an official page read; a transcription of the caching page gives 1,024.
        min_cacheable: 1_024,
        thinking: ADAPTIVE_OFF,
        prices: &[price((2026, 5, 28), 5.0, 25.0, 0.50)],
        rate_group: "opus-4",
        source: "platform.claude.com/docs/en/about-claude/pricing",
        ..GEN5
    },
    Model {
        id: "claude-opus-4-7",
        display_name: "Claude Opus 4.7",
        family: Family::Opus,
        generation: (4, 7),
        min_cacheable: 2_048,
        thinking: ADAPTIVE_OFF,
        prices: &[price((2026, 4, 16), 5.0, 25.0, 0.50)],
        rate_group: "opus-4",
        source: "platform.claude.com/docs/en/about-claude/pricing",
        ..GEN5
    },
    Model {
        id: "claude-opus-4-6",
        display_name: "Claude Opus 4.6",
        family: Family::Opus,
        generation: (4, 6),
        min_cacheable: 4_096,
        // PRICING: "Claude Sonnet 4.6 and earlier models use the previous tokenizer".
        tokenizer_permille: 1_000,
        sampling: Sampling::Any,
        thinking: ANY_THINKING_OFF,
        efforts: NO_XHIGH,
        prices: &[price((2026, 2, 5), 5.0, 25.0, 0.50)],
        rate_group: "opus-4",
        source: "platform.claude.com/docs/en/models/opus-4-6/overview",
        ..GEN5
    },
    Model {
        id: "claude-sonnet-4-6",
        display_name: "Claude Sonnet 4.6",
        family: Family::Sonnet,
        generation: (4, 6),
        min_cacheable: 1_024,
        tokenizer_permille: 1_000,
        // S55-MIG: "Claude Sonnet 4.6 and earlier models and Claude Haiku 4.5 accept
        // `temperature`, `top_p`, and `top_k`."
        sampling: Sampling::Any,
        thinking: ANY_THINKING_OFF,
        efforts: NO_XHIGH,
        prices: &[price((2026, 2, 17), 3.0, 15.0, 0.30)],
        rate_group: "sonnet-4",
        source: "platform.claude.com/docs/en/models/sonnet-4-6/overview",
        ..GEN5
    },
    Model {
        id: "claude-opus-4-5-20251101",
        aliases: &["claude-opus-4-5"],
        display_name: "Claude Opus 4.5",
        family: Family::Opus,
        generation: (4, 5),
        context_window: 200_000,
        max_output: 64_000,
        max_output_batch: 64_000,
        min_cacheable: 4_096,
        tokenizer_permille: 1_000,
        sampling: Sampling::Any,
        thinking: BUDGET_ONLY_OFF,
        prefill: true,
        efforts: UP_TO_HIGH,
        prices: &[price((2025, 11, 24), 5.0, 25.0, 0.50)],
        rate_group: "opus-4",
        // DEPRECATIONS' status table was not readable here; its figures as a registry that
        // re-read it on 2026-11-26 gives them (github.com/samarthputhraya/Modelpin, release
        // 0.5.7, read 2026-12-06): "deprecated claude-opus-4-5-20251101 on 23 November 2026,
        // with 22 January 2027 as its tentative retirement date and claude-opus-5-5 as the
        // recommended replacement". A third-party reading: check the page before relying on it.
        deprecated_on: Some((2026, 11, 23)),
        retires_on: Some((2027, 1, 22)),
        read_on: (2026, 12, 6),
        source: "platform.claude.com/docs/en/models/opus-4-5/overview",
        ..GEN5
    },
    Model {
        id: "claude-haiku-4-5-20251001",
        // Haiku 4.5 page: "`claude-haiku-4-5` is a convenience alias that resolves to the
        // pinned snapshot `claude-haiku-4-5-20251001`."
        aliases: &["claude-haiku-4-5"],
        display_name: "Claude Haiku 4.5",
        family: Family::Haiku,
        generation: (4, 5),
        context_window: 200_000,
        max_output: 64_000,
        max_output_batch: 64_000,
        // S55-MIG: "The minimum cacheable prompt drops from 4,096 tokens".
        min_cacheable: 4_096,
        tokenizer_permille: 1_000,
        sampling: Sampling::OneOf,
        thinking: BUDGET_ONLY_OFF,
        prefill: true,
        // Haiku 4.5 page: "Default effort | Not supported".
        efforts: &[],
        default_effort: None,
        prices: &[price((2025, 10, 15), 1.0, 5.0, 0.10)],
        rate_group: "haiku-4-5",
        source: "platform.claude.com/docs/en/models/haiku-4-5/overview",
        ..GEN5
    },
    Model {
        id: "claude-sonnet-4-5-20250929",
        aliases: &["claude-sonnet-4-5"],
        display_name: "Claude Sonnet 4.5",
        family: Family::Sonnet,
        generation: (4, 5),
        context_window: 200_000,
        max_output: 64_000,
        max_output_batch: 64_000,
        min_cacheable: 1_024,
        tokenizer_permille: 1_000,
        sampling: Sampling::Any,
        thinking: BUDGET_ONLY_OFF,
        prefill: true,
        // S55-MIG: "Claude Sonnet 4.5 has no effort parameter."
        efforts: &[],
        default_effort: None,
        prices: &[price((2025, 9, 29), 3.0, 15.0, 0.30)],
        rate_group: "sonnet-4",
        // Sonnet 4.5 page: "deprecated … and retires on November 30, 2026. Recommended
        // replacement: Claude Sonnet 5.5."
        deprecated_on: Some((2026, 9, 30)),
        retires_on: Some((2026, 11, 30)),
        source: "platform.claude.com/docs/en/models/sonnet-4-5/overview",
        ..GEN5
    },
    retired(
        "claude-opus-4-1-20250805",
        &["claude-opus-4-1"],
        (2026, 8, 5),
    ),
    retired(
        "claude-opus-4-20250514",
        &["claude-opus-4-0"],
        (2026, 6, 15),
    ),
    retired(
        "claude-sonnet-4-20250514",
        &["claude-sonnet-4-0"],
        (2026, 6, 15),
    ),
    retired(
        "claude-3-7-sonnet-20250219",
        &["claude-3-7-sonnet-latest"],
        (2026, 2, 19),
    ),
    retired(
        "claude-3-5-haiku-20241022",
        &["claude-3-5-haiku-latest"],
        (2026, 2, 19),
    ),
    retired("claude-3-haiku-20240307", &[], (2026, 4, 20)),
];

/// A retired model: known, so that it is refused with its retirement date rather than as a
/// typo (DEPRECATIONS, as transcribed on 2026-08-05).
const fn retired(id: &'static str, aliases: &'static [&'static str], on: (i32, u32, u32)) -> Model {
    Model {
        id,
        aliases,
        display_name: id,
        context_window: 200_000,
        max_output: 4_096,
        max_output_batch: 4_096,
        min_cacheable: 1_024,
        tokenizer_permille: 1_000,
        sampling: Sampling::Any,
        thinking: BUDGET_ONLY_OFF,
        prefill: true,
        efforts: &[],
        default_effort: None,
        structured_outputs: false,
        rate_group: "retired",
        retires_on: Some(on),
        source: "platform.claude.com/docs/en/about-claude/model-deprecations",
        ..GEN5
    }
}

/// A catalog day as `YYYY-MM-DD`.
pub fn day_text((y, m, d): (i32, u32, u32)) -> String {
    format!("{y:04}-{m:02}-{d:02}")
}

/// Epoch ms of the start of a UTC day.
fn day_ms((y, m, d): (i32, u32, u32)) -> i64 {
    date_ms(y, m, d).expect("the catalog's dates are real days")
}

impl Model {
    /// Whether `id` names this model: its id or one of its aliases.
    pub fn is_named(&self, id: &str) -> bool {
        self.id == id || self.aliases.contains(&id)
    }

    /// Past its deprecation date at `now_ms` (it may be retired too).
    pub fn is_deprecated(&self, now_ms: i64) -> bool {
        self.deprecated_on.is_some_and(|d| now_ms >= day_ms(d))
    }

    /// Retired at `now_ms`: the API answers 404 and the product refuses the id.
    pub fn is_retired(&self, now_ms: i64) -> bool {
        self.retires_on.is_some_and(|d| now_ms >= day_ms(d))
    }

    /// The price list in force at `at_ms` (the first list before the model launched).
    pub fn price_at(&self, at_ms: i64) -> Option<&'static Price> {
        self.prices
            .iter()
            .rev()
            .find(|p| day_ms(p.from) <= at_ms)
            .or(self.prices.first())
    }

    /// Whether `effort` is accepted.
    pub fn accepts_effort(&self, effort: Effort) -> bool {
        self.efforts.contains(&effort)
    }

    /// The cheapest effort the model accepts (`low` wherever there is an effort parameter).
    pub fn lowest_effort(&self) -> Option<Effort> {
        self.efforts.first().copied()
    }

    /// Output tokens to leave for thinking beyond an answer's own budget: where thinking runs by
    /// default, `max_tokens` covers thinking plus text (S5-MIG: "a hard limit on total output
    /// (thinking plus response text)"), so a small answer budget alone could end in a
    /// thinking-only answer.
    pub fn thinking_room(&self) -> u32 {
        if self.thinking.on_by_default {
            THINKING_ROOM
        } else {
            0
        }
    }
}

/// Thinking tokens allowed for before the answer of a low-effort classification.
pub const THINKING_ROOM: u32 = 2_048;

/// `max_tokens` when the job names none: this much for the answer, plus the model's thinking
/// room where thinking runs by default (it counts against `max_tokens`).
pub const DEFAULT_MAX_TOKENS: u32 = 1024;

/// A model id as a job stores it: an id or alias the catalog knew when the job was admitted —
/// which a later catalog may no longer list, so it is read back as it was written, never
/// refused (a retired model's jobs stay readable).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ModelId(String);

impl ModelId {
    /// The catalog's entry for it, if the catalog knows it.
    pub fn known(&self) -> Option<&'static Model> {
        find(&self.0)
    }
}

reads_as_text!(ModelId);

/// The catalog row of `id` (an id or an alias), retired or not.
pub fn find(id: &str) -> Option<&'static Model> {
    CATALOG.iter().find(|m| m.is_named(id))
}

/// Why a model id is refused at submission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    Unknown,
    Retired { on: (i32, u32, u32) },
}

/// The model a job may use at `now_ms`: known and not retired.
pub fn admit(id: &str, now_ms: i64) -> Result<&'static Model, Refusal> {
    match find(id) {
        None => Err(Refusal::Unknown),
        Some(m) if m.is_retired(now_ms) => Err(Refusal::Retired {
            on: m.retires_on.unwrap_or((1970, 1, 1)),
        }),
        Some(m) => Ok(m),
    }
}

/// The ids a job may name at `now_ms`, for the `unknown_model` error and the SPA's picker.
pub fn valid_ids(now_ms: i64) -> Vec<&'static str> {
    CATALOG
        .iter()
        .filter(|m| !m.is_retired(now_ms))
        .map(|m| m.id)
        .collect()
}

/// The `model` field of a request, checked at submission: absent means [`DEFAULT_MODEL`]; an
/// unknown or retired id is a 400 `unknown_model` that lists the valid ids — never sent.
pub fn parse_model(
    raw: Option<&serde_json::Value>,
    now_ms: i64,
) -> Result<&'static Model, crate::error::ApiError> {
    match raw {
        None | Some(serde_json::Value::Null) => admit_field(DEFAULT_MODEL, "model", now_ms),
        Some(v) => model_field(v, "model", now_ms),
    }
}

/// A request's `fallback_model` (`crate::refusal`): absent, or a current catalog model other
/// than the job's `model` — else a 400 naming the field.
pub fn parse_fallback(
    raw: Option<&serde_json::Value>,
    model: &Model,
    now_ms: i64,
) -> Result<Option<&'static Model>, crate::error::ApiError> {
    let fallback = match raw {
        None | Some(serde_json::Value::Null) => return Ok(None),
        Some(v) => model_field(v, "fallback_model", now_ms)?,
    };
    if fallback.id == model.id {
        return Err(crate::error::ApiError::bad_request(
            "invalid_field",
            format!("fallback_model must be another model than {}", model.id),
            Some("fallback_model"),
        ));
    }
    Ok(Some(fallback))
}

/// A model named in `field`: a string naming a catalog model that is not retired.
fn model_field(
    raw: &serde_json::Value,
    field: &str,
    now_ms: i64,
) -> Result<&'static Model, crate::error::ApiError> {
    match raw {
        serde_json::Value::String(s) => admit_field(s, field, now_ms),
        _ => Err(crate::error::ApiError::bad_request(
            "invalid_field",
            format!("{field} must be a string"),
            Some(field),
        )),
    }
}

/// [`admit`], refused as a 400 `unknown_model` on `field` that lists the valid ids.
fn admit_field(
    id: &str,
    field: &str,
    now_ms: i64,
) -> Result<&'static Model, crate::error::ApiError> {
    let shown: String = id.chars().take(100).collect();
    let why = match admit(id, now_ms) {
        Ok(m) => return Ok(m),
        Err(Refusal::Unknown) => format!("unknown model {shown:?}"),
        Err(Refusal::Retired { on }) => {
            format!("model {shown:?} was retired on {}", day_text(on))
        }
    };
    Err(crate::error::ApiError::bad_request(
        "unknown_model",
        format!(
            "{why}; the valid models are {}",
            valid_ids(now_ms).join(", ")
        ),
        Some(field),
    ))
}

/// Models retired or retiring within this many days are flagged (the provider gives at least
/// 60 days' notice, DEPRECATIONS).
pub const RETIREMENT_WARNING_DAYS: i64 = 60;

/// A warning for the Dashboard about `id` at `now_ms`: unknown, retired, deprecated or
/// retiring soon. `None` for a model in good standing.
pub fn standing(id: &str, now_ms: i64) -> Option<String> {
    let Some(m) = find(id) else {
        return Some(format!(
            "model {id} is not in the catalog: jobs naming it are refused"
        ));
    };
    match m.retires_on {
        Some(on) if m.is_retired(now_ms) => Some(format!(
            "model {id} was retired on {}: every call to it fails",
            day_text(on)
        )),
        Some(on) if day_ms(on) - now_ms <= RETIREMENT_WARNING_DAYS * 86_400_000 => Some(format!(
            "model {id} retires on {} ({} days)",
            day_text(on),
            (day_ms(on) - now_ms).div_euclid(86_400_000)
        )),
        _ => m
            .deprecated_on
            .filter(|d| day_ms(*d) <= now_ms)
            .map(|d| format!("model {id} is deprecated since {}", day_text(d))),
    }
}

/// What a job on `id` is told at `now_ms`: its model is deprecated (with its retirement date and
/// the page that says so). Nothing for a model in good standing.
pub fn job_warnings(id: &str, now_ms: i64) -> Vec<String> {
    find(id)
        .filter(|m| m.is_deprecated(now_ms) && !m.is_retired(now_ms))
        .map(|m| {
            let retires = m
                .retires_on
                .map(|r| format!(" and retires on {}", day_text(r)))
                .unwrap_or_default();
            format!(
                "model {} is deprecated since {}{retires}: move to a current model \
                 (platform.claude.com/docs/en/about-claude/model-deprecations)",
                m.id,
                m.deprecated_on.map(day_text).unwrap_or_default()
            )
        })
        .into_iter()
        .collect()
}

/// The warnings of every distinct model of `ids` at `now_ms` (for the Dashboard: the configured
/// default and fallbacks, and the models jobs used).
pub fn standings<'a>(ids: impl IntoIterator<Item = &'a str>, now_ms: i64) -> Vec<String> {
    let mut seen = Vec::new();
    ids.into_iter()
        .filter(|id| {
            let fresh = !seen.contains(id);
            seen.push(id);
            fresh
        })
        .filter_map(|id| standing(id, now_ms))
        .collect()
}

/// The configured fallback chain at `now_ms`, checked: models the catalog does not admit (unknown
/// or retired) are dropped, each with a sentence saying why, so no job falls back onto a 404.
pub fn checked_chain(chain: &[String], now_ms: i64) -> (Vec<String>, Vec<String>) {
    let mut problems = Vec::new();
    let kept = chain
        .iter()
        .filter(|id| match admit(id, now_ms) {
            Ok(_) => true,
            Err(_) => {
                problems.push(format!(
                    "MODEL_FALLBACKS: {}; it is left out of the chain",
                    standing(id, now_ms).unwrap_or_default()
                ));
                false
            }
        })
        .cloned()
        .collect();
    (kept, problems)
}

#[cfg(test)]
mod tests;
