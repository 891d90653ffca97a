//! The Files API, as far as the product uses it (issue 20, part 4): an uploaded PDF is sent
//! once (`POST /v1/files`), referenced by `file_id` in every request that reads it, and
//! deleted (`DELETE /v1/files/{file_id}`) when its job's retention ends. The simulator serves
//! the same endpoints from these types.
//!
//! Source for every fact here: the Files API guide,
//! <https://platform.claude.com/docs/en/build-with-claude/files> (read 2026-12-03), and the
//! release notes of 2026-08-19: "The Files API is out of beta on the Claude API. Requests to the
//! `/v1/files` endpoints, and Messages API requests that reference an uploaded file, no longer
//! require the `files-api-2025-04-14` beta header." We send no beta header, so the answers
//! have the current shapes (`expires_at` always present, `page`/`next_page` pagination).

use serde::{Deserialize, Serialize};

/// The endpoint: upload (`POST`) and list (`GET`); `/{file_id}` for metadata and delete.
pub const FILES_PATH: &str = "/v1/files";
/// The multipart field that carries the file ("`-F "file=@/path/to/document.pdf"`").
pub const FILE_FIELD: &str = "file";
/// The optional form field that makes a file expire: "an integer number of seconds between
/// 3,600 (1 hour) and 7,776,000 (90 days)".
pub const EXPIRES_FIELD: &str = "expires_in_seconds";
pub const MIN_EXPIRES_S: u64 = 3_600;
pub const MAX_EXPIRES_S: u64 = 7_776_000;
/// "Maximum file size: 500 MB per file" (413 past it).
pub const MAX_FILE_BYTES: u64 = 500 * 1024 * 1024;
/// "Total storage: 1 TB per organization" (400 past it).
pub const MAX_STORAGE_BYTES: u64 = 1024 * 1024 * 1024 * 1024;
/// The beta header of the former shapes: "requests that still send it keep working and keep
/// returning the beta response shapes". Only the simulator reads it.
pub const BETA: &str = "files-api-2025-04-14";
/// A filename: "1-255 characters" without `<`, `>`, `:`, `"`, `|`, `?`, `*`, `\`, `/` or
/// "Unicode characters 0-31" (the guide's "Invalid filename (400)").
pub const MAX_FILENAME_CHARS: usize = 255;

/// A file as the API describes it (the upload's answer, `GET /v1/files/{file_id}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileObject {
    /// `file_…`; "The format and length of IDs may change over time."
    pub id: String,
    /// Always `"file"`.
    #[serde(rename = "type")]
    pub kind: String,
    pub filename: String,
    pub mime_type: String,
    pub size_bytes: u64,
    /// RFC 3339.
    pub created_at: String,
    /// `false` for uploaded files: "Only files created by skills or the code execution tool
    /// can be downloaded."
    pub downloadable: bool,
    /// RFC 3339, or `null` for a file without an expiration. Absent in the beta shape.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub expires_at: Option<Option<String>>,
}

/// A field that is present (`Some`), `null` included (`Some(None)`); absent is the default.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

/// `DELETE /v1/files/{file_id}`'s answer: `{"id": …, "type": "file_deleted"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDeleted {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
}

/// `GET /v1/files`: newest first, `next_page` to pass back as `page` (null on the last page).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileList {
    pub data: Vec<FileObject>,
    pub next_page: Option<String>,
}

/// The `expires_in_seconds` to upload a job's PDF with: a day past the job's own retention, so
/// that a file our retention failed to delete still goes; none when that is past the API's 90
/// days (our retention deletes it then).
pub fn expires_in_s(retention_days: u32) -> Option<u64> {
    let s = (retention_days as u64 + 1) * 86_400;
    (s <= MAX_EXPIRES_S).then_some(s.max(MIN_EXPIRES_S))
}

/// A filename the API accepts, from the one the user sent: its last path component, the
/// forbidden characters replaced by `_`, at most 255 characters; `document.pdf` when nothing
/// is left. The user's name stays ours (in D1); this is only the provider's label.
pub fn provider_filename(name: &str) -> String {
    let last = name.rsplit(['/', '\\']).next().unwrap_or_default();
    let clean: String = last
        .chars()
        .map(|c| if forbidden(c) { '_' } else { c })
        .take(MAX_FILENAME_CHARS)
        .collect();
    if clean.trim().is_empty() {
        "document.pdf".to_owned()
    } else {
        clean
    }
}

