//! A streaming `multipart/form-data` reader (RFC 7578), fed chunk by chunk as the body arrives,
//! so an upload is checked file by file without holding the whole body.
//!
//! It is tolerant where real clients differ: file names are taken as the bytes they are (UTF-8,
//! control characters included — a header parser that rejects them would refuse legitimate
//! uploads), quoted values may use backslash escapes (curl) or the WHATWG percent-encoding of
//! `"`, CR and LF (browsers), and `filename*=UTF-8''…` (RFC 5987) wins when present.

/// One part's headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub name: String,
    pub filename: Option<String>,
    pub content_type: Option<String>,
}

/// What the reader found in the bytes fed so far, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A part begins.
    Part(Part),
    /// Bytes of the current part's body.
    Data(Vec<u8>),
    /// The current part ended.
    End,
}

/// The `boundary` parameter of a `multipart/form-data` content type.
pub fn boundary(content_type: &str) -> Option<String> {
    let (mime, params) = content_type.split_once(';')?;
    if !mime.trim().eq_ignore_ascii_case("multipart/form-data") {
        return None;
    }
    params.split(';').find_map(|p| {
        let (k, v) = p.split_once('=')?;
        if !k.trim().eq_ignore_ascii_case("boundary") {
            return None;
        }
        let v = v.trim().trim_matches('"');
        (!v.is_empty() && v.len() <= 70).then(|| v.to_owned())
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the first boundary.
    Preamble,
    /// Just after a boundary: `--` ends the body, CRLF starts a part.
    AfterBoundary,
    Headers,
    Body,
    Done,
}

/// Longest header block of one part.
const MAX_HEADERS: usize = 16 * 1024;

/// The reader: feed it chunks, read events.
#[derive(Debug, Clone)]
pub struct Reader {
    /// `\r\n--<boundary>`.
    delimiter: Vec<u8>,
    buf: Vec<u8>,
    state: State,
}

impl Reader {
    pub fn new(boundary: &str) -> Reader {
        Reader {
            delimiter: format!("\r\n--{boundary}").into_bytes(),
            // The first boundary has no CRLF before it; pretend it had.
            buf: b"\r\n".to_vec(),
            state: State::Preamble,
        }
    }

    /// Whether the closing boundary was read.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Feeds the next chunk of the body and answers what it completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<Event>, String> {
        if self.state == State::Done {
            return Ok(Vec::new());
        }
        self.buf.extend_from_slice(chunk);
        let mut out = Vec::new();
        loop {
            match self.state {
                State::Done => {
                    self.buf.clear();
                    return Ok(out);
                }
                State::Preamble => match find(&self.buf, &self.delimiter) {
                    Some(i) => {
                        self.buf.drain(..i + self.delimiter.len());
                        self.state = State::AfterBoundary;
                    }
                    None => {
                        let keep = self.delimiter.len() - 1;
                        if self.buf.len() > keep {
                            self.buf.drain(..self.buf.len() - keep);
                        }
                        return Ok(out);
                    }
                },
                State::AfterBoundary => {
                    // Transport padding (spaces, tabs) may follow a boundary.
                    let pad = self
                        .buf
                        .iter()
                        .take_while(|b| **b == b' ' || **b == b'\t')
                        .count();
                    let rest = &self.buf[pad..];
                    if rest.len() < 2 {
                        return Ok(out);
                    }
                    if rest.starts_with(b"--") {
                        self.state = State::Done;
                    } else if rest.starts_with(b"\r\n") {
                        self.buf.drain(..pad + 2);
                        self.state = State::Headers;
                    } else {
                        return Err("a boundary is followed by neither CRLF nor --".into());
                    }
                }
                State::Headers => match find(&self.buf, b"\r\n\r\n") {
                    Some(i) => {
                        let part = headers(&self.buf[..i])?;
                        self.buf.drain(..i + 4);
                        out.push(Event::Part(part));
                        self.state = State::Body;
                    }
                    None if self.buf.len() > MAX_HEADERS => {
                        return Err("a part's headers are too large".into())
                    }
                    None => return Ok(out),
                },
                State::Body => match find(&self.buf, &self.delimiter) {
                    Some(i) => {
                        if i > 0 {
                            out.push(Event::Data(self.buf[..i].to_vec()));
                        }
                        out.push(Event::End);
                        self.buf.drain(..i + self.delimiter.len());
                        self.state = State::AfterBoundary;
                    }
                    None => {
                        // Everything but a tail that could be the start of the delimiter.
                        let safe = self.buf.len().saturating_sub(self.delimiter.len() - 1);
                        if safe > 0 {
                            out.push(Event::Data(self.buf[..safe].to_vec()));
                            self.buf.drain(..safe);
                        }
                        return Ok(out);
                    }
                },
            }
        }
    }

    /// The body ended: it must have ended with the closing boundary.
    pub fn finish(&self) -> Result<(), String> {
        if self.state == State::Done {
            Ok(())
        } else {
            Err("the body ended before the closing boundary".into())
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || hay.len() < needle.len() {
        return None;
    }
    let first = needle[0];
    let mut i = 0;
    while i + needle.len() <= hay.len() {
        match hay[i..=hay.len() - needle.len()]
            .iter()
            .position(|b| *b == first)
        {
            None => return None,
            Some(p) => {
                i += p;
                if &hay[i..i + needle.len()] == needle {
                    return Some(i);
                }
                i += 1;
            }
        }
    }
    None
}

/// A part's header block.
fn headers(block: &[u8]) -> Result<Part, String> {
    let text = String::from_utf8_lossy(block);
    let mut part = Part {
        name: String::new(),
        filename: None,
        content_type: None,
    };
    let mut disposition = false;
    for line in text.split("\r\n") {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let k = k.trim();
        if k.eq_ignore_ascii_case("content-disposition") {
            disposition = true;
            let (name, filename) = disposition_params(v);
            part.name = name.unwrap_or_default();
            part.filename = filename;
        } else if k.eq_ignore_ascii_case("content-type") {
            part.content_type = Some(v.trim().to_owned());
        }
    }
    if !disposition {
        return Err("a part has no Content-Disposition header".into());
    }
    Ok(part)
}

/// `form-data; name="…"; filename="…"; filename*=UTF-8''…` → (name, filename).
fn disposition_params(v: &str) -> (Option<String>, Option<String>) {
    let (mut name, mut filename, mut extended) = (None, None, None);
    let mut rest = v;
    // Skip the disposition type.
    match rest.find(';') {
        Some(i) => rest = &rest[i + 1..],
        None => return (None, None),
    }
    loop {
        rest = rest.trim_start_matches([' ', '\t', ';']);
        let Some(eq) = rest.find('=') else { break };
        let key = rest[..eq].trim().to_ascii_lowercase();
        rest = &rest[eq + 1..];
        let value;
        if let Some(quoted) = rest.strip_prefix('"') {
            let mut out = String::new();
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, next)) = chars.next() {
                            out.push(next);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => out.push(c),
                }
            }
            value = out;
            rest = &quoted[end.min(quoted.len())..];
        } else {
            let end = rest.find(';').unwrap_or(rest.len());
            value = rest[..end].trim().to_owned();
            rest = &rest[end..];
        }
        match key.as_str() {
            "name" => name = Some(value),
            "filename" => filename = Some(whatwg_decode(&value)),
            "filename*" => extended = rfc5987(&value),
            _ => {}
        }
    }
    (name, extended.or(filename))
}

