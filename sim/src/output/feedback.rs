//! The feedback-analysis heuristics of the simulated model: word lists for sentiment, urgency
//! and category, and the JSON analysis derived from them.

use serde_json::json;

const POSITIVE: &[&str] = &[
    "love",
    "great",
    "thanks",
    "thank you",
    "awesome",
    "excellent",
    "helpful",
    "easy",
    "fast",
    "nice",
    "amazing",
    "perfect",
    "good",
];
const NEGATIVE: &[&str] = &[
    "broken",
    "bug",
    "crash",
    "slow",
    "hate",
    "terrible",
    "error",
    "stopped working",
    "fail",
    "can't",
    "cannot",
    "doesn't",
    "not working",
    "frustrat",
    "annoying",
    "refund",
    "worst",
    "bad",
    "confusing",
    "missing",
];
const URGENT: &[&str] = &[
    "urgent",
    "asap",
    "immediately",
    "outage",
    "is down",
    "data loss",
    "security",
    "can't log in",
    "cannot log in",
    "blocked",
    "lost all",
];
const CATEGORIES: &[(&str, &[&str])] = &[
    (
        "bug",
        &[
            "bug",
            "crash",
            "broken",
            "stopped working",
            "error",
            "doesn't work",
            "not working",
            "fails",
            "failed",
        ],
    ),
    (
        "billing",
        &[
            "charge",
            "invoice",
            "refund",
            "billing",
            "price",
            "payment",
            "subscription",
        ],
    ),
    (
        "performance",
        &[
            "slow",
            "lag",
            "latency",
            "timeout",
            "loading",
            "takes forever",
        ],
    ),
    (
        "feature_request",
        &[
            "would be nice",
            "please add",
            "feature",
            "wish",
            "could you add",
            "support for",
            "it would be great",
        ],
    ),
    (
        "ux",
        &[
            "confusing",
            "hard to find",
            "design",
            "layout",
            "dark mode",
            "button",
            "navigation",
        ],
    ),
    (
        "praise",
        &[
            "love",
            "great",
            "awesome",
            "thanks",
            "thank you",
            "excellent",
        ],
    ),
];

/// A JSON analysis derived from the feedback text.
pub(super) fn feedback_analysis(text: &str) -> String {
    let lower = text.to_lowercase();
    let count = |words: &[&str]| words.iter().filter(|w| lower.contains(*w)).count();
    let (pos, neg) = (count(POSITIVE), count(NEGATIVE));
    let sentiment = match (pos, neg) {
        (p, n) if p > 0 && n > 0 && p == n => "mixed",
        (p, n) if p > n => "positive",
        (p, n) if n > p => "negative",
        _ => "neutral",
    };
    let category = CATEGORIES
        .iter()
        .find(|(_, words)| count(words) > 0)
        .map_or("other", |(c, _)| *c);
    let urgency = if count(URGENT) > 0 {
        "high"
    } else if matches!(category, "bug" | "billing" | "performance") && sentiment == "negative" {
        "medium"
    } else {
        "low"
    };
    let first = text
        .split(['.', '!', '?', '\n'])
        .map(str::trim)
        .find(|s| !s.is_empty())
        .unwrap_or("No content");
    let summary: String = first.chars().take(120).collect();
    json!({
        "sentiment": sentiment,
        "category": category,
        "urgency": urgency,
        "summary": summary,
    })
    .to_string()
}
