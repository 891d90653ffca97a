//! Prompt-cache breakpoints of the requests of one Message Batch.
//!
//! The batch-processing guide: "Since batches can take longer than 5 minutes to process,
//! consider using the 1-hour cache duration with prompt caching for better cache hit rates when
//! processing batches with shared context"
//! (<https://docs.anthropic.com/en/docs/build-with-claude/batch-processing>). A 1-hour write
//! costs 2× the input price (a 5-minute one 1.25×), reads 0.1× (the pricing page,
//! <https://docs.anthropic.com/en/docs/about-claude/pricing>, "Prompt caching"). So a breakpoint
//! pays off in a batch only when another request of it reads the same prefix: such shared
//! breakpoints get the 1-hour lifetime; one whose prefix no other request shares would be a
//! write nobody reads, so on the requests the product built itself (a PDF's document, a
//! feedback's instructions) it is dropped. A caller's own prompt keeps every breakpoint it
//! sent, at 1 hour: what it caches is the caller's choice.

use serde_json::Value;

use crate::anthropic::BatchRequest;

/// Sets the breakpoints of a batch's requests as above, in place. `ours[i]` says whether
/// request `i` was built by the product (its unshared breakpoints may go).
pub fn shared_breakpoints(requests: &mut [BatchRequest], ours: &[bool]) {
    // One request's JSON tree at a time (a flush may carry 32 MB of requests: their trees all
    // at once would hold it twice more): first every breakpoint's prefix hash, then the edits.
    let found: Vec<Vec<(String, u64)>> = requests
        .iter()
        .map(|r| breakpoints(&serde_json::to_value(&r.params).unwrap_or(Value::Null)))
        .collect();
    let mut count = std::collections::HashMap::<u64, usize>::new();
    for h in found.iter().flatten().map(|(_, h)| *h) {
        *count.entry(h).or_default() += 1;
    }
    for (i, (r, points)) in requests.iter_mut().zip(&found).enumerate() {
        if points.is_empty() {
            continue;
        }
        let mut v = serde_json::to_value(&r.params).unwrap_or(Value::Null);
        for (pointer, h) in points {
            let shared = count.get(h).copied().unwrap_or(0) >= 2;
            let Some(block) = v.pointer_mut(pointer).and_then(Value::as_object_mut) else {
                continue;
            };
            if shared || !ours.get(i).copied().unwrap_or(false) {
                if let Some(c) = block
                    .get_mut("cache_control")
                    .and_then(Value::as_object_mut)
                {
                    c.insert("ttl".into(), Value::String("1h".into()));
                }
            } else {
                block.remove("cache_control");
            }
        }
        // The same request, re-read from its JSON; every breakpoint at 1 hour if that failed.
        r.params =
            serde_json::from_value(v).unwrap_or_else(|_| r.params.clone().with_one_hour_cache());
    }
}

/// Every breakpoint of a request, in the API's prefix order (tools, system, messages): its
/// JSON pointer, and a hash of the model and of everything up to and including it (the
/// breakpoints themselves left out), which two requests share exactly when their prefixes match.
fn breakpoints(v: &Value) -> Vec<(String, u64)> {
    // (pointer, item): the pointer is empty where no breakpoint can sit (a role, a string).
    let mut items: Vec<(String, &Value)> = Vec::new();
    if let Some(tools) = v.get("tools").and_then(Value::as_array) {
        items.extend(indexed("/tools", tools));
    }
    match v.get("system") {
        Some(Value::Array(blocks)) => items.extend(indexed("/system", blocks)),
        Some(s @ Value::String(_)) => items.push((String::new(), s)),
        _ => {}
    }
    for (m, msg) in v
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        if let Some(role) = msg.get("role") {
            items.push((String::new(), role));
        }
        match msg.get("content") {
            Some(Value::Array(blocks)) => {
                items.extend(indexed(&format!("/messages/{m}/content"), blocks))
            }
            Some(c) => items.push((String::new(), c)),
            None => {}
        }
    }
    let model = v.get("model").and_then(Value::as_str).unwrap_or_default();
    let mut h = fnv(0xcbf2_9ce4_8422_2325, model.as_bytes());
    let mut out = Vec::new();
    for (pointer, item) in items {
        let marked = item.get("cache_control").is_some();
        let text = match item.as_object() {
            Some(o) if marked => {
                let mut bare = o.clone();
                bare.remove("cache_control");
                Value::Object(bare).to_string()
            }
            _ => item.to_string(),
        };
        h = fnv(h, text.as_bytes());
        if marked && !pointer.is_empty() {
            out.push((pointer, h));
        }
    }
    out
}

