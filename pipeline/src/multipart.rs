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
mod tests;
