//! Just enough PDF reading for plausible answers: is it a PDF, is it encrypted, how many pages,
//! and its title if the document info names one.

/// What the simulated model "sees" in a PDF.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PdfInfo {
    pub pages: u32,
    pub title: Option<String>,
}

/// Why a PDF cannot be read, with the API's message.
pub fn inspect(bytes: &[u8]) -> Result<PdfInfo, &'static str> {
    if !bytes.starts_with(b"%PDF-") {
        return Err("The PDF specified was not valid.");
    }
    if contains(bytes, b"/Encrypt") {
        return Err("The PDF specified is password protected.");
    }
    let pages = count_pages(bytes);
    Ok(PdfInfo {
        pages: pages.max(1),
        title: title(bytes),
    })
}

/// Counts page objects: `/Type /Page` or `/Type/Page`, but not `/Pages`.
fn count_pages(b: &[u8]) -> u32 {
    let mut n = 0;
    let mut i = 0;
    while let Some(pos) = find_from(b, b"/Type", i) {
        let mut j = pos + 5;
        while j < b.len() && (b[j] == b' ' || b[j] == b'\n' || b[j] == b'\r') {
            j += 1;
        }
        if b[j..].starts_with(b"/Page") && !b[j + 5..].starts_with(b"s") {
            n += 1;
        }
        i = pos + 5;
    }
    n
}

fn title(b: &[u8]) -> Option<String> {
    let pos = find_from(b, b"/Title", 0)?;
    let rest = &b[pos + 6..];
    let open = rest.iter().position(|c| *c == b'(')?;
    if rest[..open].iter().any(|c| !c.is_ascii_whitespace()) {
        return None;
    }
    let close = rest[open..].iter().position(|c| *c == b')')?;
    let t = String::from_utf8_lossy(&rest[open + 1..open + close])
        .trim()
        .to_string();
    (!t.is_empty()).then_some(t)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    find_from(hay, needle, 0).is_some()
}

fn find_from(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    hay.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

/// A small valid PDF with `pages` pages and a title, for tests.
pub fn sample(pages: u32, title: &str) -> Vec<u8> {
    let mut s = format!("%PDF-1.4\n1 0 obj << /Title ({title}) >> endobj\n2 0 obj << /Type /Pages /Count {pages} >> endobj\n");
    for i in 0..pages {
        s.push_str(&format!(
            "{} 0 obj << /Type /Page /Parent 2 0 R >> endobj\n",
            i + 3
        ));
    }
    s.push_str("trailer << /Info 1 0 R >>\n%%EOF\n");
    s.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_and_title_are_read() {
        assert_eq!(
            inspect(&sample(3, "Quarterly report")).unwrap(),
            PdfInfo {
                pages: 3,
                title: Some("Quarterly report".into())
            }
        );
    }

    #[test]
    fn compact_page_objects_count_and_pages_trees_do_not() {
        let pdf = b"%PDF-1.7 <</Type/Pages/Count 2>> <</Type/Page>> <</Type /Page>>";
        assert_eq!(inspect(pdf).unwrap().pages, 2);
    }

    #[test]
    fn not_a_pdf_and_encrypted_pdfs_are_refused() {
        assert!(inspect(b"hello").is_err());
        assert!(inspect(b"%PDF-1.4 trailer << /Encrypt 5 0 R >>")
            .unwrap_err()
            .contains("password"));
    }
}
