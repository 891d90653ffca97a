//! The Anthropic API over `fetch`: Messages calls with an explicit timeout, and the Message
//! Batches calls of the batch mode. Every failure is a [`CallOutcome`] that `pipeline::retry`
//! turns into a decision; nothing here decides.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::{select, Either};
use futures_util::pin_mut;
use pipeline::anthropic::files::{self, FileDeleted, FileObject};
use pipeline::anthropic::{
    header, ErrorResponse, Message, MessageBatch, MessageBatchList, API_VERSION,
};
use pipeline::budget::{reported, Reported};
use pipeline::outcome::CallOutcome;
use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::JsValue;
use worker::{web_sys, AbortController, Delay, Fetch, Headers, Method, Request, RequestInit};

use crate::config::Config;
use crate::meter::Meter;

/// The header that tells the simulator which job a call bills (harmless to the real API).
const JOB_HEADER: &str = "x-job-id";

/// A configured client: base URL, key and timeout come from vars and secrets.
pub struct Anthropic {
    base_url: String,
    api_key: String,
    timeout: Duration,
    /// The invocation's envelope: every call is a subrequest and holds a connection slot.
    meter: Arc<Meter>,
}

/// An HTTP answer, read whole.
pub(crate) struct Raw {
    pub status: u16,
    pub text: String,
    pub retry_after_s: Option<u32>,
    /// The `anthropic-ratelimit-*` headers, for the token budget.
    pub reported: Vec<Reported>,
    /// The error type another provider names in a header (Bedrock's `x-amzn-ErrorType`).
    pub error_type: Option<String>,
}

/// A Messages answer and what the provider said about its rate limits (also on errors).
pub struct Answered {
    pub result: Result<Message, CallOutcome>,
    pub reported: Vec<Reported>,
}

impl Anthropic {
    pub fn new(config: &Config, meter: Arc<Meter>) -> Anthropic {
        Anthropic {
            base_url: config.anthropic_base_url.clone(),
            api_key: config.anthropic_api_key.clone(),
            // A cron run's calls end inside its minute (`pipeline::envelope::CRON_CALL_MS`).
            timeout: Duration::from_millis(pipeline::envelope::call_timeout_ms(
                meter.entry(),
                config.timing.call_timeout_ms as u64,
            )),
            meter,
        }
    }

    /// `POST /v1/messages` for one job, with the rate-limit headers of the answer.
    pub async fn messages<B: Serialize>(&self, body: &B, job_id: &str) -> Answered {
        match json_body(body) {
            Ok(b) => self.messages_body(b, job_id).await,
            Err(e) => Answered {
                result: Err(e),
                reported: Vec::new(),
            },
        }
    }

    /// [`Anthropic::messages`] with the body already assembled (`crate::requests::body_of`).
    pub async fn messages_body(&self, body: JsValue, job_id: &str) -> Answered {
        let url = format!("{}/v1/messages", self.base_url);
        match self
            .send_raw(Method::Post, &url, Some((JSON, body)), Some(job_id))
            .await
        {
            Ok(raw) => {
                let reported = raw.reported.clone();
                Answered {
                    result: decode_answer(raw),
                    reported,
                }
            }
            Err(e) => Answered {
                result: Err(e),
                reported: Vec::new(),
            },
        }
    }

    /// `POST /v1/messages/count_tokens`: the input tokens of a request (documents included),
    /// its body already assembled.
    pub async fn count_tokens_body(&self, body: JsValue) -> Result<u64, CallOutcome> {
        #[derive(serde::Deserialize)]
        struct Count {
            input_tokens: u64,
        }
        let c: Count = self.post_body("/v1/messages/count_tokens", body).await?;
        Ok(c.input_tokens)
    }

    /// `GET /v1/messages/batches`: a page of the account's batches, newest first.
    pub async fn list_batches(
        &self,
        after_id: Option<&str>,
    ) -> Result<MessageBatchList, CallOutcome> {
        let path = match after_id {
            Some(a) => format!("/v1/messages/batches?limit=100&after_id={a}"),
            None => "/v1/messages/batches?limit=100".to_owned(),
        };
        self.call::<(), _>(Method::Get, &path, None, None).await
    }

