//! Hostile input suite: malformed, oversized, mistyped, misrouted and unauthorised requests
//! against every endpoint. Each is refused with the contract's JSON error and status, and after
//! each the suite checks that nothing was left behind — no row, no R2 object — and that the
//! Worker still answers; at the end, that no queue message reached a consumer without its row.
//! Input that is legitimate data (markup in a text, odd file names) is accepted and stays inert.
//!
//! One file on purpose, though over 400 lines: a suite is one stack and one module (run by name
//! by `cargo xtask test`), and its scenarios share that stack.

use std::sync::Arc;
use std::time::Duration;

use end2end::api::content_type;
use end2end::browser::{check_text, find, screenshot, Browser};
use end2end::{tests, Suite, TestStack};
use serde_json::{json, Value};

pub fn suite() -> Suite {
    end2end::suite(
        "hostile",
        tests![
            every_hostile_request_is_refused_cleanly_and_leaves_nothing_behind,
            markup_and_odd_names_are_accepted_as_inert_data,
            another_users_ids_are_404_everywhere_and_change_nothing,
        ],
    )
}

const USER: &str = "hostile";

/// One hostile request and the answer it must get.
struct Case {
    name: &'static str,
    method: &'static str,
    path: String,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
    status: u16,
    code: &'static str,
}

fn case(
    name: &'static str,
    method: &'static str,
    path: &str,
    status: u16,
    code: &'static str,
) -> Case {
    Case {
        name,
        method,
        path: path.to_string(),
        headers: vec![("x-user-id", USER.to_string())],
        body: Vec::new(),
        status,
        code,
    }
}

impl Case {
    fn json(mut self, body: impl Into<Vec<u8>>) -> Case {
        self.headers
            .push(("content-type", "application/json".into()));
        self.body = body.into();
        self
    }
    fn header(mut self, name: &'static str, value: impl Into<String>) -> Case {
        self.headers.push((name, value.into()));
        self
    }
    fn raw(mut self, ctype: &str, body: impl Into<Vec<u8>>) -> Case {
        self.headers.push(("content-type", ctype.to_string()));
        self.body = body.into();
        self
    }
}

