//! HTTP helpers for the API suites.

use serde_json::Value;

/// A client for the Worker, with the identity header of open mode.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(60))
        .build()
        .expect("http client")
}

/// `GET url` → (status, JSON body). Panics if the body is not JSON: every API answer is.
pub async fn get_json(url: &str) -> (u16, Value) {
    let resp = client().get(url).send().await.expect("GET");
    read(resp).await
}

/// Any request → (status, JSON body).
pub async fn send_json(req: reqwest::RequestBuilder) -> (u16, Value) {
    read(req.send().await.expect("request")).await
}

async fn read(resp: reqwest::Response) -> (u16, Value) {
    let status = resp.status().as_u16();
    let ctype = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let text = resp.text().await.expect("body");
    let json = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{status} answer is not JSON ({ctype}): {e}: {text}"));
    (status, json)
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

/// `POST /jobs` as `user`; asserts the 202 acknowledgement and answers the job id.
pub async fn submit_job(base: &str, user: &str, body: &Value) -> String {
    let (status, ack) = send_json(
        client()
            .post(format!("{base}/jobs"))
            .header("x-user-id", user)
            .header("content-type", "application/json")
            .body(body.to_string()),
    )
    .await;
    assert_eq!(status, 202, "{ack}");
    ack["jobId"].as_str().expect("jobId").to_string()
}

/// `GET /jobs/:id` as `user`.
pub async fn get_job(base: &str, user: &str, id: &str) -> Value {
    let (status, j) = send_json(
        client()
            .get(format!("{base}/jobs/{id}"))
            .header("x-user-id", user),
    )
    .await;
    assert_eq!(status, 200, "{j}");
    j
}

/// Every job of `user`, following the list's cursor.
pub async fn all_jobs(base: &str, user: &str) -> Vec<Value> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let url = match &cursor {
            Some(c) => format!("{base}/jobs?limit=100&cursor={c}"),
            None => format!("{base}/jobs?limit=100"),
        };
        let (status, page) = send_json(client().get(url).header("x-user-id", user)).await;
        assert_eq!(status, 200, "{page}");
        items.extend(page["items"].as_array().cloned().unwrap_or_default());
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => return items,
        }
    }
}

/// `POST path` without a body (the ops endpoints of open mode); asserts 200.
pub async fn post_ok(base: &str, path: &str) -> Value {
    let (status, body) = send_json(client().post(format!("{base}{path}"))).await;
    assert_eq!(status, 200, "{path}: {body}");
    body
}

/// A multipart upload of `files` (name, bytes) to `POST /batches`, with optional form fields.
pub fn upload(
    base: &str,
    user: &str,
    files: &[(String, Vec<u8>)],
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
    client()
        .post(format!("{base}/batches"))
        .header("x-user-id", user)
        .multipart(form)
}