    /// The same client with the Admin API's key (the same `anthropic-version`:
    /// `pipeline::anthropic::API_VERSION`).
    pub fn with_key(&self, key: &str) -> Anthropic {
        Anthropic {
            base_url: self.base_url.clone(),
            api_key: key.to_owned(),
            timeout: self.timeout,
            meter: self.meter.clone(),
        }
    }

    /// `GET /v1/organizations/cost_report?…` (an Admin API key: [`Anthropic::with_key`]).
    pub async fn cost_report(
        &self,
        query: &str,
    ) -> Result<pipeline::anthropic::admin::CostReport, CallOutcome> {
        let path = format!("{}?{query}", pipeline::anthropic::admin::COST_REPORT_PATH);
        self.call::<(), _>(Method::Get, &path, None, None).await
    }

    /// `GET /v1/models?…`: one page of the models the API offers
    /// (`pipeline::models::watch`).
    pub async fn list_models(
        &self,
        query: &str,
    ) -> Result<pipeline::models::watch::ModelsPage, CallOutcome> {
        self.call::<(), _>(Method::Get, &format!("/v1/models?{query}"), None, None)
            .await
    }

    /// `POST /v1/files`: one file, as `multipart/form-data` (`pipeline::anthropic::files`).
    pub async fn upload_file(
        &self,
        filename: &str,
        mime_type: &str,
        file: &web_sys::Blob,
        expires_in_s: Option<u64>,
    ) -> Result<FileObject, CallOutcome> {
        let net = |e: JsValue| CallOutcome::Network(format!("{e:?}"));
        let seed = js_sys::Math::random().to_bits();
        let frame =
            files::UploadFrame::new(filename, mime_type, expires_in_s, &files::boundary(seed));
        // The body is a Blob of the framing and the file's own Blob: the PDF goes from R2 to
        // the API in JS memory, never copied into the Worker's (which never shrinks).
        let parts = js_sys::Array::of3(
            &js_sys::Uint8Array::from(frame.head.as_slice()),
            file,
            &js_sys::Uint8Array::from(frame.tail.as_slice()),
        );
        let body = web_sys::Blob::new_with_blob_sequence(&parts).map_err(net)?;
        let url = format!("{}{}", self.base_url, files::FILES_PATH);
        let raw = self
            .send_raw(
                Method::Post,
                &url,
                Some((&frame.content_type, body.into())),
                None,
            )
            .await?;
        decode(raw, files::FILES_PATH)
    }