/// A multipart body of `files` (name, bytes), with its content type.
fn multipart(files: &[(&str, Vec<u8>)]) -> (String, Vec<u8>) {
    let boundary = "hostileBoundary7MA4YWxk";
    let mut body = Vec::new();
    for (name, bytes) in files {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"{name}\"\r\n\
                 Content-Type: application/pdf\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

fn cases() -> Vec<Case> {
    let pdf = end2end::pdfs::make("Hostile", 1);
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    let long_text = "a".repeat(10_001);
    let long_prompt = "p".repeat(200_001);
    let (mp_png_type, mp_png) = multipart(&[("image.pdf", png.clone())]);
    let (mp_empty_type, mp_empty) = multipart(&[("empty.pdf", Vec::new())]);
    let (mp_none_type, mp_none) = multipart(&[]);
    let many: Vec<(&str, Vec<u8>)> = (0..101).map(|_| ("f.pdf", pdf.clone())).collect();
    let (mp_many_type, mp_many) = multipart(&many);
    vec![
        // POST /feedback
        case(
            "feedback: malformed JSON",
            "POST",
            "/feedback",
            400,
            "invalid_json",
        )
        .json(r#"{"text": "#),
        case(
            "feedback: a JSON array",
            "POST",
            "/feedback",
            400,
            "invalid_body",
        )
        .json("[1,2]"),
        case(
            "feedback: JSON null",
            "POST",
            "/feedback",
            400,
            "invalid_body",
        )
        .json("null"),
        case(
            "feedback: text of the wrong type",
            "POST",
            "/feedback",
            400,
            "invalid_field",
        )
        .json(r#"{"text": 42}"#),
        case(
            "feedback: text missing",
            "POST",
            "/feedback",
            400,
            "invalid_field",
        )
        .json(r#"{"mode": "sync"}"#),
        case(
            "feedback: empty text",
            "POST",
            "/feedback",
            400,
            "invalid_field",
        )
        .json(r#"{"text": "   "}"#),
        case(
            "feedback: text over 10,000 characters",
            "POST",
            "/feedback",
            400,
            "invalid_field",
        )
        .json(json!({"text": long_text}).to_string()),
        case(
            "feedback: unknown mode",
            "POST",
            "/feedback",
            400,
            "invalid_field",
        )
        .json(r#"{"text": "x", "mode": "turbo"}"#),
        case(
            "feedback: an unknown field",
            "POST",
            "/feedback",
            400,
            "unknown_field",
        )
        .json(r#"{"text": "x", "priority": "high"}"#),
        case(
            "feedback: empty body",
            "POST",
            "/feedback",
            400,
            "invalid_json",
        )
        .json(""),
        case(
            "feedback: invalid UTF-8",
            "POST",
            "/feedback",
            400,
            "invalid_json",
        )
        .json(b"{\"text\": \"\xff\xfe\"}".to_vec()),
        case(
            "feedback: not JSON",
            "POST",
            "/feedback",
            415,
            "unsupported_media_type",
        )
        .raw("text/plain", "hello"),
        case(
            "feedback: body over 4 MB",
            "POST",
            "/feedback",
            413,
            "body_too_large",
        )
        .json(vec![b' '; 5 * 1024 * 1024]),
        // POST /jobs
        case("jobs: malformed JSON", "POST", "/jobs", 400, "invalid_json").json(r#"{"prompt": }"#),
        case(
            "jobs: prompt of the wrong type",
            "POST",
            "/jobs",
            400,
            "invalid_field",
        )
        .json(r#"{"prompt": ["a"]}"#),
        case(
            "jobs: prompt missing",
            "POST",
            "/jobs",
            400,
            "invalid_field",
        )
        .json(r#"{"priority": "high"}"#),
        case(
            "jobs: prompt over 200,000 characters",
            "POST",
            "/jobs",
            400,
            "invalid_field",
        )
        .json(json!({"prompt": long_prompt}).to_string()),
        case(
            "jobs: an unknown field",
            "POST",
            "/jobs",
            400,
            "unknown_field",
        )
        .json(r#"{"prompt": "x", "temperature": 2}"#),
        case("jobs: max_tokens 0", "POST", "/jobs", 400, "invalid_field")
            .json(r#"{"prompt": "x", "max_tokens": 0}"#),
        case(
            "jobs: max_tokens a string",
            "POST",
            "/jobs",
            400,
            "invalid_field",
        )
        .json(r#"{"prompt": "x", "max_tokens": "9"}"#),
        case(
            "jobs: unknown priority",
            "POST",
            "/jobs",
            400,
            "invalid_field",
        )
        .json(r#"{"prompt": "x", "priority": "urgent"}"#),
        case("jobs: unknown model", "POST", "/jobs", 400, "unknown_model")
            .json(r#"{"prompt": "x", "model": "gpt-9"}"#),
        case("jobs: retired model", "POST", "/jobs", 400, "unknown_model")
            .json(r#"{"prompt": "x", "model": "claude-sonnet-4-5"}"#),
        case("feedback: retired model", "POST", "/feedback", 400, "unknown_model")
            .json(r#"{"text": "x", "model": "claude-sonnet-4-5-20250929"}"#),
        case(
            "jobs: a thinking budget on Sonnet 5.5",
            "POST",
            "/jobs",
            400,
            "unsupported_by_model",
        )
        .json(r#"{"prompt": "x", "max_tokens": 4096, "thinking": {"type": "enabled", "budget_tokens": 2048}}"#),
        case(
            "jobs: Idempotency-Key with control characters",
            "POST",
            "/jobs",
            400,
            "invalid_idempotency_key",
        )
        .json(r#"{"prompt": "x"}"#)
        .header("idempotency-key", "a\tb"),
        case(
            "jobs: Idempotency-Key over 255 characters",
            "POST",
            "/jobs",
            400,
            "invalid_idempotency_key",
        )
        .json(r#"{"prompt": "x"}"#)
        .header("idempotency-key", "k".repeat(300)),
        case(
            "jobs: body over 2 MB",
            "POST",
            "/jobs",
            413,
            "body_too_large",
        )
        .json(json!({"prompt": "x".repeat(3 * 1024 * 1024)}).to_string()),
        case(
            "jobs: form-encoded",
            "POST",
            "/jobs",
            415,
            "unsupported_media_type",
        )
        .raw("application/x-www-form-urlencoded", "prompt=x"),
        // Lists and ids
        case(
            "jobs list: a bad cursor",
            "GET",
            "/jobs?cursor=%%%",
            400,
            "invalid_cursor",
        ),
        case(
            "jobs list: limit 0",
            "GET",
            "/jobs?limit=0",
            400,
            "invalid_limit",
        ),
        case(
            "jobs list: limit not a number",
            "GET",
            "/jobs?limit=ten",
            400,
            "invalid_limit",
        ),
        case(
            "jobs list: unknown status",
            "GET",
            "/jobs?status=done",
            400,
            "invalid_filter",
        ),
        case(
            "job: unknown id",
            "GET",
            "/jobs/0000000000000000",
            404,
            "not_found",
        ),
        case(
            "job: path traversal in the id",
            "GET",
            "/jobs/..%2F..%2Fetc%2Fpasswd",
            404,
            "not_found",
        ),
        case(
            "job result: unknown id",
            "GET",
            "/jobs/nope/result",
            404,
            "not_found",
        ),
        case(
            "job cancel: unknown id",
            "POST",
            "/jobs/nope/cancel",
            404,
            "not_found",
        ),
        case(
            "feedback: unknown id",
            "GET",
            "/api/feedback/nope",
            404,
            "not_found",
        ),
        case(
            "upload: unknown id",
            "GET",
            "/batches/nope",
            404,
            "not_found",
        ),
        case(
            "uploads list: a bad cursor",
            "GET",
            "/batches?cursor=xyz",
            400,
            "invalid_cursor",
        ),
        // POST /batches
        case(
            "upload: no files",
            "POST",
            "/batches",
            400,
            "invalid_file_count",
        )
        .raw(&mp_none_type, mp_none),
        case(
            "upload: 101 files",
            "POST",
            "/batches",
            400,
            "invalid_file_count",
        )
        .raw(&mp_many_type, mp_many),
        case(
            "upload: a PNG named .pdf",
            "POST",
            "/batches",
            400,
            "not_a_pdf",
        )
        .raw(&mp_png_type, mp_png),
        case(
            "upload: an empty file",
            "POST",
            "/batches",
            400,
            "empty_file",
        )
        .raw(&mp_empty_type, mp_empty),
        case(
            "upload: not multipart",
            "POST",
            "/batches",
            415,
            "unsupported_media_type",
        )
        .json(r#"{"files": []}"#),
        case(
            "upload: multipart without a boundary",
            "POST",
            "/batches",
            400,
            "invalid_multipart",
        )
        .raw("multipart/form-data", "--x--"),
        // Identity and headers
        case("a bad API key", "GET", "/jobs", 401, "unauthorized")
            .header("authorization", "Bearer cpk_not-a-key"),
        case("a Basic authorization", "GET", "/jobs", 401, "unauthorized")
            .header("authorization", "Basic YTpi"),
        case(
            "an x-user-id with spaces",
            "GET",
            "/jobs",
            400,
            "invalid_user_id",
        )
        .header("x-user-id", "a b"),
        case(
            "a huge x-user-id (16 KB)",
            "GET",
            "/jobs",
            400,
            "invalid_user_id",
        )
        .header("x-user-id", "u".repeat(16 * 1024)),
        case(
            "duplicate x-user-id headers (joined by the runtime, so not a user id)",
            "GET",
            "/jobs",
            400,
            "invalid_user_id",
        )
        .header("x-user-id", "other"),
        // Methods and paths
        case(
            "duplicate authorization headers (joined: not one bearer key)",
            "GET",
            "/jobs",
            401,
            "unauthorized",
        )
        .header("authorization", "Bearer a")
        .header("authorization", "Bearer b"),
        case(
            "DELETE /feedback",
            "DELETE",
            "/feedback",
            405,
            "method_not_allowed",
        ),
        case("PUT /jobs", "PUT", "/jobs", 405, "method_not_allowed"),
        case(
            "GET /api/dlq/x/replay",
            "GET",
            "/api/dlq/x/replay",
            405,
            "method_not_allowed",
        ),
        case("an unknown API path", "GET", "/api/nope", 404, "not_found"),
        // Ops endpoints with bad input
        case(
            "dlq: a bad filter",
            "GET",
            "/api/dlq?error_class=bogus",
            400,
            "invalid_error_class",
        ),
        case(
            "dlq replay: malformed edit",
            "POST",
            "/api/dlq/0000000000000000/replay",
            400,
            "invalid_json",
        )
        .json("{"),
        case(
            "usage: a bad date",
            "GET",
            "/api/usage?from=2026-02-30",
            400,
            "invalid_date",
        ),
        case(
            "budget: a negative cap",
            "PUT",
            "/api/usage/budget",
            400,
            "invalid_amount",
        )
        .json(r#"{"user_id": "x", "daily_cap_micros": -1}"#),
        case(
            "metrics: minutes out of range",
            "GET",
            "/api/metrics?minutes=99999",
            400,
            "invalid_minutes",
        ),
    ]
}

async fn send(s: &Arc<TestStack>, c: &Case) -> (u16, String, Value) {
    let method = reqwest::Method::from_bytes(c.method.as_bytes()).unwrap();
    let mut rb = s.anon().request(method, &c.path);
    for (k, v) in &c.headers {
        rb = rb.header(*k, v.as_str());
    }
    let resp = rb.body(c.body.clone()).send().await;
    let resp = match resp {
        Ok(r) => r,
        Err(e) => panic!("{}: no answer: {e}", c.name),
    };
    let status = resp.status().as_u16();
    let ctype = content_type(&resp);
    let text = resp.text().await.unwrap_or_default();
    let body = serde_json::from_str(&text).unwrap_or(Value::Null);
    (status, ctype, body)
}

/// What a refused request must not change: the user's rows and the bucket's objects.
async fn footprint(s: &Arc<TestStack>) -> (usize, usize, usize) {
    let (status, jobs) = s.user(USER).get("/jobs?limit=100").await;
    assert_eq!(status, 200, "the Worker still answers: {jobs}");
    let (status, uploads) = s.user(USER).get("/batches?limit=100").await;
    assert_eq!(status, 200, "{uploads}");
    (
        jobs["items"].as_array().unwrap().len(),
        uploads["items"].as_array().unwrap().len(),
        s.r2_objects(),
    )
}

async fn every_hostile_request_is_refused_cleanly_and_leaves_nothing_behind(s: Arc<TestStack>) {
    let before = footprint(&s).await;
    let all = cases();
    assert!(all.len() >= 40, "{} cases", all.len());
    let mut wrong = Vec::new();
    for c in &all {
        let (status, ctype, body) = send(&s, c).await;
        let ok = status == c.status
            && ctype.starts_with("application/json")
            && body["code"] == c.code
            && body["error"].as_str().is_some_and(|m| !m.is_empty());
        if !ok {
            wrong.push(format!("{}: {status} {ctype} {body}", c.name));
        }
        let after = footprint(&s).await;
        assert_eq!(
            after, before,
            "{} left something behind (jobs, uploads, R2 objects)",
            c.name
        );
    }
    assert!(
        wrong.is_empty(),
        "{} of {} cases answered wrongly:\n{}",
        wrong.len(),
        all.len(),
        wrong.join("\n")
    );
    // No message reached a consumer without its row (consumers count such orphans).
    end2end::pause(Duration::from_secs(3)).await;
    let rows = s
        .d1_now(
            "SELECT (SELECT COUNT(*) FROM jobs WHERE user_id = 'hostile') AS jobs, \
             (SELECT COUNT(*) FROM batches WHERE user_id = 'hostile') AS uploads, \
             (SELECT COUNT(*) FROM idempotency_keys WHERE user_id = 'hostile') AS keys, \
             (SELECT COALESCE(MAX(CAST(detail AS INTEGER)), 0) FROM heartbeats WHERE name = 'orphan_messages') AS orphans",
        )
        .await;
    assert_eq!(rows[0]["jobs"], 0, "{rows:?}");
    assert_eq!(rows[0]["uploads"], 0, "{rows:?}");
    assert_eq!(rows[0]["keys"], 0, "{rows:?}");
    assert_eq!(rows[0]["orphans"], 0, "{rows:?}");
}

async fn markup_and_odd_names_are_accepted_as_inert_data(s: Arc<TestStack>) {
    // Markup in a feedback text is data: stored and shown as text, never run.
    let text =
        r#"<img src=x onerror="window.__xss=1"><script>window.__xss=1</script> Export is broken"#;
    let id = s.anon().submit_feedback(&json!({"text": text})).await;
    let stored = s.anon().feedback(&id).await;
    assert_eq!(stored["text"], text, "stored as sent");
    // Odd file names: accepted, shown cleaned, never used as a path (objects are keyed by ids).
    let pdf = end2end::pdfs::make("Odd names", 1);
    let names = [
        "../../etc/passwd.pdf",
        "\u{1b}[31mred\u{7}.pdf",
        "<img src=x onerror=\"window.__xss=2\">.pdf",
        "con.pdf",
    ];
    let files: Vec<(String, Vec<u8>)> =
        names.iter().map(|n| (n.to_string(), pdf.clone())).collect();
    let batch = s.user("anonymous").submit_upload(&files, &[]).await;
    let view = s.anon().batch(&batch).await;
    let shown: Vec<String> = view["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file_name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        shown,
        [
            "passwd.pdf",
            "[31mred.pdf",
            "<img src=x onerror=\"window.__xss=2\">.pdf",
            "con.pdf"
        ],
        "{view}"
    );
    let keys = s
        .d1_now(&format!(
            "SELECT id, prompt_key FROM jobs WHERE batch_id = '{batch}'"
        ))
        .await;
    assert_eq!(keys.len(), 4);
    for k in &keys {
        assert_eq!(
            k["prompt_key"].as_str().unwrap(),
            format!("uploads/{batch}/{}.pdf", k["id"].as_str().unwrap())
        );
    }
    // The SPA shows both as text.
    let browser = Browser::launch(&s, "inert").await;
    let page = browser.open(&s.url("/")).await;
    check_text(
        &page,
        &format!("job-{id}"),
        "<script>window.__xss=1</script>",
    )
    .await;
    let xss = page.evaluate_value("String(window.__xss)").await.unwrap();
    assert_eq!(xss, "undefined", "the markup did not run");
    let upload = browser.open(&s.url(&format!("/ui/batches/{batch}"))).await;
    check_text(&upload, "page-batch", "<img src=x onerror=").await;
    assert_eq!(
        find(&upload, "page-batch")
            .locator("img")
            .count()
            .await
            .unwrap(),
        0
    );
    let xss = upload.evaluate_value("String(window.__xss)").await.unwrap();
    assert_eq!(xss, "undefined", "the file name did not run");
    screenshot(&page, &s, "inert-markup").await;
    browser.close().await;
}

async fn another_users_ids_are_404_everywhere_and_change_nothing(s: Arc<TestStack>) {
    // The owner's jobs: a bulk prompt (still waiting for its delivery), a feedback and an upload.
    let owner = s.user("hostile-owner");
    let job = owner
        .submit_job(&json!({"prompt": "Mine.", "priority": "bulk"}))
        .await;
    let fb = owner.submit_feedback(&json!({"text": "Mine too."})).await;
    let files = [("mine.pdf".to_string(), end2end::pdfs::make("Mine", 1))];
    let up = owner.submit_upload(&files, &[]).await;

    // The hostile user tries every path that takes an id: each is the same 404 as an unknown id.
    for (method, path) in [
        ("GET", format!("/jobs/{job}")),
        ("GET", format!("/jobs/{job}/result")),
        ("POST", format!("/jobs/{job}/cancel")),
        ("GET", format!("/api/feedback/{fb}")),
        ("GET", format!("/batches/{up}")),
        ("POST", format!("/batches/{up}/cancel")),
    ] {
        let c = case("another user's id", method, &path, 404, "not_found");
        let (status, ctype, body) = send(&s, &c).await;
        assert!(
            status == 404 && ctype.starts_with("application/json") && body["code"] == "not_found",
            "{method} {path}: {status} {body}"
        );
    }
    // Nothing changed for the owner: the job was not canceled, the upload neither.
    let job_now = owner.job(&job).await;
    assert_ne!(job_now["status"], "canceled", "{job_now}");
    let (status, up_now) = owner.get(&format!("/batches/{up}")).await;
    assert_eq!(status, 200, "{up_now}");
    assert!(
        up_now["canceled_at"].is_null() && up_now["counts"].get("canceled").is_none(),
        "the upload was not canceled: {up_now}"
    );
    // And the hostile user's own lists stay empty of them.
    let (_, mine) = s.user(USER).get("/jobs?limit=100").await;
    assert!(
        !mine.to_string().contains(&job) && !mine.to_string().contains(&fb),
        "{mine}"
    );
}