/// Whether a filename is one the API accepts (the simulator's check).
pub fn filename_ok(name: &str) -> bool {
    let n = name.chars().count();
    (1..=MAX_FILENAME_CHARS).contains(&n) && !name.chars().any(forbidden)
}

/// A character a filename may not hold.
fn forbidden(c: char) -> bool {
    (c as u32) < 32 || "<>:\"|?*\\/".contains(c)
}

/// The `multipart/form-data` body of an upload: the file part (with its content type) and,
/// when given, `expires_in_seconds`. Answers the content type (with its boundary) and the body.
pub fn upload_body(
    filename: &str,
    mime_type: &str,
    bytes: &[u8],
    expires_in_s: Option<u64>,
    boundary_seed: u64,
) -> (String, Vec<u8>) {
    // A boundary that cannot occur in the file: checked, and changed until it does not.
    let mut seed = boundary_seed;
    let boundary = loop {
        let b = boundary(seed);
        if !contains(bytes, b.as_bytes()) {
            break b;
        }
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    };
    let frame = UploadFrame::new(filename, mime_type, expires_in_s, &boundary);
    let mut body = Vec::with_capacity(frame.head.len() + bytes.len() + frame.tail.len());
    body.extend_from_slice(&frame.head);
    body.extend_from_slice(bytes);
    body.extend_from_slice(&frame.tail);
    (frame.content_type, body)
}

/// A multipart boundary from a random seed.
pub fn boundary(seed: u64) -> String {
    format!("----claude-pipeline-{seed:016x}")
}

/// What an upload's body holds around the file's bytes, for a Worker that sends the file from
/// JS memory as it is (R2's Blob) without reading it: the content type, the bytes before the
/// file, the bytes after. The boundary cannot be checked against bytes never read; drawn from
/// 64 random bits, the chance that a 20 MB file holds it is about 2^-40.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadFrame {
    pub content_type: String,
    pub head: Vec<u8>,
    pub tail: Vec<u8>,
}

