//! The HTTP layer under [`crate::client::Client`]: one reqwest client, JSON answers, and the
//! contract's error envelope. Suites that send deliberately odd requests (hostile input, raw
//! multipart) build them here and read the answer with [`send_json`].

use serde_json::Value;

/// A client for the Worker (and the simulator), with a generous timeout. It says it is a client
/// (`X-Requested-With`), as the SPA does: an open-mode stack refuses a body-less or non-JSON
/// write without it ([`pipeline::open_mode`]).
pub fn client() -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        pipeline::open_mode::CLIENT_HEADER,
        reqwest::header::HeaderValue::from_static("end2end"),
    );
    reqwest::Client::builder()
        .default_headers(headers)
        .timeout(std::time::Duration::from_secs(60))
        .build()
        .expect("http client")
}

/// `GET url` → (status, JSON body). Panics if the body is not JSON: every API answer is.
pub async fn get_json(url: &str) -> (u16, Value) {
    send_json(client().get(url)).await
}

/// What the local runtime (workerd) answers, in plain text, when the isolate was restarted
/// before our Worker ran the request — an intermittent fault of the local runtime (README,
/// Known limits), never an answer of the Worker, which only answers JSON.
const RUNTIME_RESTARTED: &str = "Your worker restarted mid-request";

/// Any request → (status, JSON body). A request the local runtime refused with its
/// [`RUNTIME_RESTARTED`] 503 (the Worker never saw it) is sent once more.
pub async fn send_json(req: reqwest::RequestBuilder) -> (u16, Value) {
    let (status, ctype, text) = send_text(req).await;
    json_of(status, &ctype, &text)
}

/// Any request → (status, content type, body text), sent once more after the runtime's own
/// [`RUNTIME_RESTARTED`] 503 as [`send_json`] does.
pub async fn send_text(req: reqwest::RequestBuilder) -> (u16, String, String) {
    let again = req.try_clone();
    let resp = req.send().await.expect("request");
    let (status, ctype, text) = parts(resp).await;
    if status == 503 && text.starts_with(RUNTIME_RESTARTED) {
        if let Some(again) = again {
            eprintln!("the local runtime restarted before the Worker ran a request; sent again");
            return parts(again.send().await.expect("request")).await;
        }
    }
    (status, ctype, text)
}

async fn parts(resp: reqwest::Response) -> (u16, String, String) {
    let status = resp.status().as_u16();
    let ctype = content_type(&resp);
    (status, ctype, resp.text().await.expect("body"))
}

fn json_of(status: u16, ctype: &str, text: &str) -> (u16, Value) {
    let json = serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("{status} answer is not JSON ({ctype}): {e}: {text}"));
    (status, json)
}

/// The answer's `content-type`, or "" without one.
pub fn content_type(resp: &reqwest::Response) -> String {
    resp.headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

/// Asserts the contract's error envelope: status, `code`, and a human message.
pub fn assert_error(status: u16, body: &Value, want_status: u16, want_code: &str) {
    assert_eq!(status, want_status, "{body}");
    assert_eq!(body["code"], want_code, "{body}");
    assert!(
        body["error"].as_str().is_some_and(|m| !m.is_empty()),
        "error message missing: {body}"
    );
}

/// The `id` of every item of a list answer.
pub fn ids(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap().to_string())
        .collect()
}
