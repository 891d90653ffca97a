//! Multi-PDF uploads suite: `POST /batches` with real PDFs made in the test, through the real
//! local stack and the simulator — limits, refusals that leave nothing behind, harmless names,
//! each file summarized and extracted (sync and through Message Batches), an encrypted file
//! failing alone, cancel, ownership, and a 100-PDF upload beside the high lane.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use end2end::api::{assert_error, client, get_job, post_ok, send_json, submit_job, upload};
use end2end::{eventually, pdfs, run_suite, tests, TestStack};
use serde_json::Value;

fn main() -> ExitCode {
    run_suite(
        "uploads",
        tests![
            one_pdf_is_summarized_and_extracted_and_its_result_served,
            an_encrypted_pdf_fails_alone_with_a_clear_reason,
            duplicate_and_hostile_names_are_accepted_and_harmless,
            zero_or_a_hundred_and_one_files_are_refused_and_nothing_is_stored,
            a_renamed_png_an_empty_file_or_a_21_mb_file_is_refused_and_nothing_is_stored,
            a_body_that_is_not_multipart_is_a_415,
            an_upload_can_be_canceled_before_it_runs,
            other_users_uploads_are_404,
            a_hundred_pdfs_are_accepted_and_complete_without_slowing_the_high_lane,
        ],
    )
}

/// Files of an upload: (name, bytes).
type Files = Vec<(String, Vec<u8>)>;

fn pdf(name: &str, title: &str, pages: usize) -> (String, Vec<u8>) {
    (name.to_string(), pdfs::make(title, pages))
}

async fn accepted(s: &TestStack, user: &str, files: &[(String, Vec<u8>)], mode: &str) -> String {
    let (status, ack) = send_json(upload(&s.base_url, user, files, &[("mode", mode)])).await;
    assert_eq!(status, 202, "{ack}");
    let id = ack["batchId"].as_str().unwrap().to_string();
    assert_eq!(ack["total"], files.len());
    assert_eq!(ack["pollUrl"], format!("/batches/{id}"));
    id
}

async fn batch(s: &TestStack, user: &str, id: &str) -> Value {
    let (status, b) = send_json(
        client()
            .get(s.url(&format!("/batches/{id}")))
            .header("x-user-id", user),
    )
    .await;
    assert_eq!(status, 200, "{b}");
    b
}

/// Waits until every file of the upload has ended, running the batch machinery as the cron
/// does (batch mode is flushed and polled by it).
async fn finished(s: &Arc<TestStack>, user: &str, id: &str, secs: u64) -> Value {
    eventually(
        &format!("upload {id} finishes"),
        Duration::from_secs(secs),
        || async {
            let b = batch(s, user, id).await;
            if b["done"] == b["total"] {
                return Some(b);
            }
            post_ok(&s.base_url, "/api/batches/poll").await;
            tokio::time::sleep(Duration::from_millis(500)).await;
            None
        },
    )
    .await
}

async fn one_pdf_is_summarized_and_extracted_and_its_result_served(s: Arc<TestStack>) {
    let user = "one";
    let id = accepted(&s, user, &[pdf("plan.pdf", "Quarterly plan", 3)], "sync").await;
    let b = finished(&s, user, &id, 60).await;
    assert_eq!(b["counts"]["completed"], 1, "{b}");
    let f = &b["files"][0];
    assert_eq!(f["file_name"], "plan.pdf");
    assert_eq!(f["extraction"]["title"], "Quarterly plan", "{f}");
    assert_eq!(f["extraction"]["page_count"], 3);
    assert!(f["extraction"]["summary"]
        .as_str()
        .unwrap()
        .contains("3-page"));
    // The instructions and the document sit behind cache breakpoints: written on first use.
    let written = f["cache_write_tokens"].as_u64().unwrap();
    assert!(written >= 4_500, "three pages of 1,500 tokens: {f}");
    assert!(b["cost_micros"].as_u64().unwrap() > 0);
    // The same PDF sent again for another extraction reads it from the cache, for less.
    let (status, ack) = send_json(upload(
        &s.base_url,
        user,
        &[pdf("plan.pdf", "Quarterly plan", 3)],
        &[("mode", "sync"), ("template", "brief")],
    ))
    .await;
    assert_eq!(status, 202, "{ack}");
    let again = finished(&s, user, ack["batchId"].as_str().unwrap(), 60).await;
    let g = &again["files"][0];
    assert_eq!(again["template"], "brief");
    assert_eq!(g["cache_read_tokens"].as_u64().unwrap(), written, "{g}");
    assert!(g["cost_micros"].as_u64().unwrap() < f["cost_micros"].as_u64().unwrap());
    let job = f["job_id"].as_str().unwrap();
    let resp = client()
        .get(s.url(&format!("/jobs/{job}/result")))
        .header("x-user-id", user)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert!(resp.text().await.unwrap().contains("Quarterly plan"));
    assert_eq!(s.billed(job), 1);
}

