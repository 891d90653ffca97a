//! The upload page's client-side checks: `pipeline::pdf`'s own, in the Worker's own words, so a
//! file the Worker would refuse is caught before anything is sent.

use pipeline::pdf;

/// What the page knows about a chosen file: its name as the Worker will show it, its size,
/// what is wrong with it (once its first bytes are read), and how much of it is sent.
#[derive(Debug, Clone, PartialEq)]
pub struct FileCheck {
    pub name: String,
    pub size: u64,
    pub problem: Option<String>,
    /// Whether its first bytes were read (until then it cannot be sent).
    pub checked: bool,
    /// 0.0 – 1.0 of its bytes sent.
    pub sent: f64,
}

impl FileCheck {
    /// A file just chosen, not yet checked.
    pub fn new(raw_name: &str, size: u64) -> FileCheck {
        FileCheck {
            name: pdf::display_name(raw_name),
            size,
            problem: None,
            checked: false,
            sent: 0.0,
        }
    }

    /// Records what the Worker would refuse about the file, from its first bytes.
    pub fn check(&mut self, head: &[u8]) {
        self.problem = problem(&self.name, self.size, head);
        self.checked = true;
    }
}

/// How many leading bytes [`problem`] needs to tell a PDF.
pub const HEAD_BYTES: i32 = 5;

/// What `POST /batches` would refuse about a file of `size` bytes that starts with `head`.
pub fn problem(name: &str, size: u64, head: &[u8]) -> Option<String> {
    pdf::check_size(name, size)
        .and_then(|()| pdf::check_file(name, head))
        .err()
        .map(|e| e.body.error)
}

/// Why the chosen files cannot be sent yet, if they cannot: their count, a file with a
/// problem, files still being checked, or their total size.
pub fn blocking(files: &[&FileCheck]) -> Option<String> {
    if let Err(e) = pdf::check_count(files.len()) {
        return Some(e.body.error);
    }
    if let Some(p) = files.iter().find_map(|f| f.problem.as_ref()) {
        return Some(format!("{p}: remove it to upload"));
    }
    if files.iter().any(|f| !f.checked) {
        return Some("checking the files…".into());
    }
    let total = files.iter().map(|f| f.size).sum();
    pdf::check_total(total).err().map(|e| e.body.error)
}

/// Each file's share sent (0.0 – 1.0) once `sent` bytes of the body went out, the files sent
/// in order with these `sizes`.
pub fn shares(sizes: &[f64], sent: f64) -> Vec<f64> {
    let mut start = 0.0;
    sizes
        .iter()
        .map(|size| {
            let share = if *size <= 0.0 {
                1.0
            } else {
                ((sent - start) / size).clamp(0.0, 1.0)
            };
            start += size;
            share
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(name: &str, size: u64, head: &[u8]) -> FileCheck {
        let mut f = FileCheck::new(name, size);
        f.check(head);
        f
    }

    #[test]
    fn a_file_is_refused_here_in_the_words_the_worker_uses() {
        assert_eq!(problem("a.pdf", 10, b"%PDF-"), None);
        let png = problem("photo.pdf", 12, b"\x89PNG\r").unwrap();
        assert!(png.starts_with("photo.pdf is not a PDF"), "{png}");
        assert_eq!(problem("e.pdf", 0, b"").unwrap(), "e.pdf is empty");
        let big = problem("big.pdf", pdf::MAX_FILE_BYTES + 1, b"%PDF-").unwrap();
        assert!(big.starts_with("big.pdf is larger than 20 MB"), "{big}");
    }

    #[test]
    fn names_are_shown_as_the_worker_will_show_them() {
        assert_eq!(FileCheck::new("C:\\docs\\report.pdf", 1).name, "report.pdf");
    }

    #[test]
    fn files_are_sent_only_when_all_are_checked_fine_and_within_the_limits() {
        let ok = checked("a.pdf", 10, b"%PDF-");
        assert_eq!(blocking(&[&ok]), None);
        let bad = checked("photo.pdf", 10, b"\x89PNG\r");
        let hint = blocking(&[&ok, &bad]).unwrap();
        assert!(
            hint.starts_with("photo.pdf is not a PDF") && hint.ends_with(": remove it to upload")
        );
        let pending = FileCheck::new("b.pdf", 10);
        assert_eq!(blocking(&[&ok, &pending]).unwrap(), "checking the files…");
        let many: Vec<&FileCheck> = std::iter::repeat_n(&ok, pdf::MAX_FILES + 1).collect();
        assert!(blocking(&many).unwrap().contains("between 1 and 100 files"));
        assert!(blocking(&[]).is_some());
        let big = checked("big.pdf", pdf::MAX_FILE_BYTES, b"%PDF-");
        let hint = blocking(&[&big, &big, &big, &big, &big]).unwrap();
        assert!(hint.contains("at most 95 MB in all"), "{hint}");
    }

    #[test]
    fn progress_fills_the_files_in_order() {
        assert_eq!(shares(&[10.0, 10.0], 0.0), vec![0.0, 0.0]);
        assert_eq!(shares(&[10.0, 10.0], 15.0), vec![1.0, 0.5]);
        assert_eq!(shares(&[10.0, 0.0], 30.0), vec![1.0, 1.0]);
    }
}
