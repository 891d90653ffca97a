//! Real, small PDFs made in the tests (with `pdf-writer`): a title in the document info and
//! one line of text per page.

use pdf_writer::{Content, Finish, Name, Pdf, Rect, Ref, Str, TextStr};

/// A PDF of `pages` pages titled `title`.
pub fn make(title: &str, pages: usize) -> Vec<u8> {
    let mut pdf = Pdf::new();
    let catalog = Ref::new(1);
    let tree = Ref::new(2);
    let font = Ref::new(3);
    let info = Ref::new(4);
    let page_ids: Vec<Ref> = (0..pages).map(|i| Ref::new(10 + 2 * i as i32)).collect();
    pdf.catalog(catalog).pages(tree);
    pdf.pages(tree)
        .kids(page_ids.iter().copied())
        .count(pages as i32);
    pdf.type1_font(font).base_font(Name(b"Helvetica"));
    for (i, id) in page_ids.iter().enumerate() {
        let content_id = Ref::new(id.get() + 1);
        let mut page = pdf.page(*id);
        page.media_box(Rect::new(0.0, 0.0, 595.0, 842.0));
        page.parent(tree);
        page.contents(content_id);
        page.resources().fonts().pair(Name(b"F1"), font);
        page.finish();
        let mut c = Content::new();
        c.begin_text();
        c.set_font(Name(b"F1"), 14.0);
        c.next_line(72.0, 760.0);
        let line = format!("{title}, page {} of {pages}", i + 1);
        c.show(Str(line.as_bytes()));
        c.end_text();
        pdf.stream(content_id, &c.finish());
    }
    pdf.document_info(info).title(TextStr(title));
    pdf.finish()
}

/// A PDF of `pages` pages titled `title`, `bytes` long: the rest is an unreferenced stream of
/// pseudo-random (incompressible) bytes, as a scanned document's images are — for the uploads
/// at the size limits.
pub fn padded(title: &str, pages: usize, bytes: usize) -> Vec<u8> {
    let mut pdf = make(title, pages);
    let tail = b"\nendstream\nendobj\n";
    // The stream's length, so that the whole file is `bytes` long (its digits counted in).
    let mut room = bytes.saturating_sub(pdf.len() + tail.len());
    for _ in 0..3 {
        let head = format!("\n99 0 obj\n<< /Length {room} >>\nstream\n").len();
        room = bytes.saturating_sub(pdf.len() + head + tail.len());
    }
    pdf.extend_from_slice(format!("\n99 0 obj\n<< /Length {room} >>\nstream\n").as_bytes());
    let end = pdf.len() + room;
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15 ^ title.len() as u64;
    while pdf.len() < end {
        // xorshift64: fast, deterministic, and nothing of it compresses.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let take = (end - pdf.len()).min(8);
        pdf.extend_from_slice(&x.to_le_bytes()[..take]);
    }
    pdf.extend_from_slice(tail);
    pdf
}

/// A PDF that says it is encrypted (its trailer names an `/Encrypt` dictionary), as a
/// password-protected file does.
pub fn encrypted(title: &str) -> Vec<u8> {
    let mut bytes = make(title, 1);
    bytes.extend_from_slice(b"\n% protected\ntrailer\n<< /Encrypt 99 0 R >>\n");
    bytes
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_made_pdf_starts_like_one_and_counts_its_pages() {
        let b = super::make("Quarterly plan", 3);
        assert!(b.starts_with(b"%PDF-"));
        let text = String::from_utf8_lossy(&b);
        let pages = text.matches("/Type /Page").count() - text.matches("/Type /Pages").count();
        assert_eq!(pages, 3, "{text}");
        assert!(text.contains("/Title (Quarterly plan)"));
    }

    #[test]
    fn a_padded_pdf_has_the_size_asked_and_its_pages() {
        let b = super::padded("Scan", 2, 1_000_000);
        assert_eq!(b.len(), 1_000_000);
        assert!(b.starts_with(b"%PDF-"));
        let text = String::from_utf8_lossy(&b);
        let pages = text.matches("/Type /Page").count() - text.matches("/Type /Pages").count();
        assert_eq!(pages, 2);
    }
}