async fn an_encrypted_pdf_fails_alone_with_a_clear_reason(s: Arc<TestStack>) {
    let user = "locked";
    let files = vec![
        ("open.pdf".to_string(), pdfs::make("Open", 1)),
        ("locked.pdf".to_string(), pdfs::encrypted("Locked")),
    ];
    let id = accepted(&s, user, &files, "sync").await;
    let b = finished(&s, user, &id, 60).await;
    assert_eq!(b["files"][0]["status"], "completed", "{b}");
    assert_eq!(b["files"][1]["status"], "failed", "{b}");
    let reason = b["files"][1]["error"].as_str().unwrap();
    assert!(reason.contains("password protected"), "{reason}");
}

async fn duplicate_and_hostile_names_are_accepted_and_harmless(s: Arc<TestStack>) {
    let user = "names";
    let files = vec![
        pdf("same.pdf", "First", 1),
        pdf("same.pdf", "Second", 1),
        pdf("../../x.pdf", "Escape", 1),
        pdf("bad\u{1b}[31mname\u{7}.pdf", "Control", 1),
        pdf("<img src=x onerror=alert(1)>.pdf", "Markup", 1),
    ];
    let id = accepted(&s, user, &files, "sync").await;
    let b = finished(&s, user, &id, 60).await;
    let names: Vec<&str> = b["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file_name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "same.pdf",
            "same.pdf",
            "x.pdf",
            "bad[31mname.pdf",
            "<img src=x onerror=alert(1)>.pdf"
        ]
    );
    assert_eq!(b["counts"]["completed"], 5, "{b}");
}

async fn zero_or_a_hundred_and_one_files_are_refused_and_nothing_is_stored(s: Arc<TestStack>) {
    let user = "limits";
    let objects = s.r2_objects();
    let (status, body) = send_json(upload(&s.base_url, user, &[], &[("mode", "sync")])).await;
    assert_error(status, &body, 400, "invalid_file_count");
    assert!(body["error"]
        .as_str()
        .unwrap()
        .contains("send between 1 and 100 files"));
    let many: Vec<_> = (0..101)
        .map(|i| pdf(&format!("f{i}.pdf"), "Tiny", 1))
        .collect();
    let (status, body) = send_json(upload(&s.base_url, user, &many, &[])).await;
    assert_error(status, &body, 400, "invalid_file_count");
    assert_eq!(s.r2_objects(), objects, "no object left behind");
    let (_, list) = send_json(client().get(s.url("/batches")).header("x-user-id", user)).await;
    assert_eq!(list["items"], serde_json::json!([]), "no upload row");
    let (_, jobs) = send_json(client().get(s.url("/jobs")).header("x-user-id", user)).await;
    assert_eq!(jobs["items"], serde_json::json!([]), "no job row");
}

async fn a_renamed_png_an_empty_file_or_a_21_mb_file_is_refused_and_nothing_is_stored(
    s: Arc<TestStack>,
) {
    let user = "bad-files";
    let objects = s.r2_objects();
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    let cases: Vec<(Files, u16, &str)> = vec![
        (
            vec![pdf("good.pdf", "Good", 1), ("photo.pdf".into(), png)],
            400,
            "not_a_pdf",
        ),
        (
            vec![pdf("good.pdf", "Good", 1), ("empty.pdf".into(), Vec::new())],
            400,
            "empty_file",
        ),
        (
            vec![pdf("good.pdf", "Good", 1), {
                let mut big = pdfs::make("Big", 1);
                big.resize(21 * 1024 * 1024, b' ');
                ("big.pdf".to_string(), big)
            }],
            413,
            "file_too_large",
        ),
    ];
    for (files, want, code) in cases {
        let (status, body) = send_json(upload(&s.base_url, user, &files, &[])).await;
        assert_error(status, &body, want, code);
        assert_eq!(body["field"], "files", "{body}");
        assert_eq!(
            s.r2_objects(),
            objects,
            "{code}: the good file was removed too"
        );
    }
    let (_, list) = send_json(client().get(s.url("/batches")).header("x-user-id", user)).await;
    assert_eq!(list["items"], serde_json::json!([]));
}

