//! R2, the claim-check store: prompt jobs' requests (`prompts/<id>`), uploaded PDFs
//! (`uploads/<upload>/<id>.pdf`) and paid answers (`results/<id>`). A paid answer is written
//! create-if-absent, *before* the D1 update that points at it, so a retry never overwrites what
//! an earlier attempt stored and a crash between the two settles from R2 without a second call.

use std::collections::HashMap;

use pipeline::answer::{judge, Verdict};
use pipeline::anthropic::inline;
use pipeline::anthropic::{Message, OutputBlock, Role, StopReason, Usage};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use worker::{web_sys, Bucket, Conditional};

use crate::meter::{Meter, Op};

/// The most of an object's bytes the Worker holds at once while it reads one through
/// [`Blobs::each_slice`].
const SLICE: u32 = 768 * 1024;

/// The most keys one R2 `delete()` takes.
const MAX_DELETE_KEYS: usize = 1000;

/// The R2 bucket `RESULTS`.
#[derive(Clone)]
pub struct Blobs {
    bucket: Bucket,
    meter: std::sync::Arc<Meter>,
}

// SAFETY: the Workers runtime runs one isolate on one thread; the bucket handle never crosses
// threads (workers-rs makes the same promise for `Env`, `D1Database` and `Queue`).
unsafe impl Send for Blobs {}
unsafe impl Sync for Blobs {}

/// Where a job's answer lives.
pub fn result_key(id: &str) -> String {
    format!("results/{id}")
}

/// Where a prompt job's request lives.
pub fn prompt_key(id: &str) -> String {
    format!("prompts/{id}")
}

/// A stored answer, read back for `GET /jobs/:id/result`.
pub struct StoredResult {
    /// `application/json` for a failed job's kept Message JSON, text otherwise.
    pub content_type: &'static str,
    pub body: worker::Body,
}

impl Blobs {
    pub fn new(bucket: Bucket, meter: std::sync::Arc<Meter>) -> Blobs {
        Blobs { bucket, meter }
    }

    /// Writes an object (a prompt job's request, an uploaded PDF, a health probe).
    pub async fn put(&self, key: &str, bytes: Vec<u8>) -> worker::Result<()> {
        self.meter.count(Op::R2ClassA, 1)?;
        self.bucket.put(key, bytes).execute().await?;
        Ok(())
    }

    /// Writes an object from chunks that are already JS memory (an upload's file as it
    /// arrived), as one Blob: its bytes never pass through the Worker's linear memory.
    pub async fn put_chunks(&self, key: &str, chunks: &js_sys::Array) -> worker::Result<()> {
        self.meter.count(Op::R2ClassA, 1)?;
        let blob = web_sys::Blob::new_with_u8_array_sequence(chunks)?;
        // workers-rs's `put` takes no Blob; R2's own `put(key, value)` does.
        let bucket: &JsValue = self.bucket.as_ref();
        let put = js_sys::Reflect::get(bucket, &JsValue::from_str("put"))?;
        let put: js_sys::Function = put.dyn_into()?;
        let written = put.call2(bucket, &JsValue::from_str(key), &blob)?;
        JsFuture::from(js_sys::Promise::from(written)).await?;
        Ok(())
    }

    /// An object as a Blob (JS memory: a PDF on its way to the Files API, never copied into
    /// the Worker's linear memory); `None` when there is no such object.
    pub async fn get_blob(&self, key: &str) -> worker::Result<Option<web_sys::Blob>> {
        let Some(stream) = self.js_stream(key).await? else {
            return Ok(None);
        };
        let response = web_sys::Response::new_with_opt_readable_stream(Some(&stream))?;
        let blob = JsFuture::from(response.blob()?).await?;
        Ok(Some(blob.dyn_into()?))
    }

    /// Appends to `parts` the base64 of the object at `key` as JS strings, encoded a slice at a
    /// time (`pipeline::anthropic::inline`).
    pub async fn base64_into(&self, key: &str, parts: &js_sys::Array) -> worker::Result<()> {
        let mut encoder = inline::Base64Chunks::default();
        let found = self
            .each_slice(key, |slice| {
                parts.push(&JsValue::from_str(&encoder.feed(slice)));
            })
            .await?;
        if !found {
            return Err(worker::Error::RustError(format!(
                "{key} is missing from R2"
            )));
        }
        parts.push(&JsValue::from_str(&encoder.finish()));
        Ok(())
    }