/// Browsers encode `"`, CR and LF in names as `%22`, `%0D`, `%0A`; nothing else.
fn whatwg_decode(s: &str) -> String {
    s.replace("%22", "\"")
        .replace("%0D", "\r")
        .replace("%0A", "\n")
}

/// `UTF-8''percent%20encoded` → the text.
fn rfc5987(v: &str) -> Option<String> {
    let (charset, rest) = v.split_once('\'')?;
    let (_, encoded) = rest.split_once('\'')?;
    if !charset.eq_ignore_ascii_case("utf-8") {
        return None;
    }
    let bytes = encoded.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Reads a whole body fed in chunks of `size`, into (part, bytes) pairs.
    fn read(body: &[u8], boundary: &str, size: usize) -> Result<Vec<(Part, Vec<u8>)>, String> {
        let mut r = Reader::new(boundary);
        let mut parts: Vec<(Part, Vec<u8>)> = Vec::new();
        for chunk in body.chunks(size.max(1)) {
            for e in r.feed(chunk)? {
                match e {
                    Event::Part(p) => parts.push((p, Vec::new())),
                    Event::Data(d) => parts.last_mut().unwrap().1.extend(d),
                    Event::End => {}
                }
            }
        }
        r.finish()?;
        Ok(parts)
    }

    fn encode(boundary: &str, parts: &[(&str, Option<&str>, &[u8])]) -> Vec<u8> {
        let mut b = b"preamble to ignore\r\n".to_vec();
        for (name, filename, data) in parts {
            b.extend(format!("--{boundary}\r\n").bytes());
            match filename {
                Some(f) => b.extend(
                    format!("Content-Disposition: form-data; name=\"{name}\"; filename=\"{f}\"\r\nContent-Type: application/pdf\r\n\r\n").bytes(),
                ),
                None => b.extend(format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n").bytes()),
            }
            b.extend_from_slice(data);
            b.extend(b"\r\n");
        }
        b.extend(format!("--{boundary}--\r\nepilogue").bytes());
        b
    }

    #[test]
    fn the_boundary_is_read_from_the_content_type() {
        assert_eq!(
            boundary("multipart/form-data; boundary=----x1").as_deref(),
            Some("----x1")
        );
        assert_eq!(
            boundary("multipart/form-data; charset=utf-8; boundary=\"a b\"").as_deref(),
            Some("a b")
        );
        assert_eq!(
            boundary("Multipart/Form-Data; Boundary=AbC").as_deref(),
            Some("AbC"),
            "the boundary keeps its case"
        );
        assert_eq!(boundary("application/json"), None);
        assert_eq!(boundary("multipart/form-data"), None);
    }

    #[test]
    fn files_and_fields_are_read_whatever_the_chunking() {
        let body = encode(
            "XyZ",
            &[
                ("files", Some("a.pdf"), b"%PDF-1.7 one"),
                (
                    "files",
                    Some("b.pdf"),
                    b"%PDF-1.7 two\r\n--XyW almost the boundary",
                ),
                ("mode", None, b"sync"),
            ],
        );
        for size in [1, 2, 3, 7, 64, 10_000] {
            let parts = read(&body, "XyZ", size).unwrap();
            assert_eq!(parts.len(), 3, "chunks of {size}");
            assert_eq!(parts[0].0.filename.as_deref(), Some("a.pdf"));
            assert_eq!(parts[1].1, b"%PDF-1.7 two\r\n--XyW almost the boundary");
            assert_eq!(parts[2].0.name, "mode");
            assert_eq!(parts[2].1, b"sync");
        }
    }

    #[test]
    fn control_characters_escapes_and_encoded_names_are_kept() {
        let body = b"--b\r\nContent-Disposition: form-data; name=\"files\"; filename=\"bad\x1b[31mname\x07.pdf\"\r\n\r\nx\r\n\
--b\r\nContent-Disposition: form-data; name=\"files\"; filename=\"say \\\"hi\\\".pdf\"\r\n\r\ny\r\n\
--b\r\nContent-Disposition: form-data; name=\"files\"; filename=\"a%22b%0A.pdf\"\r\n\r\nz\r\n\
--b\r\nContent-Disposition: form-data; name=\"files\"; filename=\"fallback.pdf\"; filename*=UTF-8''%C3%A9t%C3%A9.pdf\r\n\r\nw\r\n--b--";
        let parts = read(body, "b", 5).unwrap();
        let names: Vec<_> = parts
            .iter()
            .map(|(p, _)| p.filename.clone().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "bad\u{1b}[31mname\u{7}.pdf",
                "say \"hi\".pdf",
                "a\"b\n.pdf",
                "été.pdf"
            ]
        );
    }

    #[test]
    fn a_truncated_or_malformed_body_is_an_error() {
        let body = encode("b", &[("files", Some("a.pdf"), b"%PDF-")]);
        assert!(read(&body[..body.len() - 15], "b", 4).is_err());
        assert!(read(b"--b\r\nno disposition\r\n\r\nx\r\n--b--", "b", 4).is_err());
        assert!(read(b"--bXX", "b", 4).is_err());
        assert!(read(b"nothing at all", "b", 4).is_err());
    }

    proptest! {
        #[test]
        fn whatever_the_data_and_the_chunks_every_part_comes_back_intact(
            datas in proptest::collection::vec(proptest::collection::vec(prop_oneof![Just(b'\r'), Just(b'\n'), Just(b'-'), Just(b'q'), any::<u8>()], 0..200), 1..5),
            size in 1usize..50,
        ) {
            let boundary = "q-q";
            let parts: Vec<(&str, Option<&str>, &[u8])> = datas.iter().map(|d| ("files", Some("f.pdf"), d.as_slice())).collect();
            let body = encode(boundary, &parts);
            // Data that happens to contain the delimiter cannot be framed; such cases are skipped.
            prop_assume!(!datas.iter().any(|d| find(&[b"\r\n".as_slice(), d].concat(), b"\r\n--q-q").is_some() || d.windows(5).any(|w| w == b"--q-q")));
            let got = read(&body, boundary, size).unwrap();
            prop_assert_eq!(got.len(), datas.len());
            for ((_, bytes), want) in got.iter().zip(&datas) {
                prop_assert_eq!(bytes, want);
            }
        }
    }
}