async fn a_body_that_is_not_multipart_is_a_415(s: Arc<TestStack>) {
    let (status, body) = send_json(
        client()
            .post(s.url("/batches"))
            .header("content-type", "application/json")
            .body("{}"),
    )
    .await;
    assert_error(status, &body, 415, "unsupported_media_type");
    let (status, body) = send_json(
        client()
            .post(s.url("/batches"))
            .header("content-type", "multipart/form-data; boundary=xyz")
            .body("this is not multipart"),
    )
    .await;
    assert_eq!(status, 400, "{body}");
}

async fn an_upload_can_be_canceled_before_it_runs(s: Arc<TestStack>) {
    let user = "cancel";
    let files: Vec<_> = (0..3)
        .map(|i| pdf(&format!("c{i}.pdf"), "Later", 1))
        .collect();
    let id = accepted(&s, user, &files, "batch").await;
    let (status, b) = send_json(
        client()
            .post(s.url(&format!("/batches/{id}/cancel")))
            .header("x-user-id", user),
    )
    .await;
    assert_eq!(status, 200, "{b}");
    assert_eq!(b["counts"]["canceled"], 3, "{b}");
    assert!(b["canceled_at"].is_i64());
    // The machinery runs; nothing is sent.
    post_ok(&s.base_url, "/api/batches/flush").await;
    tokio::time::sleep(Duration::from_secs(4)).await;
    post_ok(&s.base_url, "/api/batches/flush").await;
    let b = batch(&s, user, &id).await;
    for f in b["files"].as_array().unwrap() {
        assert_eq!(f["status"], "canceled");
        assert_eq!(s.billed(f["job_id"].as_str().unwrap()), 0);
    }
}

async fn other_users_uploads_are_404(s: Arc<TestStack>) {
    let id = accepted(&s, "owner", &[pdf("mine.pdf", "Mine", 1)], "sync").await;
    for (method, path) in [
        ("GET", format!("/batches/{id}")),
        ("POST", format!("/batches/{id}/cancel")),
        ("GET", "/batches/not-an-id".to_string()),
    ] {
        let rb = if method == "GET" {
            client().get(s.url(&path))
        } else {
            client().post(s.url(&path))
        };
        let (status, body) = send_json(rb.header("x-user-id", "intruder")).await;
        assert_error(status, &body, 404, "not_found");
    }
    let (_, list) = send_json(
        client()
            .get(s.url("/batches"))
            .header("x-user-id", "intruder"),
    )
    .await;
    assert_eq!(list["items"], serde_json::json!([]));
    finished(&s, "owner", &id, 60).await;
}

async fn high_job_ms(s: &TestStack, user: &str) -> i64 {
    let body = serde_json::json!({"prompt": "Interactive, please.", "max_tokens": 50, "output_config": {"effort": "low"}});
    let id = submit_job(&s.base_url, user, &body).await;
    eventually(
        "the high-lane job completes",
        Duration::from_secs(60),
        || async {
            let j = get_job(&s.base_url, user, &id).await;
            (j["status"] == "completed").then(|| j["elapsed_ms"].as_i64().unwrap())
        },
    )
    .await
}

async fn a_hundred_pdfs_are_accepted_and_complete_without_slowing_the_high_lane(s: Arc<TestStack>) {
    let user = "hundred";
    let idle = high_job_ms(&s, user).await;
    let files: Vec<_> = (0..100)
        .map(|i| {
            pdf(
                &format!("doc-{i:03}.pdf"),
                &format!("Report {i}"),
                1 + i % 4,
            )
        })
        .collect();
    let bytes: usize = files.iter().map(|(_, b)| b.len()).sum();
    let t0 = Instant::now();
    let id = accepted(&s, user, &files, "batch").await;
    let accept = t0.elapsed();
    // While the upload is being worked through, an interactive job on the high lane.
    let busy = high_job_ms(&s, user).await;
    let b = finished(&s, user, &id, 170).await;
    let all = t0.elapsed();
    assert_eq!(b["total"], 100);
    assert_eq!(b["counts"]["completed"], 100, "{}", b["counts"]);
    println!(
        "    100 PDFs ({} KB): accepted in {:.2} s, all completed in {:.1} s (batch mode); \
         high-lane job {idle} ms idle, {busy} ms during the upload",
        bytes / 1024,
        accept.as_secs_f64(),
        all.as_secs_f64()
    );
    assert!(
        busy < idle + 3_000,
        "the upload slowed the high lane: {busy} ms vs {idle} ms idle"
    );
    for f in b["files"].as_array().unwrap() {
        assert_eq!(s.billed(f["job_id"].as_str().unwrap()), 1);
        assert!(f["extraction"]["title"]
            .as_str()
            .unwrap()
            .starts_with("Report "));
    }
}