    /// The pages at most of the PDF at `key` (`pipeline::pdf::Scan`), read a slice at a time;
    /// `None` when there is no such object.
    pub async fn pdf_pages(&self, key: &str) -> worker::Result<Option<u32>> {
        let mut scan = pipeline::pdf::Scan::default();
        let found = self.each_slice(key, |slice| scan.count(slice)).await?;
        Ok(found.then(|| scan.pages()))
    }

    /// Reads the object at `key` as it streams from R2 (in JS memory), handing `each` a slice
    /// of at most [`SLICE`] bytes at a time: what passes through the Worker's own memory, which
    /// never shrinks, is a slice, never the object. False when there is no such object.
    async fn each_slice(&self, key: &str, mut each: impl FnMut(&[u8])) -> worker::Result<bool> {
        let Some(stream) = self.js_stream(key).await? else {
            return Ok(false);
        };
        let reader: web_sys::ReadableStreamDefaultReader = stream.get_reader().unchecked_into();
        loop {
            let next = JsFuture::from(reader.read()).await?;
            if js_sys::Reflect::get(&next, &JsValue::from_str("done"))?.is_truthy() {
                return Ok(true);
            }
            let chunk: js_sys::Uint8Array =
                js_sys::Reflect::get(&next, &JsValue::from_str("value"))?.dyn_into()?;
            let mut at = 0;
            while at < chunk.length() {
                let end = (at + SLICE).min(chunk.length());
                each(&chunk.subarray(at, end).to_vec());
                at = end;
            }
        }
    }

    /// The object at `key` as R2's own ReadableStream (its bytes stay in JS memory); `None`
    /// when there is no such object.
    async fn js_stream(&self, key: &str) -> worker::Result<Option<web_sys::ReadableStream>> {
        self.meter.count(Op::R2ClassB, 1)?;
        let Some(object) = self.bucket.get(key).execute().await? else {
            return Ok(None);
        };
        let Some(body) = object.body() else {
            return Ok(None);
        };
        match body.response_body()? {
            worker::ResponseBody::Stream(stream) => Ok(Some(stream)),
            _ => Err(worker::Error::RustError(format!("{key} is not a stream"))),
        }
    }

    /// Deletes an object (what a refused request wrote); best effort, logged.
    pub async fn delete(&self, key: &str) {
        let deleted = match self.meter.count(Op::R2Delete, 1) {
            Ok(()) => self.bucket.delete(key).await,
            Err(e) => Err(e),
        };
        if let Err(e) = deleted {
            worker::console_error!("deleting {key} failed: {e}");
        }
    }

    /// Deletes these objects, in one call per 1,000 keys (R2's limit for one `delete()`:
    /// developers.cloudflare.com/r2/api/workers/workers-api-reference/#bucket-method-definitions);
    /// a key with no object is no error. Stops at the first call that fails.
    pub async fn delete_many(&self, keys: &[String]) -> worker::Result<()> {
        for chunk in keys.chunks(MAX_DELETE_KEYS) {
            self.meter.count(Op::R2Delete, chunk.len() as u64)?;
            self.bucket.delete_multiple(chunk.to_vec()).await?;
        }
        Ok(())
    }

    /// The bytes at `key`; `None` when there is no such object.
    pub async fn get(&self, key: &str) -> worker::Result<Option<Vec<u8>>> {
        self.meter.count(Op::R2ClassB, 1)?;
        let Some(object) = self.bucket.get(key).execute().await? else {
            return Ok(None);
        };
        match object.body() {
            Some(b) => Ok(Some(b.bytes().await?)),
            None => Ok(None),
        }
    }

    /// The bytes a job's row points at (its request or its upload); missing is an error.
    pub async fn claim_check(&self, key: &str) -> worker::Result<Vec<u8>> {
        self.get(key)
            .await?
            .ok_or_else(|| worker::Error::RustError(format!("{key} is missing from R2")))
    }

    /// Stores a paid answer at `results/<id>` — with its model, usage and stop reason as
    /// metadata — unless it is already there. A usable answer is stored as its text; an
    /// unusable one as the whole Message JSON (`format: message`), so what was paid for can be
    /// read back.
    pub async fn store_answer(&self, id: &str, message: &Message) -> worker::Result<()> {
        self.store_message(&result_key(id), message).await
    }

    /// Stores a refused answer that moved its job to a fallback model, apart from
    /// `results/<id>` (`pipeline::refusal::refused_key`), unless it is already there.
    pub async fn store_refused(&self, id: &str, message: &Message) -> worker::Result<()> {
        self.store_message(&pipeline::refusal::refused_key(id), message)
            .await
    }

    /// A refused answer stored for this job before its row moved to the fallback (a Worker
    /// that died in between): the job falls back from it without a second call.
    pub async fn stored_refusal(&self, id: &str) -> worker::Result<Option<Message>> {
        self.stored_message(id, &pipeline::refusal::refused_key(id))
            .await
    }

