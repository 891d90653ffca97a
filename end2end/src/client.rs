//! One client for the Worker's API, handed out by the stack per caller — as zero2prod's
//! `TestApp` does: `s.anon()`, `s.user("ann")` (open mode's `x-user-id`) or `s.key(&key)` (a
//! bearer key). Each method sends one request and checks what the contract promises of every
//! answer of its kind (a submission's 202 acknowledgement, a read's 200), so a test states only
//! what is particular to it.

use std::sync::Arc;

use reqwest::Method;
use serde_json::Value;

use crate::api::{client, send_json};
use crate::stack::TestStack;

/// Who a request is sent as.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Caller {
    /// No identity header (open mode: `anonymous`; keys mode: a 401).
    Anonymous,
    /// `x-user-id` (open mode).
    User(String),
    /// `Authorization: Bearer <key>`.
    Key(String),
}

/// The API as one caller sees it.
#[derive(Clone)]
pub struct Client {
    stack: Arc<TestStack>,
    caller: Caller,
}

/// Files of an upload: (name, bytes).
pub type Files = [(String, Vec<u8>)];

impl TestStack {
    /// The API without an identity header.
    pub fn anon(self: &Arc<Self>) -> Client {
        self.client(Caller::Anonymous)
    }

    /// The API as `user` (open mode's `x-user-id`).
    pub fn user(self: &Arc<Self>, user: &str) -> Client {
        self.client(Caller::User(user.to_string()))
    }

    /// The API with a bearer key (`None`: without one).
    pub fn key(self: &Arc<Self>, key: Option<&str>) -> Client {
        self.client(key.map_or(Caller::Anonymous, |k| Caller::Key(k.to_string())))
    }

    fn client(self: &Arc<Self>, caller: Caller) -> Client {
        Client {
            stack: self.clone(),
            caller,
        }
    }
}

impl Client {
    /// Who this client is, for messages: the user, `key …`, or `anonymous`.
    pub fn who(&self) -> String {
        match &self.caller {
            Caller::Anonymous => "anonymous".into(),
            Caller::User(u) => u.clone(),
            Caller::Key(k) => format!("key {}…", &k[..k.len().min(8)]),
        }
    }

    /// The stack this client talks to.
    pub fn stack(&self) -> &Arc<TestStack> {
        &self.stack
    }

