//! The organization's files as the Files API keeps them (`crate::files` serves them), and what a
//! Messages request's `file` source resolves to (`crate::request`).

use std::collections::BTreeMap;

use pipeline::clock::format_rfc3339;
use serde_json::{json, Value};

use crate::errors::{new_id, SimError};
use crate::pdf::{self, PdfInfo};

/// Metadata of an expired file stays readable "for up to 30 days".
pub const EXPIRED_KEPT_MS: i64 = 30 * 86_400_000;

/// One stored file: what it is and what a Messages request reads from it.
#[derive(Debug, Clone)]
pub struct StoredFile {
    pub id: String,
    pub filename: String,
    pub mime_type: String,
    pub size_bytes: u64,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    /// A PDF's pages and title, read at upload (`Err`: the API's message for a bad PDF).
    pub pdf: Result<PdfInfo, &'static str>,
    /// A text file's content.
    pub text: Option<String>,
    /// Identifies the content for the prompt cache (as a base64 document's bytes do).
    pub fingerprint: u64,
    /// Upload order: newest first in lists.
    pub seq: u64,
}

impl StoredFile {
    pub fn expired(&self, now: i64) -> bool {
        self.expires_at.is_some_and(|e| e <= now)
    }

    pub fn view(&self, beta: bool) -> Value {
        let mut v = json!({
            "id": self.id,
            "type": "file",
            "filename": self.filename,
            "mime_type": self.mime_type,
            "size_bytes": self.size_bytes,
            "created_at": format_rfc3339(self.created_at),
            "downloadable": false,
        });
        if !beta {
            v["expires_at"] = self
                .expires_at
                .map(|e| Value::String(format_rfc3339(e)))
                .unwrap_or(Value::Null);
        }
        v
    }
}

/// The organization's files.
#[derive(Debug, Default)]
pub struct Files {
    pub by_id: BTreeMap<String, StoredFile>,
    next_seq: u64,
}

/// What a document block's `file` source resolves to.
#[derive(Debug, Clone)]
pub enum Resolved {
    Pdf(PdfInfo, u64),
    Text(String, u64),
}

impl Files {
    /// Bytes held by files that have not expired (what counts against the storage limit).
    pub fn stored_bytes(&self, now: i64) -> u64 {
        self.by_id
            .values()
            .filter(|f| !f.expired(now))
            .map(|f| f.size_bytes)
            .sum()
    }

    /// How many files are stored (expired ones in their 30 days included).
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// Stores a file (checked by the caller) and answers its id.
    pub fn add(
        &mut self,
        filename: String,
        mime_type: String,
        bytes: &[u8],
        now: i64,
        expires_at: Option<i64>,
    ) -> String {
        let seq = self.next_seq;
        self.next_seq += 1;
        let f = StoredFile {
            id: new_id("file"),
            filename,
            size_bytes: bytes.len() as u64,
            created_at: now,
            expires_at,
            pdf: pdf::inspect(bytes),
            text: (mime_type == "text/plain").then(|| String::from_utf8_lossy(bytes).into_owned()),
            fingerprint: crate::fingerprint::fnv(bytes),
            mime_type,
            seq,
        };
        let id = f.id.clone();
        self.by_id.insert(id.clone(), f);
        id
    }

    /// Forgets files whose metadata has outlived its 30 days.
    pub fn sweep(&mut self, now: i64) {
        self.by_id
            .retain(|_, f| f.expires_at.is_none_or(|e| e + EXPIRED_KEPT_MS > now));
    }

    /// A file a `document` block reads, as the Messages API resolves it: 404 when unknown,
    /// expired ("A Messages request that references the file fails before inference") or of a
    /// type a document block cannot read (400).
    pub fn resolve(&self, id: &str, at: &str, now: i64) -> Result<Resolved, SimError> {
        let f = self.by_id.get(id).ok_or_else(|| missing(id))?;
        if f.expired(now) {
            return Err(missing(id));
        }
        match f.mime_type.as_str() {
            "application/pdf" => f
                .pdf
                .clone()
                .map(|info| Resolved::Pdf(info, f.fingerprint))
                .map_err(SimError::invalid),
            "text/plain" => Ok(Resolved::Text(
                f.text.clone().unwrap_or_default(),
                f.fingerprint,
            )),
            other => Err(SimError::invalid(format!(
                "{at}.source: the file `{id}` is {other}, which a document block cannot read \
                 (the file type doesn't match the content block type)"
            ))),
        }
    }
}

/// The guide's "File not found (404)", in its example's words.
pub fn missing(id: &str) -> SimError {
    SimError::not_found(format!("File `{id}` not found."))
}