    /// [`Blobs::store_answer`] at `key`.
    async fn store_message(&self, key: &str, message: &Message) -> worker::Result<()> {
        let mut metadata: HashMap<String, String> =
            message.usage.to_metadata().into_iter().collect();
        metadata.insert("model".into(), message.model.clone());
        if let Some(reason) = &message.stop_reason {
            metadata.insert("stop_reason".into(), reason.as_str().to_owned());
        }
        let body = match judge(message) {
            Verdict::Usable => message.text(),
            Verdict::Unusable(_) => {
                metadata.insert("format".into(), "message".into());
                serde_json::to_string(message)
                    .map_err(|e| worker::Error::RustError(e.to_string()))?
            }
        };
        self.put_if_absent(key, body.into_bytes(), metadata).await
    }

    /// Stores an answer that could not be decoded, as it came (`format: raw`), with the model
    /// it was asked of.
    pub async fn store_undecodable(&self, id: &str, raw: &str, model: &str) -> worker::Result<()> {
        let metadata = HashMap::from([
            ("format".to_owned(), "raw".to_owned()),
            ("model".to_owned(), model.to_owned()),
        ]);
        self.put_if_absent(&result_key(id), raw.as_bytes().to_vec(), metadata)
            .await
    }

    async fn put_if_absent(
        &self,
        key: &str,
        body: Vec<u8>,
        metadata: HashMap<String, String>,
    ) -> worker::Result<()> {
        self.meter.count(Op::R2ClassA, 1)?;
        self.bucket
            .put(key, body)
            .custom_metadata(metadata)
            .only_if(Conditional {
                etag_does_not_match: Some("*".into()),
                ..Default::default()
            })
            .execute()
            .await?;
        Ok(())
    }

    /// An answer already stored for this job (a Worker that died between the R2 write and the
    /// D1 update): rebuilt from the object, so the job settles without a second call.
    pub async fn stored_answer(&self, id: &str) -> worker::Result<Option<Message>> {
        self.stored_message(id, &result_key(id)).await
    }

    /// The answer stored for job `id` at `key`, rebuilt as a Message.
    async fn stored_message(&self, id: &str, key: &str) -> worker::Result<Option<Message>> {
        self.meter.count(Op::R2ClassB, 1)?;
        let Some(object) = self.bucket.get(key).execute().await? else {
            return Ok(None);
        };
        let metadata = object.custom_metadata()?;
        let text = match object.body() {
            Some(b) => b.text().await?,
            None => return Ok(None),
        };
        let model = metadata.get("model").cloned().unwrap_or_default();
        let message = |content, stop_reason, usage| Message {
            id: format!("stored-{id}"),
            kind: "message".into(),
            role: Role::Assistant,
            content,
            model: model.clone(),
            stop_reason,
            stop_sequence: None,
            stop_details: None,
            usage,
        };
        match metadata.get("format").map(String::as_str) {
            Some("message") => Ok(serde_json::from_str(&text).ok()),
            // Paid for but unreadable: settled as an answer with nothing to use, never called
            // again.
            Some("raw") => Ok(Some(message(
                Vec::new(),
                Some(StopReason::Other("undecodable_answer".into())),
                Usage::from_raw_answer(&text).unwrap_or_default(),
            ))),
            _ => Ok(
                Usage::from_metadata(|k| metadata.get(k).cloned()).map(|usage| {
                    message(
                        vec![OutputBlock::text(text)],
                        metadata.get("stop_reason").cloned().map(StopReason::from),
                        usage,
                    )
                }),
            ),
        }
    }

    /// A job's stored answer as a stream (never buffered), with its content type.
    pub async fn result(&self, id: &str) -> worker::Result<Option<StoredResult>> {
        self.meter.count(Op::R2ClassB, 1)?;
        let Some(object) = self.bucket.get(result_key(id)).execute().await? else {
            return Ok(None);
        };
        let content_type = match object.custom_metadata()?.get("format").map(String::as_str) {
            Some("message") => "application/json",
            _ => "text/plain; charset=utf-8",
        };
        let Some(body) = object.body() else {
            return Ok(None);
        };
        match body.response_body()? {
            // The R2 object's own ReadableStream, handed on without buffering it.
            worker::ResponseBody::Stream(s) => Ok(Some(StoredResult {
                content_type,
                body: worker::Body::new(s),
            })),
            _ => Err(worker::Error::RustError(format!(
                "{} is not a stream",
                result_key(id)
            ))),
        }
    }
}
