//! Fault markers inside a prompt, for deterministic tests. The grammar, exactly:
//!
//! | marker | effect |
//! |---|---|
//! | `[[sim:STATUS]]` | every call answers STATUS (e.g. `[[sim:529]]`, `[[sim:400]]`) |
//! | `[[sim:STATUSxK]]` | the first K calls carrying this prompt answer STATUS, later ones succeed |
//! | `[[sim:STATUS@MODEL]]` | only calls for MODEL answer STATUS |
//! | `[[sim:hang]]` | never answers within any client timeout |
//! | `[[sim:slow=MS]]` | answers after MS milliseconds |
//! | `[[sim:refuse]]` | answers 200 with `stop_reason: "refusal"` and `stop_details` after some output (billed) |
//! | `[[sim:decline]]` | the same, declined before any output: 0 output tokens, not billed |
//! | `[[sim:refuse@MODEL]]`, `[[sim:decline@MODEL]]` | the same, only on calls for MODEL |
//! | `[[sim:think=N]]` | thinks exactly N tokens (where thinking runs), before any text |
//! | `[[sim:block=NAME]]` | adds a content block of type NAME (a type from the future) |
//! | `[[sim:stop=NAME]]` | answers with `stop_reason` NAME |
//! | `[[sim:undecodable]]` | answers 200 with a body that is not a Message (billed) |
//!
//! `xK` and `@MODEL` may be combined (`[[sim:529x2@claude-haiku-4-5]]`). Text that looks like a
//! marker but does not parse is ordinary prompt text.

/// One parsed marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Marker {
    Status {
        status: u16,
        /// Only the first K calls with this prompt fail.
        first: Option<u32>,
        /// Only calls for this model fail.
        model: Option<String>,
    },
    Hang,
    Slow {
        ms: u64,
    },
    /// A refusal after some output; only for this model when it names one.
    Refuse {
        model: Option<String>,
    },
    /// A refusal before any output (not billed).
    Decline {
        model: Option<String>,
    },
    Think {
        tokens: u32,
    },
    Block {
        kind: String,
    },
    Stop {
        reason: String,
    },
    Undecodable,
}

/// Every well-formed marker in `text`, in order.
pub fn find(text: &str) -> Vec<Marker> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("[[sim:") {
        let after = &rest[start + 6..];
        match after.find("]]") {
            Some(end) => {
                if let Some(m) = parse(&after[..end]) {
                    out.push(m);
                }
                rest = &after[end + 2..];
            }
            None => break,
        }
    }
    out
}

fn parse(body: &str) -> Option<Marker> {
    if body == "hang" {
        return Some(Marker::Hang);
    }
    if let Some(ms) = body.strip_prefix("slow=") {
        return ms.parse().ok().map(|ms| Marker::Slow { ms });
    }
    let word = |w: &str| {
        (!w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'))
            .then(|| w.to_owned())
    };
    let (word_part, only) = match body.split_once('@') {
        Some((w, m)) if !m.is_empty() && !m.contains(char::is_whitespace) => (w, Some(m)),
        _ => (body, None),
    };
    match (word_part, only) {
        ("refuse", model) => {
            return Some(Marker::Refuse {
                model: model.map(str::to_owned),
            })
        }
        ("decline", model) => {
            return Some(Marker::Decline {
                model: model.map(str::to_owned),
            })
        }
        ("undecodable", None) => return Some(Marker::Undecodable),
        _ => {}
    }
    if let Some(n) = body.strip_prefix("think=") {
        return n.parse().ok().map(|tokens| Marker::Think { tokens });
    }
    if let Some(kind) = body.strip_prefix("block=") {
        return word(kind).map(|kind| Marker::Block { kind });
    }
    if let Some(reason) = body.strip_prefix("stop=") {
        return word(reason).map(|reason| Marker::Stop { reason });
    }
    let (head, model) = match body.split_once('@') {
        Some((h, m)) if !m.is_empty() && !m.contains(char::is_whitespace) => {
            (h, Some(m.to_owned()))
        }
        Some(_) => return None,
        None => (body, None),
    };
    let (status, first) = match head.split_once('x') {
        Some((s, k)) => (s, Some(k.parse::<u32>().ok().filter(|k| *k > 0)?)),
        None => (head, None),
    };
    if status.len() != 3 || !status.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let status: u16 = status.parse().ok()?;
    if !(400..=599).contains(&status) {
        return None;
    }
    Some(Marker::Status {
        status,
        first,
        model,
    })
}

/// Whether `markers` make a call for `model` refuse: (refused, declined before any output).
pub fn refusal(markers: &[Marker], model: &str) -> (bool, bool) {
    let on = |only: &Option<String>| only.as_deref().is_none_or(|m| m == model);
    let declined = markers
        .iter()
        .any(|m| matches!(m, Marker::Decline { model } if on(model)));
    let refused = declined
        || markers
            .iter()
            .any(|m| matches!(m, Marker::Refuse { model } if on(model)));
    (refused, declined)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(status: u16, first: Option<u32>, model: Option<&str>) -> Marker {
        Marker::Status {
            status,
            first,
            model: model.map(String::from),
        }
    }

    #[test]
    fn every_form_of_the_grammar_parses() {
        assert_eq!(find("a [[sim:529]] b"), vec![status(529, None, None)]);
        assert_eq!(find("[[sim:500x3]]"), vec![status(500, Some(3), None)]);
        assert_eq!(
            find("[[sim:400@claude-haiku-4-5]]"),
            vec![status(400, None, Some("claude-haiku-4-5"))]
        );
        assert_eq!(
            find("[[sim:529x2@claude-x]]"),
            vec![status(529, Some(2), Some("claude-x"))]
        );
        assert_eq!(find("[[sim:hang]]"), vec![Marker::Hang]);
        assert_eq!(find("[[sim:slow=250]]"), vec![Marker::Slow { ms: 250 }]);
        assert_eq!(find("[[sim:refuse]]"), vec![Marker::Refuse { model: None }]);
        assert_eq!(
            find("[[sim:decline]]"),
            vec![Marker::Decline { model: None }]
        );
        assert_eq!(
            find("[[sim:refuse@claude-fable-5-2]]"),
            vec![Marker::Refuse {
                model: Some("claude-fable-5-2".into())
            }]
        );
        assert_eq!(
            find("[[sim:think=900]]"),
            vec![Marker::Think { tokens: 900 }]
        );
        assert_eq!(
            find("[[sim:block=hologram]] [[sim:stop=quantum_pause]]"),
            vec![
                Marker::Block {
                    kind: "hologram".into()
                },
                Marker::Stop {
                    reason: "quantum_pause".into()
                }
            ]
        );
        assert_eq!(find("[[sim:undecodable]]"), vec![Marker::Undecodable]);
    }

    #[test]
    fn malformed_markers_are_plain_text() {
        for t in [
            "[[sim:52]]",
            "[[sim:200]]",
            "[[sim:529x0]]",
            "[[sim:529xK]]",
            "[[sim:529@]]",
            "[[sim:slow=fast]]",
            "[[sim:HANG]]",
            "[[sim:529",
            "[sim:529]",
        ] {
            assert_eq!(find(t), vec![], "{t}");
        }
    }

    #[test]
    fn several_markers_are_found_in_order() {
        assert_eq!(
            find("[[sim:slow=5]] then [[sim:429x1]]"),
            vec![Marker::Slow { ms: 5 }, status(429, Some(1), None)]
        );
    }
}