    /// A request to `path` carrying this caller's identity, to finish and send.
    pub fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        let rb = client().request(method, self.stack.url(path));
        match &self.caller {
            Caller::Anonymous => rb,
            Caller::User(u) => rb.header("x-user-id", u),
            Caller::Key(k) => rb.header("authorization", format!("Bearer {k}")),
        }
    }

    /// A request with a JSON body.
    pub fn json_request(
        &self,
        method: Method,
        path: &str,
        body: &Value,
    ) -> reqwest::RequestBuilder {
        self.request(method, path)
            .header("content-type", "application/json")
            .body(body.to_string())
    }

    /// `GET path` → (status, JSON body).
    pub async fn get(&self, path: &str) -> (u16, Value) {
        send_json(self.request(Method::GET, path)).await
    }

    /// `GET path`, asserting 200; the body.
    pub async fn get_ok(&self, path: &str) -> Value {
        let (status, body) = self.get(path).await;
        assert_eq!(status, 200, "GET {path}: {body}");
        body
    }

    /// `POST path` without a body → (status, JSON body).
    pub async fn post(&self, path: &str) -> (u16, Value) {
        send_json(self.request(Method::POST, path)).await
    }

    /// `POST path` without a body, asserting 200 (the ops endpoints); the body.
    pub async fn post_ok(&self, path: &str) -> Value {
        let (status, body) = self.post(path).await;
        assert_eq!(status, 200, "{path}: {body}");
        body
    }

    /// `POST path` with a JSON body → (status, JSON body).
    pub async fn post_json(&self, path: &str, body: &Value) -> (u16, Value) {
        send_json(self.json_request(Method::POST, path, body)).await
    }

    /// `PUT path` with a JSON body → (status, JSON body).
    pub async fn put_json(&self, path: &str, body: &Value) -> (u16, Value) {
        send_json(self.json_request(Method::PUT, path, body)).await
    }

    /// `DELETE path` → (status, JSON body).
    pub async fn delete(&self, path: &str) -> (u16, Value) {
        send_json(self.request(Method::DELETE, path)).await
    }

    /// `GET path` as text, asserting 200: (content type, body) — results and CSV exports.
    pub async fn get_text(&self, path: &str) -> (String, String) {
        let resp = self.request(Method::GET, path).send().await.expect("GET");
        assert_eq!(resp.status().as_u16(), 200, "GET {path}");
        let ctype = crate::api::content_type(&resp);
        (ctype, resp.text().await.expect("body"))
    }

    // ---- prompt jobs ----

    /// `POST /jobs`; asserts the 202 acknowledgement of the contract and answers the job id.
    pub async fn submit_job(&self, body: &Value) -> String {
        let (status, ack) = self.post_json("/jobs", body).await;
        assert_eq!(status, 202, "{ack}");
        let id = ack["jobId"].as_str().expect("jobId").to_string();
        assert_eq!(ack["status"], "queued", "{ack}");
        assert_eq!(ack["pollUrl"], format!("/jobs/{id}"), "{ack}");
        id
    }

    /// `GET /jobs/:id`, asserting 200.
    pub async fn job(&self, id: &str) -> Value {
        self.get_ok(&format!("/jobs/{id}")).await
    }

    /// `POST /jobs/:id/cancel` → (status, JSON body).
    pub async fn cancel(&self, id: &str) -> (u16, Value) {
        self.post(&format!("/jobs/{id}/cancel")).await
    }

    /// Every job of this caller, following the list's cursor.
    pub async fn all_jobs(&self) -> Vec<Value> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let path = match &cursor {
                Some(c) => format!("/jobs?limit=100&cursor={c}"),
                None => "/jobs?limit=100".to_string(),
            };
            let page = self.get_ok(&path).await;
            items.extend(page["items"].as_array().cloned().unwrap_or_default());
            match page["next_cursor"].as_str() {
                Some(c) => cursor = Some(c.to_string()),
                None => return items,
            }
        }
    }

    // ---- feedback ----

    /// `POST /feedback`; asserts the 202 acknowledgement of the contract (the mode asked for
    /// echoed) and answers the id.
    pub async fn submit_feedback(&self, body: &Value) -> String {
        let (status, ack) = self.post_json("/feedback", body).await;
        assert_eq!(status, 202, "{ack}");
        assert_eq!(ack["ok"], true, "{ack}");
        assert_eq!(ack["status"], "queued", "{ack}");
        if let Some(mode) = body["mode"].as_str() {
            assert_eq!(ack["mode"], mode, "{ack}");
        }
        ack["id"].as_str().expect("id").to_string()
    }

    /// `GET /api/feedback/:id`, asserting 200.
    pub async fn feedback(&self, id: &str) -> Value {
        self.get_ok(&format!("/api/feedback/{id}")).await
    }

    // ---- uploads ----

    /// A multipart upload of `files` to `POST /batches`, with optional form fields.
    pub fn upload_request(
        &self,
        files: &Files,
        fields: &[(&str, &str)],
    ) -> reqwest::RequestBuilder {
        let mut form = reqwest::multipart::Form::new();
        for (name, bytes) in files {
            let part = reqwest::multipart::Part::bytes(bytes.clone())
                .file_name(name.clone())
                .mime_str("application/pdf")
                .expect("mime");
            form = form.part("files", part);
        }
        for (k, v) in fields {
            form = form.text(k.to_string(), v.to_string());
        }
        self.request(Method::POST, "/batches").multipart(form)
    }

    /// [`Self::upload_request`] sent → (status, JSON body).
    pub async fn upload(&self, files: &Files, fields: &[(&str, &str)]) -> (u16, Value) {
        send_json(self.upload_request(files, fields)).await
    }

    /// An upload that must be accepted: asserts the 202 acknowledgement of the contract and
    /// answers the upload's id.
    pub async fn submit_upload(&self, files: &Files, fields: &[(&str, &str)]) -> String {
        let (status, ack) = self.upload(files, fields).await;
        assert_eq!(status, 202, "{ack}");
        let id = ack["batchId"].as_str().expect("batchId").to_string();
        assert_eq!(ack["total"], files.len(), "{ack}");
        assert_eq!(ack["pollUrl"], format!("/batches/{id}"), "{ack}");
        id
    }

    /// `GET /batches/:id`, asserting 200.
    pub async fn batch(&self, id: &str) -> Value {
        self.get_ok(&format!("/batches/{id}")).await
    }
}
