//! Multi-PDF uploads suite: `POST /batches` with real PDFs made in the test, through the real
//! local stack and the simulator — limits, refusals that leave nothing behind, harmless names,
//! each file summarized and extracted (sync and through Message Batches), an encrypted file
//! failing alone, cancel, ownership, and a 100-PDF upload beside the high lane.

use std::sync::Arc;
use std::time::{Duration, Instant};

use end2end::api::{assert_error, send_json};
use end2end::{eventually, pdfs, tests, Client, Suite, TestStack};
use reqwest::Method;

pub fn suite() -> Suite {
    end2end::suite(
        "uploads",
        tests![
            each_pdf_goes_to_the_files_api_once_and_is_read_by_file_id,
            one_pdf_is_summarized_and_extracted_and_its_result_served,
            an_encrypted_pdf_fails_alone_with_a_clear_reason,
            duplicate_and_hostile_names_are_accepted_and_harmless,
            zero_or_a_hundred_and_one_files_are_refused_and_nothing_is_stored,
            a_renamed_png_an_empty_file_or_a_21_mb_file_is_refused_and_nothing_is_stored,
            a_body_that_is_not_multipart_is_a_415,
            an_upload_can_be_canceled_before_it_runs,
            an_upload_past_its_expiry_expires_every_file_without_a_call,
            other_users_uploads_are_404,
            a_hundred_pdfs_are_accepted_and_complete_without_slowing_the_high_lane,
            a_pdf_whose_file_vanished_at_the_provider_is_uploaded_again_and_completes,
            // Last: once the Worker has seen a base URL without the Files API, it stops asking.
            without_the_files_api_pdfs_go_as_base64_and_still_complete,
        ],
    )
}

/// Files of an upload: (name, bytes).
type Files = Vec<(String, Vec<u8>)>;

fn pdf(name: &str, title: &str, pages: usize) -> (String, Vec<u8>) {
    (name.to_string(), pdfs::make(title, pages))
}

async fn each_pdf_goes_to_the_files_api_once_and_is_read_by_file_id(s: Arc<TestStack>) {
    let before = s.sim_files();
    let user = s.user("by-reference");
    let sync = user
        .submit_upload(
            &[pdf("a.pdf", "Alpha", 2), pdf("b.pdf", "Beta", 1)],
            &[("mode", "sync")],
        )
        .await;
    let batch = user
        .submit_upload(
            &[
                pdf("c.pdf", "Gamma", 1),
                pdf("d.pdf", "Delta", 3),
                pdf("e.pdf", "Eps", 1),
            ],
            &[("mode", "batch")],
        )
        .await;
    for id in [&sync, &batch] {
        let b = user.upload_finished(id, Duration::from_secs(90)).await;
        assert_eq!(b["counts"]["completed"], b["total"], "{b}");
        for f in b["files"].as_array().unwrap() {
            assert_eq!(s.billed(f["job_id"].as_str().unwrap()), 1, "{f}");
            if id == &batch {
                // No other request of the batch reads its document: no cache write paid for.
                assert_eq!(f["cache_write_tokens"], 0, "{f}");
            }
        }
    }
    let after = s.sim_files();
    // Five PDFs, five files, each uploaded once; every request read its PDF by reference —
    // the sync calls, their count_tokens, and the Message Batch lines — none inline.
    assert_eq!(after.uploaded - before.uploaded, 5, "{after:?}");
    assert_eq!(after.base64_documents, before.base64_documents, "{after:?}");
    assert!(
        after.file_documents - before.file_documents >= 5,
        "{before:?} -> {after:?}"
    );
    assert_eq!(after.stored - before.stored, 5, "{after:?}");
}

