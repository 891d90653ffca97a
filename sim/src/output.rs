//! Deterministic, plausible model output: the same request always gets the same answer.
//!
//! - feedback-analysis prompts (the feedback inside `<feedback>…</feedback>`) get a JSON analysis
//!   derived from the text — sometimes wrapped in code fences or followed by commentary, at the
//!   configured rates, so that the pipeline's repair path is exercised;
//! - documents get a summary that mentions the page count (JSON when the prompt asks for JSON);
//! - anything else gets a short answer.

use pipeline::anthropic::{Role, StopReason};
use pipeline::tokens;
use serde_json::json;

use crate::config::Knobs;
use crate::request::{fnv, Parsed};

/// What the simulated model says.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub text: String,
    pub output_tokens: u32,
    pub stop_reason: StopReason,
}

pub fn answer(req: &Parsed, knobs: &Knobs) -> Answer {
    let last_user = req
        .turns
        .iter()
        .rev()
        .find(|(r, _)| *r == Role::User)
        .map(|(_, t)| t.as_str())
        .unwrap_or_default();
    let prompt = format!("{}\n{}", req.system, last_user);
    let full = if !req.documents.is_empty() {
        let text = document_answer(req, &prompt);
        if prompt.to_ascii_lowercase().contains("json") {
            untidy(text, &prompt, knobs)
        } else {
            text
        }
    } else if let Some(feedback) = between(last_user, "<feedback>", "</feedback>") {
        untidy(feedback_analysis(feedback), feedback, knobs)
    } else {
        let topic: Vec<&str> = last_user.split_whitespace().take(8).collect();
        format!(
            "Here is a short answer about \"{}\": the simulator read {} characters in {} \
             message(s) and would answer them thoughtfully.",
            topic.join(" "),
            last_user.chars().count(),
            req.turns.len()
        )
    };
    truncate(full, req.max_tokens)
}

