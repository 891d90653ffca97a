//! A Message Batch's JSONL results read as they arrive: bytes in (network chunks of any size),
//! whole lines out, with the byte offset after each line so a reader can stop after any line
//! and a later one resume there. Memory is one partial line plus the chunk being read; a line
//! longer than the limit is an error, not an allocation.

/// One whole line and where the next one starts (bytes from the start of the body).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub text: String,
    /// 1-based number of the line in the body.
    pub number: u64,
    pub end_offset: u64,
}

/// A line over the limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineTooLong {
    pub number: u64,
    pub limit: usize,
}

/// Splits a byte stream into lines, starting at `skip` bytes (a resumed read: what comes before
/// was settled already and is dropped as it passes, unbuffered).
#[derive(Debug)]
pub struct LineReader {
    buf: Vec<u8>,
    /// Bytes of the body consumed into lines or dropped so far.
    offset: u64,
    skip: u64,
    number: u64,
    limit: usize,
    /// The most bytes held at once (the memory bound a test can read).
    pub peak: usize,
}

impl LineReader {
    /// `skip` bytes to drop first (which is where a line ended, and `lines_before` lines),
    /// lines of at most `limit` bytes.
    pub fn new(skip: u64, lines_before: u64, limit: usize) -> LineReader {
        LineReader {
            buf: Vec::new(),
            offset: 0,
            skip,
            number: lines_before,
            limit,
            peak: 0,
        }
    }

    /// Feeds a chunk; answers the lines it completed, in order.
    pub fn feed(&mut self, mut chunk: &[u8]) -> Result<Vec<Line>, LineTooLong> {
        if self.skip > self.offset {
            let drop = ((self.skip - self.offset) as usize).min(chunk.len());
            self.offset += drop as u64;
            chunk = &chunk[drop..];
        }
        let mut lines = Vec::new();
        while let Some(nl) = chunk.iter().position(|&b| b == b'\n') {
            let (head, rest) = chunk.split_at(nl + 1);
            self.take(&head[..nl])?;
            self.offset += (self.buf.len() + 1) as u64;
            self.finish_line(&mut lines);
            chunk = rest;
        }
        self.take(chunk)?;
        Ok(lines)
    }

    /// The body ended: the last line, if it had no newline.
    pub fn end(&mut self) -> Option<Line> {
        if self.buf.is_empty() {
            return None;
        }
        self.offset += self.buf.len() as u64;
        let mut lines = Vec::new();
        self.finish_line(&mut lines);
        lines.pop()
    }

    fn take(&mut self, bytes: &[u8]) -> Result<(), LineTooLong> {
        if self.buf.len() + bytes.len() > self.limit {
            return Err(LineTooLong {
                number: self.number + 1,
                limit: self.limit,
            });
        }
        self.buf.extend_from_slice(bytes);
        self.peak = self.peak.max(self.buf.len());
        Ok(())
    }

    fn finish_line(&mut self, out: &mut Vec<Line>) {
        self.number += 1;
        let text = String::from_utf8_lossy(&self.buf).into_owned();
        self.buf.clear();
        if !text.trim().is_empty() {
            out.push(Line {
                text,
                number: self.number,
                end_offset: self.offset,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn read_all(body: &[u8], cuts: &[usize], skip: u64, before: u64) -> Vec<Line> {
        let mut r = LineReader::new(skip, before, 1 << 20);
        let mut out = Vec::new();
        let mut at = 0;
        for &c in cuts {
            let c = c.min(body.len());
            if c > at {
                out.extend(r.feed(&body[at..c]).unwrap());
                at = c;
            }
        }
        out.extend(r.feed(&body[at..]).unwrap());
        out.extend(r.end());
        out
    }

    #[test]
    fn lines_carry_their_numbers_and_where_the_next_begins() {
        let lines = read_all(b"{\"a\":1}\n\n{\"b\":2}\n{\"c\":3}", &[3, 9], 0, 0);
        let got: Vec<_> = lines
            .iter()
            .map(|l| (l.text.as_str(), l.number, l.end_offset))
            .collect();
        assert_eq!(
            got,
            vec![
                ("{\"a\":1}", 1, 8),
                ("{\"b\":2}", 3, 17),
                ("{\"c\":3}", 4, 24)
            ]
        );
    }

    #[test]
    fn a_resumed_read_starts_after_the_offset_it_was_given() {
        let body = b"one\ntwo\nthree\n";
        let all = read_all(body, &[], 0, 0);
        let resumed = read_all(body, &[2, 5], all[0].end_offset, 1);
        assert_eq!(resumed, all[1..].to_vec());
    }

    #[test]
    fn a_line_over_the_limit_is_an_error_naming_it() {
        let mut r = LineReader::new(0, 0, 4);
        assert!(r.feed(b"abc\n").is_ok());
        assert_eq!(
            r.feed(b"abcde").unwrap_err(),
            LineTooLong {
                number: 2,
                limit: 4
            }
        );
    }

    proptest! {
        #[test]
        fn any_chunking_and_any_resume_point_give_the_same_lines(
            lines in proptest::collection::vec("[a-z{}:,\"0-9 ]{0,30}", 0..20),
            cuts in proptest::collection::vec(0usize..400, 0..12),
            resume in 0usize..20,
        ) {
            let body = lines.join("\n");
            let mut cuts = cuts;
            cuts.sort_unstable();
            let whole = read_all(body.as_bytes(), &[], 0, 0);
            prop_assert_eq!(&read_all(body.as_bytes(), &cuts, 0, 0), &whole);
            let expected: Vec<&str> = lines.iter().map(String::as_str).filter(|l| !l.trim().is_empty()).collect();
            let texts: Vec<&str> = whole.iter().map(|l| l.text.as_str()).collect();
            prop_assert_eq!(texts, expected);
            if let Some(at) = whole.get(resume.min(whole.len().saturating_sub(1))) {
                let k = whole.iter().position(|l| l == at).unwrap();
                let again = read_all(body.as_bytes(), &cuts, at.end_offset, at.number);
                prop_assert_eq!(&again[..], &whole[k + 1..]);
            }
        }
    }
}