async fn a_pdf_whose_file_vanished_at_the_provider_is_uploaded_again_and_completes(
    s: Arc<TestStack>,
) {
    let name = "vanished";
    let user = s.user(name);
    // Held by a pause once delivered, so that its file can go before its call.
    let (status, p) = user
        .put_json(
            "/api/pauses",
            &serde_json::json!({"scope": "user", "value": name}),
        )
        .await;
    assert_eq!(status, 200, "{p}");
    let before = s.sim_files();
    let id = user
        .submit_upload(&[pdf("v.pdf", "Vanished", 2)], &[("mode", "sync")])
        .await;
    let b = user.batch(&id).await;
    let job = b["files"][0]["job_id"].as_str().unwrap().to_owned();
    let rows = s
        .d1_now(&format!("SELECT file_id FROM jobs WHERE id = '{job}'"))
        .await;
    let file = rows[0]["file_id"]
        .as_str()
        .expect("uploaded at acceptance")
        .to_owned();
    eventually(
        "the job held by the pause",
        Duration::from_secs(60),
        || async { user.job(&job).await["held_at"].is_i64().then_some(()) },
    )
    .await;
    // Deleted at the provider (by someone else, or expired) before the job's call.
    let (status, gone) = send_json(s.sim_api(Method::DELETE, &format!("/v1/files/{file}"))).await;
    assert_eq!(
        (status, gone["type"].as_str()),
        (200, Some("file_deleted")),
        "{gone}"
    );
    let (status, r) = user.delete(&format!("/api/pauses/user/{name}")).await;
    assert_eq!(status, 200, "{r}");
    let b = user.upload_finished(&id, Duration::from_secs(90)).await;
    assert_eq!(b["counts"]["completed"], 1, "{b}");
    assert_eq!(b["files"][0]["extraction"]["title"], "Vanished", "{b}");
    // The 404 was not billed; the PDF went up a second time; paid once.
    assert_eq!(s.billed(&job), 1);
    let after = s.sim_files();
    assert_eq!(after.uploaded - before.uploaded, 2, "{after:?}");
    assert_eq!(after.base64_documents, before.base64_documents, "{after:?}");
}

async fn without_the_files_api_pdfs_go_as_base64_and_still_complete(s: Arc<TestStack>) {
    s.sim.lock().knobs.files_api = false;
    let before = s.sim_files();
    let user = s.user("inline");
    let id = user
        .submit_upload(
            &[pdf("x.pdf", "Inline", 1), pdf("y.pdf", "Inline too", 2)],
            &[("mode", "sync")],
        )
        .await;
    let b = user.upload_finished(&id, Duration::from_secs(90)).await;
    s.sim.lock().knobs.files_api = true;
    assert_eq!(b["counts"]["completed"], 2, "{b}");
    assert_eq!(b["files"][1]["extraction"]["page_count"], 2, "{b}");
    let after = s.sim_files();
    assert_eq!(after.uploaded, before.uploaded, "{after:?}");
    assert!(
        after.base64_documents >= before.base64_documents + 2,
        "{after:?}"
    );
}

async fn one_pdf_is_summarized_and_extracted_and_its_result_served(s: Arc<TestStack>) {
    let user = s.user("one");
    let id = user
        .submit_upload(&[pdf("plan.pdf", "Quarterly plan", 3)], &[("mode", "sync")])
        .await;
    let b = user.upload_finished(&id, Duration::from_secs(60)).await;
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
    let again = user
        .submit_upload(
            &[pdf("plan.pdf", "Quarterly plan", 3)],
            &[("mode", "sync"), ("template", "brief")],
        )
        .await;
    let again = user.upload_finished(&again, Duration::from_secs(60)).await;
    let g = &again["files"][0];
    assert_eq!(again["template"], "brief");
    assert_eq!(g["cache_read_tokens"].as_u64().unwrap(), written, "{g}");
    assert!(g["cost_micros"].as_u64().unwrap() < f["cost_micros"].as_u64().unwrap());
    let job = f["job_id"].as_str().unwrap();
    let (_, text) = user.get_text(&format!("/jobs/{job}/result")).await;
    assert!(text.contains("Quarterly plan"));
    assert_eq!(s.billed(job), 1);
}