impl UploadFrame {
    pub fn new(
        filename: &str,
        mime_type: &str,
        expires_in_s: Option<u64>,
        boundary: &str,
    ) -> UploadFrame {
        let quoted = filename.replace('\\', "\\\\").replace('"', "\\\"");
        let mut head = Vec::with_capacity(512);
        if let Some(s) = expires_in_s {
            head.extend_from_slice(
                format!(
                    "--{boundary}\r\ncontent-disposition: form-data; name=\"{EXPIRES_FIELD}\"\r\n\r\n{s}\r\n"
                )
                .as_bytes(),
            );
        }
        head.extend_from_slice(
            format!(
                "--{boundary}\r\ncontent-disposition: form-data; name=\"{FILE_FIELD}\"; \
                 filename=\"{quoted}\"\r\ncontent-type: {mime_type}\r\n\r\n"
            )
            .as_bytes(),
        );
        UploadFrame {
            content_type: format!("multipart/form-data; boundary={boundary}"),
            head,
            tail: format!("\r\n--{boundary}--\r\n").into_bytes(),
        }
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// What a failed upload means for the request that wanted the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UploadFailed {
    /// The base URL has no Files API (a gateway, a platform that lacks it: the guide's
    /// compatibility list names the Claude API, Claude Platform on AWS and Microsoft Foundry,
    /// not Bedrock or Vertex AI): send the PDF as base64, now and from then on.
    Unavailable,
    /// Anything else (overload, a timeout, a storage limit): base64 this time, the upload is
    /// tried again on the next request.
    ThisTime,
}

/// Classifies a failed upload by its HTTP status (`None`: no answer).
pub fn upload_failed(status: Option<u16>) -> UploadFailed {
    match status {
        // No such route (404), or a method/route the base URL does not serve (405, 501).
        Some(404 | 405 | 501) => UploadFailed::Unavailable,
        _ => UploadFailed::ThisTime,
    }
}

/// Whether a Messages call failed because a file it references is gone (deleted, expired:
/// "File not found (404)"; the guide's example message is "File `file_…` not found."). The
/// job's next try uploads its PDF again instead of failing.
pub fn is_missing_file(outcome: &crate::outcome::CallOutcome) -> bool {
    matches!(outcome, crate::outcome::CallOutcome::Http { status: 404, message, .. }
        if names_a_missing_file(message))
}

/// Whether a 404's message is about a file (not a model or a batch): the same test for a call
/// and for an errored batch line (`crate::batching`).
pub fn names_a_missing_file(message: &str) -> bool {
    message.trim_start().starts_with("File ")
}

/// Whether a request reads a file of the Files API.
pub fn reads_a_file(req: &super::request::MessagesRequest) -> bool {
    req.system
        .as_ref()
        .is_some_and(super::request::Content::reads_a_file)
        || req.messages.iter().any(|m| m.content.reads_a_file())
}

/// Bytes of PDFs uploaded side by side when an upload is accepted. Each upload holds its PDF
/// in JS memory twice (R2's Blob, and the request's Blob around it; none of it in the Worker's
/// own memory since 2026-12-06), and an isolate has 128 MB
/// (developers.cloudflare.com/workers/platform/limits/, "Memory"): 24 MiB in flight keeps a
/// 20 MB PDF's upload alone, and small ones six at a time.
pub const UPLOAD_BYTES_IN_FLIGHT: u64 = 24 << 20;

/// The files (their sizes, in order) as waves uploaded one after another: each wave at most
/// `max_files` files and `max_bytes` bytes, and a file larger than `max_bytes` alone.
pub fn upload_waves(
    sizes: &[u64],
    max_files: usize,
    max_bytes: u64,
) -> Vec<std::ops::Range<usize>> {
    let mut waves = Vec::new();
    let (mut start, mut bytes) = (0, 0u64);
    for (i, &size) in sizes.iter().enumerate() {
        let full = i - start >= max_files.max(1) || bytes.saturating_add(size) > max_bytes;
        if i > start && full {
            waves.push(start..i);
            (start, bytes) = (i, 0);
        }
        bytes = bytes.saturating_add(size);
    }
    if start < sizes.len() {
        waves.push(start..sizes.len());
    }
    waves
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_pdf_uploads_alone_and_small_ones_six_at_a_time() {
        let mb = 1 << 20;
        let sizes = [19 * mb, 19 * mb, mb, mb, mb, mb, mb, mb, mb, 30 * mb];
        let waves = upload_waves(&sizes, 6, UPLOAD_BYTES_IN_FLIGHT);
        assert_eq!(waves, vec![0..1, 1..7, 7..9, 9..10]);
        assert!(upload_waves(&[], 6, UPLOAD_BYTES_IN_FLIGHT).is_empty());
    }

    proptest::proptest! {
        /// Every file is in exactly one wave, in order; no wave has more than the files allowed,
        /// nor more bytes unless it is one file alone.
        #[test]
        fn waves_cover_every_file_once_within_both_bounds(
            sizes in proptest::collection::vec(0u64..40 << 20, 0..40),
            max_files in 1usize..8,
        ) {
            let waves = upload_waves(&sizes, max_files, UPLOAD_BYTES_IN_FLIGHT);
            let mut next = 0;
            for w in &waves {
                proptest::prop_assert_eq!(w.start, next);
                proptest::prop_assert!(!w.is_empty() && w.len() <= max_files);
                let bytes: u64 = sizes[w.clone()].iter().sum();
                proptest::prop_assert!(w.len() == 1 || bytes <= UPLOAD_BYTES_IN_FLIGHT);
                next = w.end;
            }
            proptest::prop_assert_eq!(next, sizes.len());
        }
    }

    #[test]
    fn the_upload_body_is_a_form_the_products_reader_parses() {
        let pdf = b"%PDF-1.4 hello\r\n--not-a-boundary\r\n%%EOF".to_vec();
        let (ctype, body) = upload_body("a.pdf", "application/pdf", &pdf, Some(7_200), 42);
        let boundary = crate::multipart::boundary(&ctype).unwrap();
        let mut r = crate::multipart::Reader::new(&boundary);
        let events = r.feed(&body).unwrap();
        assert!(r.is_done());
        let mut parts = Vec::new();
        for e in events {
            match e {
                crate::multipart::Event::Part(p) => parts.push((p, Vec::new())),
                crate::multipart::Event::Data(d) => parts.last_mut().unwrap().1.extend(d),
                crate::multipart::Event::End => {}
            }
        }
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].0.name, EXPIRES_FIELD);
        assert_eq!(parts[0].1, b"7200");
        assert_eq!(parts[1].0.name, FILE_FIELD);
        assert_eq!(parts[1].0.filename.as_deref(), Some("a.pdf"));
        assert_eq!(parts[1].0.content_type.as_deref(), Some("application/pdf"));
        assert_eq!(parts[1].1, pdf);
    }

    #[test]
    fn the_boundary_never_occurs_in_the_file() {
        let first = format!("----claude-pipeline-{:016x}", 7u64);
        let hostile = format!("x{first}y").into_bytes();
        let (ctype, _) = upload_body("a.pdf", "application/pdf", &hostile, None, 7);
        assert!(!ctype.ends_with(&first), "{ctype}");
    }

    #[test]
    fn provider_filenames_are_ones_the_api_accepts() {
        for name in [
            "report.pdf",
            "../../etc/passwd",
            "a<b>c:d\"e|f?g*h.pdf",
            "tab\there.pdf",
            "",
            "/",
            &"x".repeat(400),
            "C:\\Users\\me\\plan.pdf",
        ] {
            let p = provider_filename(name);
            assert!(filename_ok(&p), "{name:?} -> {p:?}");
        }
        assert_eq!(provider_filename("C:\\Users\\me\\plan.pdf"), "plan.pdf");
        assert_eq!(provider_filename("dir/report.pdf"), "report.pdf");
    }

    #[test]
    fn expiry_is_a_day_past_retention_within_the_apis_range() {
        assert_eq!(expires_in_s(30), Some(31 * 86_400));
        assert_eq!(expires_in_s(0), Some(86_400));
        assert_eq!(expires_in_s(89), Some(MAX_EXPIRES_S));
        assert_eq!(expires_in_s(90), None);
        assert_eq!(expires_in_s(365), None);
    }

    #[test]
    fn a_missing_file_is_told_from_a_missing_model() {
        use crate::outcome::CallOutcome;
        let http = |status, message: &str| CallOutcome::Http {
            status,
            message: message.into(),
            retry_after_s: None,
        };
        assert!(is_missing_file(&http(
            404,
            "File `file_011CNha8` not found."
        )));
        assert!(!is_missing_file(&http(404, "model: claude-nope")));
        assert!(!is_missing_file(&http(400, "File `x` is not downloadable")));
        let req = crate::pdf::request_for_file(
            "claude-sonnet-5-5",
            crate::pdf::Template::Summary,
            "file_1".into(),
        );
        assert!(reads_a_file(&req));
        let inline = crate::pdf::request(
            "claude-sonnet-5-5",
            crate::pdf::Template::Summary,
            "JVBERi0=".into(),
        );
        assert!(!reads_a_file(&inline));
    }

    #[test]
    fn only_a_missing_route_makes_the_files_api_unavailable() {
        assert_eq!(upload_failed(Some(404)), UploadFailed::Unavailable);
        assert_eq!(upload_failed(Some(529)), UploadFailed::ThisTime);
        assert_eq!(upload_failed(Some(400)), UploadFailed::ThisTime);
        assert_eq!(upload_failed(None), UploadFailed::ThisTime);
    }

    #[test]
    fn a_current_file_object_round_trips_and_a_beta_one_reads() {
        let v = serde_json::json!({"id": "file_011CNha8iCJcU1wXNR6q4V8w", "type": "file",
            "filename": "document.pdf", "mime_type": "application/pdf", "size_bytes": 1024000,
            "created_at": "2025-01-01T00:00:00Z", "downloadable": false, "expires_at": null});
        let f: FileObject = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(f.expires_at, Some(None));
        assert_eq!(serde_json::to_value(&f).unwrap(), v);
        let mut beta = v;
        beta.as_object_mut().unwrap().remove("expires_at");
        let f: FileObject = serde_json::from_value(beta).unwrap();
        assert_eq!(f.expires_at, None);
    }
}
