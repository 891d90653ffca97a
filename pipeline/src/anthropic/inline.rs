//! A PDF sent inline (as base64, where the Files API is off or failed) without holding it in
//! the Worker's linear memory, which never shrinks: the request is built with a reference to the
//! R2 object in place of the document's data ([`reference`]), serialized once, and its body is
//! then assembled in JS memory — the JSON around the reference ([`split`]), and between its two
//! halves the base64 of the object, encoded chunk by chunk as the object streams in
//! ([`Base64Chunks`]). A 20 MB PDF then costs the Worker a chunk at a time instead of its bytes,
//! their base64 and the JSON holding that base64 (≈ 73 MB that the isolate would keep for life).
//!
//! Only the reference the product itself put in a request it built is ever expanded, and only in
//! that request's own JSON: a caller's prompt that quotes a reference is sent as the text it is.

use base64::Engine;

/// What stands in a document's `data` until the body is assembled.
const PREFIX: &str = "claude-pipeline-inline:";

/// The stand-in for the base64 of the R2 object at `key`. Keys are the product's own
/// (`uploads/<id>/<id>.pdf`): letters, digits and `/._-`, which JSON carries unescaped.
pub fn reference(key: &str) -> String {
    debug_assert!(key
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/._-".contains(&b)));
    format!("{PREFIX}{key}")
}

/// A request's JSON cut at the one reference to `key` in it: (before, after). `None` when the
/// reference is not there exactly once (then nothing may be expanded).
pub fn split<'a>(json: &'a str, key: &str) -> Option<(&'a str, &'a str)> {
    let quoted = format!("\"{}\"", reference(key));
    let at = json.find(&quoted)?;
    if json[at + quoted.len()..].contains(&quoted) {
        return None;
    }
    // The quotes stay with the JSON; the base64 goes between them.
    Some((&json[..=at], &json[at + quoted.len() - 1..]))
}

/// The length of the base64 of `bytes` bytes (padded).
pub fn base64_len(bytes: u64) -> u64 {
    bytes.div_ceil(3) * 4
}

/// The length of a request's JSON of `json_len` bytes once its reference to an object of
/// `bytes` bytes is expanded (for the byte limits of a request and of a Message Batch).
pub fn expanded_len(json_len: u64, key: &str, bytes: u64) -> u64 {
    (json_len + base64_len(bytes)).saturating_sub(reference(key).len() as u64)
}

/// Standard base64 of a stream, chunk by chunk: whole groups of three bytes as they arrive, the
/// rest carried to the next chunk, the padding at the end — the same text as the whole at once.
#[derive(Debug, Default)]
pub struct Base64Chunks {
    carry: Vec<u8>,
}

impl Base64Chunks {
    /// The base64 of what the chunk completes.
    pub fn feed(&mut self, chunk: &[u8]) -> String {
        let mut out = String::new();
        let mut rest = chunk;
        if !self.carry.is_empty() {
            let want = (3 - self.carry.len()).min(rest.len());
            self.carry.extend_from_slice(&rest[..want]);
            rest = &rest[want..];
            if self.carry.len() < 3 {
                return out;
            }
            STANDARD.encode_string(&self.carry, &mut out);
            self.carry.clear();
        }
        let whole = rest.len() / 3 * 3;
        STANDARD.encode_string(&rest[..whole], &mut out);
        self.carry.extend_from_slice(&rest[whole..]);
        out
    }

    /// The last bytes, padded.
    pub fn finish(self) -> String {
        STANDARD.encode(&self.carry)
    }
}

const STANDARD: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn base64_in_any_chunks_is_the_base64_of_the_whole(
            bytes in prop::collection::vec(any::<u8>(), 0..400),
            cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..20),
        ) {
            let mut cuts: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
            cuts.sort_unstable();
            let mut enc = Base64Chunks::default();
            let (mut text, mut from) = (String::new(), 0);
            for cut in cuts.into_iter().chain([bytes.len()]) {
                text.push_str(&enc.feed(&bytes[from..cut]));
                from = cut;
            }
            text.push_str(&enc.finish());
            prop_assert_eq!(text.len() as u64, base64_len(bytes.len() as u64));
            prop_assert_eq!(text, STANDARD.encode(&bytes));
        }
    }

    #[test]
    fn a_request_is_cut_at_its_own_reference_and_the_base64_goes_between_the_quotes() {
        let key = "uploads/u1/j1.pdf";
        let json = format!(
            r#"{{"source":{{"data":"{}","type":"base64"}}}}"#,
            reference(key)
        );
        let (before, after) = split(&json, key).unwrap();
        assert_eq!(
            format!("{before}QUJD{after}"),
            r#"{"source":{"data":"QUJD","type":"base64"}}"#
        );
        assert_eq!(
            expanded_len(json.len() as u64, key, 3),
            format!("{before}QUJD{after}").len() as u64
        );
    }

    #[test]
    fn a_reference_that_is_not_the_jobs_own_or_not_alone_is_never_expanded() {
        let key = "uploads/u1/j1.pdf";
        let other = format!(r#"{{"text":"{}"}}"#, reference("uploads/u2/j2.pdf"));
        assert_eq!(split(&other, key), None);
        let twice = format!(r#"["{r}","{r}"]"#, r = reference(key));
        assert_eq!(split(&twice, key), None);
        // Inside a longer string (a caller quoting it) it is no data field of ours.
        let quoted = format!(r#"{{"text":"see {}"}}"#, reference(key));
        assert_eq!(split(&quoted, key), None);
    }
}