async fn an_encrypted_pdf_fails_alone_with_a_clear_reason(s: Arc<TestStack>) {
    let user = s.user("locked");
    let files = vec![
        ("open.pdf".to_string(), pdfs::make("Open", 1)),
        ("locked.pdf".to_string(), pdfs::encrypted("Locked")),
    ];
    let id = user.submit_upload(&files, &[("mode", "sync")]).await;
    let b = user.upload_finished(&id, Duration::from_secs(60)).await;
    assert_eq!(b["files"][0]["status"], "completed", "{b}");
    assert_eq!(b["files"][1]["status"], "failed", "{b}");
    let reason = b["files"][1]["error"].as_str().unwrap();
    assert!(reason.contains("password protected"), "{reason}");
}

async fn duplicate_and_hostile_names_are_accepted_and_harmless(s: Arc<TestStack>) {
    let user = s.user("names");
    let files = vec![
        pdf("same.pdf", "First", 1),
        pdf("same.pdf", "Second", 1),
        pdf("../../x.pdf", "Escape", 1),
        pdf("bad\u{1b}[31mname\u{7}.pdf", "Control", 1),
        pdf("<img src=x onerror=alert(1)>.pdf", "Markup", 1),
    ];
    let id = user.submit_upload(&files, &[("mode", "sync")]).await;
    let b = user.upload_finished(&id, Duration::from_secs(60)).await;
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
    let user = s.user("limits");
    let objects = s.r2_objects();
    let (status, body) = user.upload(&[], &[("mode", "sync")]).await;
    assert_error(status, &body, 400, "invalid_file_count");
    assert!(body["error"]
        .as_str()
        .unwrap()
        .contains("send between 1 and 100 files"));
    let many: Vec<_> = (0..101)
        .map(|i| pdf(&format!("f{i}.pdf"), "Tiny", 1))
        .collect();
    let (status, body) = user.upload(&many, &[]).await;
    assert_error(status, &body, 400, "invalid_file_count");
    assert_eq!(s.r2_objects(), objects, "no object left behind");
    let (_, list) = user.get("/batches").await;
    assert_eq!(list["items"], serde_json::json!([]), "no upload row");
    let (_, jobs) = user.get("/jobs").await;
    assert_eq!(jobs["items"], serde_json::json!([]), "no job row");
}

async fn a_renamed_png_an_empty_file_or_a_21_mb_file_is_refused_and_nothing_is_stored(
    s: Arc<TestStack>,
) {
    let user = s.user("bad-files");
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
        let (status, body) = user.upload(&files, &[]).await;
        assert_error(status, &body, want, code);
        assert_eq!(body["field"], "files", "{body}");
        assert_eq!(
            s.r2_objects(),
            objects,
            "{code}: the good file was removed too"
        );
    }
    let (_, list) = user.get("/batches").await;
    assert_eq!(list["items"], serde_json::json!([]));
}

async fn a_body_that_is_not_multipart_is_a_415(s: Arc<TestStack>) {
    let (status, body) = s.anon().post_json("/batches", &serde_json::json!({})).await;
    assert_error(status, &body, 415, "unsupported_media_type");
    let (status, body) = send_json(
        s.anon()
            .request(Method::POST, "/batches")
            .header("content-type", "multipart/form-data; boundary=xyz")
            .body("this is not multipart"),
    )
    .await;
    assert_eq!(status, 400, "{body}");
}

async fn an_upload_can_be_canceled_before_it_runs(s: Arc<TestStack>) {
    let user = s.user("cancel");
    let files: Vec<_> = (0..3)
        .map(|i| pdf(&format!("c{i}.pdf"), "Later", 1))
        .collect();
    let id = user.submit_upload(&files, &[("mode", "batch")]).await;
    let (status, b) = user.post(&format!("/batches/{id}/cancel")).await;
    assert_eq!(status, 200, "{b}");
    assert_eq!(b["counts"]["canceled"], 3, "{b}");
    assert!(b["canceled_at"].is_i64());
    // The machinery runs; nothing is sent.
    s.anon().post_ok("/api/batches/flush").await;
    end2end::pause(Duration::from_secs(4)).await;
    s.anon().post_ok("/api/batches/flush").await;
    let b = user.batch(&id).await;
    for f in b["files"].as_array().unwrap() {
        assert_eq!(f["status"], "canceled");
        assert_eq!(s.billed(f["job_id"].as_str().unwrap()), 0);
    }
}