/// The items of a JSON array with their pointers under `at`.
fn indexed<'a>(at: &str, list: &'a [Value]) -> impl Iterator<Item = (String, &'a Value)> {
    let at = at.to_owned();
    list.iter()
        .enumerate()
        .map(move |(i, b)| (format!("{at}/{i}"), b))
}

/// FNV-1a over `bytes`, continuing from `h`.
fn fnv(h: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(h, |h, b| (h ^ *b as u64).wrapping_mul(0x0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anthropic::{CacheControl, Content, InputBlock, InputMessage, MessagesRequest};
    use crate::pdf::{self, Template};

    /// The requests as one batch carries them, as JSON.
    fn shared(params: Vec<MessagesRequest>, ours: &[bool]) -> Vec<Value> {
        let mut batch: Vec<BatchRequest> = params
            .into_iter()
            .enumerate()
            .map(|(i, params)| BatchRequest {
                custom_id: format!("r{i}"),
                params,
            })
            .collect();
        shared_breakpoints(&mut batch, ours);
        batch
            .iter()
            .map(|r| serde_json::to_value(&r.params).unwrap())
            .collect()
    }

    fn ttl(v: &Value, pointer: &str) -> Option<String> {
        v.pointer(pointer)
            .and_then(|b| b.get("cache_control"))
            .map(|c| c["ttl"].as_str().unwrap_or("5m").to_owned())
    }

    #[test]
    fn a_prefix_two_requests_share_lives_an_hour_and_a_lone_one_goes() {
        let model = "claude-sonnet-5-5";
        let a = pdf::request_for_file(model, Template::Summary, "file_a".into());
        let b = pdf::request_for_file(model, Template::Summary, "file_b".into());
        let a_again = pdf::request_for_file(model, Template::Brief, "file_a".into());
        let v = shared(vec![a, b, a_again], &[true, true, true]);
        // The instructions are the same in all three: shared.
        for r in &v {
            assert_eq!(ttl(r, "/system/0").as_deref(), Some("1h"), "{r}");
        }
        // File a is read by two requests (two templates): shared; file b by one: dropped.
        assert_eq!(ttl(&v[0], "/messages/0/content/0").as_deref(), Some("1h"));
        assert_eq!(ttl(&v[2], "/messages/0/content/0").as_deref(), Some("1h"));
        assert_eq!(ttl(&v[1], "/messages/0/content/0"), None, "{}", v[1]);
        // Everything else is as it was.
        assert_eq!(
            v[1]["messages"][0]["content"][0]["source"]["file_id"],
            "file_b"
        );
    }

    #[test]
    fn a_callers_breakpoints_stay_and_other_models_do_not_share() {
        let block = |t: &str| InputBlock::text(t, Some(CacheControl::ephemeral()));
        let req = |model: &str, text: &str| {
            MessagesRequest::new(
                model,
                100,
                vec![InputMessage::user(Content::Blocks(vec![block(text)]))],
            )
        };
        let v = shared(
            vec![
                req("claude-sonnet-5-5", "same"),
                req("claude-haiku-4-5", "same"),
                req("claude-sonnet-5-5", "mine alone"),
            ],
            &[true, true, false],
        );
        // The same text for two models is two prefixes: both unshared, both ours: dropped.
        assert_eq!(ttl(&v[0], "/messages/0/content/0"), None);
        assert_eq!(ttl(&v[1], "/messages/0/content/0"), None);
        // A caller's breakpoint stays, at an hour.
        assert_eq!(ttl(&v[2], "/messages/0/content/0").as_deref(), Some("1h"));
    }
}