    /// `DELETE /v1/files/{file_id}`; a file already gone (404) is deleted too.
    pub async fn delete_file(&self, file_id: &str) -> Result<(), CallOutcome> {
        let path = format!("{}/{file_id}", files::FILES_PATH);
        match self
            .call::<(), FileDeleted>(Method::Delete, &path, None, None)
            .await
        {
            Ok(_) | Err(CallOutcome::Http { status: 404, .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// `POST /v1/messages/batches/{id}/cancel`.
    pub async fn cancel_batch(&self, id: &str) -> Result<MessageBatch, CallOutcome> {
        let path = format!("/v1/messages/batches/{id}/cancel");
        self.call::<(), _>(Method::Post, &path, None, None).await
    }

    /// `POST /v1/messages/batches`, its body already assembled (`message_batches::flush`).
    pub async fn create_batch_body(&self, body: JsValue) -> Result<MessageBatch, CallOutcome> {
        self.post_body("/v1/messages/batches", body).await
    }

    /// `GET /v1/messages/batches/{id}`.
    pub async fn retrieve_batch(&self, id: &str) -> Result<MessageBatch, CallOutcome> {
        let path = format!("/v1/messages/batches/{id}");
        self.call::<(), _>(Method::Get, &path, None, None).await
    }

    /// The JSONL results at a batch's `results_url`, as a stream of bytes (a batch of 100,000
    /// answers is far larger than what an isolate should hold). The timeout covers the answer's
    /// headers; the body is read at the caller's pace. The endpoint "streams the results of a
    /// Message Batch as a .jsonl file", one result per line, "not guaranteed to be in the same
    /// order as requests" — matched by `custom_id`
    /// (docs.anthropic.com/en/api/retrieving-message-batch-results).
    pub async fn batch_results(&self, url: &str) -> Result<worker::ByteStream, CallOutcome> {
        let net = |e: worker::Error| CallOutcome::Network(e.to_string());
        let headers = Headers::new();
        headers.set(header::API_KEY, &self.api_key).map_err(net)?;
        headers.set(header::VERSION, API_VERSION).map_err(net)?;
        let mut init = RequestInit::new();
        init.with_method(Method::Get).with_headers(headers);
        let request = Request::new_with_init(url, &init).map_err(net)?;
        let slot = self.meter.connect().await.map_err(net)?;
        let fetch = Fetch::Request(request);
        let exchange = fetch.send();
        let timer = Delay::from(self.timeout);
        pin_mut!(exchange);
        pin_mut!(timer);
        let mut resp = match select(exchange, timer).await {
            Either::Left((r, _)) => r.map_err(net)?,
            Either::Right(_) => return Err(CallOutcome::Timeout),
        };
        drop(slot);
        let status = resp.status_code();
        if (200..300).contains(&status) {
            return resp.stream().map_err(net);
        }
        let text = resp.text().await.unwrap_or_default();
        Err(http_error(&Raw {
            status,
            text,
            retry_after_s: None,
            reported: Vec::new(),
            error_type: None,
        }))
    }

    /// [`Anthropic::call`] for a POST whose JSON body is already assembled.
    async fn post_body<T: DeserializeOwned>(
        &self,
        path: &str,
        body: JsValue,
    ) -> Result<T, CallOutcome> {
        let url = format!("{}{path}", self.base_url);
        decode(
            self.send_raw(Method::Post, &url, Some((JSON, body)), None)
                .await?,
            path,
        )
    }

    async fn call<B: Serialize, T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&B>,
        job_id: Option<&str>,
    ) -> Result<T, CallOutcome> {
        let url = format!("{}{path}", self.base_url);
        decode(self.send(method, &url, body, job_id).await?, path)
    }

    /// Sends one request and reads the whole answer, racing our timeout: when it fires, the
    /// request is aborted and the outcome is [`CallOutcome::Timeout`].
    async fn send<B: Serialize>(
        &self,
        method: Method,
        url: &str,
        body: Option<&B>,
        job_id: Option<&str>,
    ) -> Result<Raw, CallOutcome> {
        let body = match body {
            Some(b) => Some((JSON, json_body(b)?)),
            None => None,
        };
        self.send_raw(method, url, body, job_id).await
    }

    /// [`Anthropic::send`] with a body already encoded: `(content type, body)`.
    async fn send_raw(
        &self,
        method: Method,
        url: &str,
        body: Option<(&str, JsValue)>,
        job_id: Option<&str>,
    ) -> Result<Raw, CallOutcome> {
        let net = |e: worker::Error| CallOutcome::Network(e.to_string());
        let headers = Headers::new();
        headers.set(header::API_KEY, &self.api_key).map_err(net)?;
        headers.set(header::VERSION, API_VERSION).map_err(net)?;
        if let Some(job) = job_id {
            headers.set(JOB_HEADER, job).map_err(net)?;
        }
        let mut init = RequestInit::new();
        init.with_method(method).with_headers(headers);
        if let Some((ctype, b)) = body {
            init.headers.set("content-type", ctype).map_err(net)?;
            init.with_body(Some(b));
        }
        let request = Request::new_with_init(url, &init).map_err(net)?;
        self.exchange(request).await
    }

    /// Sends a request made elsewhere (another route's, `crate::providers`) and reads the
    /// whole answer, racing the timeout: when it fires, the request is aborted and the outcome
    /// is [`CallOutcome::Timeout`].
    pub(crate) async fn exchange(&self, request: Request) -> Result<Raw, CallOutcome> {
        let net = |e: worker::Error| CallOutcome::Network(e.to_string());
        // The slot is taken before the timer starts: waiting for one is not the API's time.
        let slot = self.meter.connect().await.map_err(net)?;
        let controller = AbortController::default();
        let signal = controller.signal();
        let exchange = async {
            let mut resp = Fetch::Request(request).send_with_signal(&signal).await?;
            drop(slot);
            let status = resp.status_code();
            let retry_after_s = resp
                .headers()
                .get(header::RETRY_AFTER)
                .ok()
                .flatten()
                .and_then(|v| v.trim().parse::<f64>().ok())
                .map(|s| s.ceil().max(0.0) as u32);
            let headers = resp.headers();
            let reported = reported(|name| headers.get(name).ok().flatten());
            let error_type = headers.get("x-amzn-errortype").ok().flatten();
            let text = resp.text().await?;
            Ok::<_, worker::Error>(Raw {
                status,
                text,
                retry_after_s,
                reported,
                error_type,
            })
        };
        let timer = Delay::from(self.timeout);
        pin_mut!(exchange);
        pin_mut!(timer);
        match select(exchange, timer).await {
            Either::Left((Ok(raw), _)) => Ok(raw),
            Either::Left((Err(e), _)) => Err(net(e)),
            Either::Right(_) => {
                controller.abort();
                Err(CallOutcome::Timeout)
            }
        }
    }
}

const JSON: &str = "application/json";

/// A request's JSON as a JS string, its one copy outside the Worker's memory.
fn json_body<B: Serialize>(body: &B) -> Result<JsValue, CallOutcome> {
    let json = serde_json::to_string(body)
        .map_err(|e| CallOutcome::Network(format!("cannot encode the request: {e}")))?;
    Ok(JsValue::from_str(&json))
}

/// A 2xx answer's body as `T`; anything else as an outcome.
fn decode<T: DeserializeOwned>(raw: Raw, path: &str) -> Result<T, CallOutcome> {
    if !(200..300).contains(&raw.status) {
        return Err(http_error(&raw));
    }
    serde_json::from_str(&raw.text)
        .map_err(|e| CallOutcome::Network(format!("unreadable answer from {path}: {e}")))
}

/// A Messages answer. A 2xx body that does not decode was still paid for: it is
/// [`CallOutcome::Undecodable`] (the job fails once, the body is kept), never a network error.
pub(crate) fn decode_answer(raw: Raw) -> Result<Message, CallOutcome> {
    if !(200..300).contains(&raw.status) {
        return Err(http_error(&raw));
    }
    serde_json::from_str(&raw.text).map_err(|e| CallOutcome::Undecodable {
        reason: format!("the paid answer from /v1/messages could not be decoded: {e}"),
        raw: raw.text,
    })
}

/// An error answer as an outcome, with the API's own message when it sent one.
fn http_error(raw: &Raw) -> CallOutcome {
    let message = serde_json::from_str::<ErrorResponse>(&raw.text)
        .map(|e| e.error.message)
        .unwrap_or_else(|_| raw.text.chars().take(200).collect());
    CallOutcome::Http {
        status: raw.status,
        message,
        retry_after_s: raw.retry_after_s,
    }
}

/// POSTs a JSON document to a URL (webhooks); any non-2xx answer is an error. The answer's body
/// is read (an unread body holds its connection).
pub async fn post_json<T: Serialize>(meter: &Meter, url: &str, payload: &T) -> worker::Result<()> {
    let body =
        serde_json::to_string(payload).map_err(|e| worker::Error::RustError(e.to_string()))?;
    let headers = Headers::new();
    headers.set("content-type", "application/json")?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(headers)
        .with_body(Some(JsValue::from_str(&body)));
    let slot = meter.connect().await?;
    let resp = Fetch::Request(Request::new_with_init(url, &init)?)
        .send()
        .await?;
    drop(slot);
    discard_body(&resp);
    if (200..300).contains(&resp.status_code()) {
        Ok(())
    } else {
        Err(worker::Error::RustError(format!(
            "webhook answered {}",
            resp.status_code()
        )))
    }
}

/// Cancels an answer's body we do not read (a webhook receiver's): an unread body holds its
/// connection open until the invocation ends. Cancelling needs no waiting on the receiver.
pub fn discard_body(resp: &worker::Response) {
    if let worker::ResponseBody::Stream(stream) = resp.body() {
        let _ = stream.cancel();
    }
}