async fn an_upload_past_its_expiry_expires_every_file_without_a_call(s: Arc<TestStack>) {
    let user = s.user("expiry");
    let objects = s.r2_objects();
    for bad in ["0", "soon", "604801"] {
        let (status, body) = user
            .upload(&[pdf("late.pdf", "Late", 1)], &[("expires_in_s", bad)])
            .await;
        assert_error(status, &body, 400, "invalid_field");
        assert_eq!(body["field"], "expires_in_s", "{body}");
    }
    assert_eq!(s.r2_objects(), objects, "no object left behind");
    let files: Vec<_> = (0..2)
        .map(|i| pdf(&format!("e{i}.pdf"), "Whenever", 1))
        .collect();
    // The bulk lane's delay outlasts the upload's one second.
    let id = user
        .submit_upload(&files, &[("mode", "batch"), ("expires_in_s", "1")])
        .await;
    eventually(
        "every file of the upload expires",
        Duration::from_secs(60),
        || async {
            s.cron().await;
            let b = user.batch(&id).await;
            (b["counts"]["expired"] == 2).then_some(b)
        },
    )
    .await;
    for f in user.batch(&id).await["files"].as_array().unwrap() {
        assert_eq!(f["status"], "expired", "{f}");
        assert_eq!(s.billed(f["job_id"].as_str().unwrap()), 0);
    }
}

async fn other_users_uploads_are_404(s: Arc<TestStack>) {
    let (owner, intruder) = (s.user("owner"), s.user("intruder"));
    let id = owner
        .submit_upload(&[pdf("mine.pdf", "Mine", 1)], &[("mode", "sync")])
        .await;
    for (method, path) in [
        (Method::GET, format!("/batches/{id}")),
        (Method::POST, format!("/batches/{id}/cancel")),
        (Method::GET, "/batches/not-an-id".to_string()),
    ] {
        let (status, body) = send_json(intruder.request(method, &path)).await;
        assert_error(status, &body, 404, "not_found");
    }
    let (_, list) = intruder.get("/batches").await;
    assert_eq!(list["items"], serde_json::json!([]));
    owner.upload_finished(&id, Duration::from_secs(60)).await;
}

/// How long a small high-lane job of `user` takes, end to end.
async fn high_job_ms(user: &Client) -> i64 {
    let body = serde_json::json!({"prompt": "Interactive, please.", "max_tokens": 50, "output_config": {"effort": "low"}});
    let id = user.submit_job(&body).await;
    user.job_reaches(&id, "completed", Duration::from_secs(60))
        .await["elapsed_ms"]
        .as_i64()
        .unwrap()
}

async fn a_hundred_pdfs_are_accepted_and_complete_without_slowing_the_high_lane(s: Arc<TestStack>) {
    let user = s.user("hundred");
    let idle = high_job_ms(&user).await;
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
    // The upload's Message Batches run until the interactive job has been answered: that it
    // did not wait for the upload is then a fact, not a race between two timings.
    s.hold_batches();
    let t0 = Instant::now();
    let id = user.submit_upload(&files, &[("mode", "batch")]).await;
    let accept = t0.elapsed();
    // While the upload is being worked through, an interactive job on the high lane.
    let busy = high_job_ms(&user).await;
    let during = user.batch(&id).await;
    assert_eq!(during["done"], 0, "the upload still runs: {during}");
    s.release_batches();
    let b = user.upload_finished(&id, Duration::from_secs(170)).await;
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
    for f in b["files"].as_array().unwrap() {
        assert_eq!(s.billed(f["job_id"].as_str().unwrap()), 1);
        assert!(f["extraction"]["title"]
            .as_str()
            .unwrap()
            .starts_with("Report "));
    }
    // The whole suite so far read its PDFs by file_id: not one base64 document block.
    let seen = s.sim_files();
    assert_eq!(seen.base64_documents, 0, "{seen:?}");
    assert!(seen.file_documents >= 100, "{seen:?}");
}