fn between<'a>(s: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = s.find(open)? + open.len();
    let end = s[start..].find(close)? + start;
    Some(s[start..end].trim())
}

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
fn feedback_analysis(text: &str) -> String {
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

/// A summary of the documents, in prose or (when asked) as a JSON extraction.
fn document_answer(req: &Parsed, prompt: &str) -> String {
    let pages: u32 = req.documents.iter().map(|d| d.pages).sum();
    let title = req
        .documents
        .iter()
        .find_map(|d| d.title.clone())
        .unwrap_or_else(|| "Untitled document".into());
    let plural = if pages == 1 { "" } else { "s" };
    let summary = format!(
        "A {pages}-page document titled \"{title}\"; the simulator summarizes it without reading \
         its text."
    );
    if prompt.to_ascii_lowercase().contains("json") {
        json!({
            "title": title,
            "summary": summary,
            "page_count": pages,
            "key_points": [
                format!("The document has {pages} page{plural}."),
                "Its main topic is stated on the first page.",
                "It ends with a conclusion or next steps.",
            ],
            "entities": [],
        })
        .to_string()
    } else {
        format!("This {pages}-page document, \"{title}\", covers its subject in {pages} page{plural}. {summary}")
    }
}

/// Sometimes wraps JSON in fences and/or adds commentary, decided by a hash of the input and the
/// seed so the same request is untidy the same way every time.
fn untidy(json: String, input: &str, knobs: &Knobs) -> String {
    let h = fnv(input.as_bytes()) ^ knobs.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let unit = |salt: u64| ((h.rotate_left(salt as u32) ^ salt) % 10_000) as f64 / 10_000.0;
    let mut out = if unit(17) < knobs.fence_rate {
        format!("```json\n{json}\n```")
    } else {
        json
    };
    if unit(41) < knobs.commentary_rate {
        out.push_str("\n\nLet me know if you would like a more detailed breakdown.");
    }
    out
}

/// Cuts the text to `max_tokens` (stop_reason `max_tokens`) or keeps it whole (`end_turn`).
fn truncate(full: String, max_tokens: u32) -> Answer {
    let needed = tokens::estimate(&full);
    if needed <= max_tokens {
        return Answer {
            text: full,
            output_tokens: needed,
            stop_reason: StopReason::EndTurn,
        };
    }
    // 3.5 characters per token, as `tokens::estimate` assumes.
    let keep = (max_tokens as usize * 7) / 2;
    Answer {
        text: full.chars().take(keep).collect(),
        output_tokens: max_tokens,
        stop_reason: StopReason::MaxTokens,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pdf::PdfInfo;

    fn req(text: &str, max_tokens: u32) -> Parsed {
        Parsed {
            model: "claude-sonnet-4-5".into(),
            max_tokens,
            system: String::new(),
            turns: vec![(Role::User, text.into())],
            documents: vec![],
            input_tokens: 10,
            cache: None,
            markers: vec![],
            prompt_hash: 0,
        }
    }

    fn tidy() -> Knobs {
        Knobs {
            fence_rate: 0.0,
            commentary_rate: 0.0,
            ..Knobs::default()
        }
    }

    #[test]
    fn the_same_request_gets_the_same_answer() {
        let k = Knobs::default();
        assert_eq!(
            answer(&req("hello there", 100), &k),
            answer(&req("hello there", 100), &k)
        );
    }

    #[test]
    fn a_small_max_tokens_truncates_and_says_so() {
        let a = answer(&req("tell me everything about queues", 3), &tidy());
        assert_eq!(a.stop_reason, StopReason::MaxTokens);
        assert_eq!(a.output_tokens, 3);
        assert!(tokens::estimate(&a.text) <= 3);
    }

    #[test]
    fn feedback_gets_a_json_analysis_derived_from_the_text() {
        let a = answer(
            &req("Classify: <feedback>The dark mode toggle stopped working after the last update.</feedback>", 500),
            &tidy(),
        );
        let v: serde_json::Value = serde_json::from_str(&a.text).unwrap();
        assert_eq!(v["category"], "bug");
        assert_eq!(v["sentiment"], "negative");
        assert_eq!(v["urgency"], "medium");
        assert_eq!(
            v["summary"],
            "The dark mode toggle stopped working after the last update"
        );
        let praise = answer(
            &req("<feedback>I love the new editor, thanks!</feedback>", 500),
            &tidy(),
        );
        let v: serde_json::Value = serde_json::from_str(&praise.text).unwrap();
        assert_eq!(v["sentiment"], "positive");
    }

    #[test]
    fn untidy_json_appears_at_the_configured_rates() {
        let always = Knobs {
            fence_rate: 1.0,
            commentary_rate: 1.0,
            ..Knobs::default()
        };
        let a = answer(
            &req("<feedback>Slow export, please fix ASAP</feedback>", 500),
            &always,
        );
        assert!(a.text.starts_with("```json\n"));
        assert!(a.text.contains("```\n\nLet me know"));
        let half = Knobs {
            fence_rate: 0.5,
            commentary_rate: 0.0,
            ..Knobs::default()
        };
        let fenced = (0..400)
            .filter(|i| {
                answer(
                    &req(&format!("<feedback>item {i} is broken</feedback>"), 500),
                    &half,
                )
                .text
                .starts_with("```")
            })
            .count();
        assert!(
            (140..=260).contains(&fenced),
            "{fenced} of 400 fenced at rate 0.5"
        );
    }

    #[test]
    fn documents_get_a_summary_with_the_page_count() {
        let mut r = req("Summarize this document.", 500);
        r.documents = vec![PdfInfo {
            pages: 7,
            title: Some("Plan".into()),
        }];
        let a = answer(&r, &tidy());
        assert!(a.text.contains("7-page"), "{}", a.text);
        r.turns[0].1 = "Extract as JSON.".into();
        let v: serde_json::Value = serde_json::from_str(&answer(&r, &tidy()).text).unwrap();
        assert_eq!(v["page_count"], 7);
        assert_eq!(v["title"], "Plan");
    }
}
