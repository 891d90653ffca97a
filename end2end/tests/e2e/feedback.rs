//! Feedback flow suite: `POST /feedback` in both modes through the real local stack — queues,
//! D1, R2, the cron poller — and the simulator, including retries, dead letters and failures.

use std::sync::Arc;
use std::time::Duration;

use end2end::api::{assert_error, send_json};
use end2end::{eventually, tests, Suite, TestStack};
use reqwest::Method;
use serde_json::{json, Value};

pub fn suite() -> Suite {
    end2end::suite(
        "feedback",
        tests![
            a_sync_submission_completes_with_an_analysis_and_a_frozen_elapsed_time,
            a_batch_submission_is_flushed_and_polled_by_the_cron,
            a_529x2_job_is_retried_and_then_completes,
            a_job_that_always_gets_529_is_dead_lettered,
            a_400_fails_the_job_at_once_without_the_dlq,
            twenty_batch_jobs_are_accumulated_across_queue_batches,
            bad_submissions_are_refused_and_store_nothing,
            unknown_and_other_users_ids_are_404,
            the_list_is_newest_first_and_paginated_with_a_cursor,
            an_idempotency_key_makes_a_retried_submission_one_job,
            feedback_past_its_expiry_is_expired_without_a_call,
        ],
    )
}

const EXAMPLE: &str = "The dark mode toggle stopped working after the last update.";

/// `POST /feedback` from the web app, anonymously; answers the id.
async fn submit(s: &Arc<TestStack>, mode: &str, text: &str) -> String {
    s.anon()
        .submit_feedback(&json!({"source": "web_app", "mode": mode, "text": text}))
        .await
}

async fn a_sync_submission_completes_with_an_analysis_and_a_frozen_elapsed_time(s: Arc<TestStack>) {
    let id = submit(&s, "sync", EXAMPLE).await;
    let first = s.anon().feedback(&id).await;
    assert_eq!(first["mode"], "sync");
    assert_eq!(first["lane"], "high");
    let done = s
        .anon()
        .feedback_reaches(&id, "completed", Duration::from_secs(30), false)
        .await;
    assert_eq!(done["analysis"]["category"], "bug", "{done}");
    assert_eq!(done["analysis"]["sentiment"], "negative");
    assert!(done["analysis"]["summary"]
        .as_str()
        .unwrap()
        .contains("dark mode"));
    assert!(done["raw_text"].as_str().unwrap().contains("\"category\""));
    assert!(done["input_tokens"].as_u64().unwrap() > 0);
    assert!(done["output_tokens"].as_u64().unwrap() > 0);
    assert!(done["cost_micros"].as_u64().unwrap() > 0);
    assert_eq!(done["attempts"], 1);
    let elapsed = done["elapsed_ms"].as_i64().unwrap();
    assert_eq!(
        elapsed,
        done["completed_at"].as_i64().unwrap() - done["created_at"].as_i64().unwrap()
    );
    end2end::pause(Duration::from_millis(1100)).await;
    assert_eq!(
        s.anon().feedback(&id).await["elapsed_ms"],
        elapsed,
        "elapsed must freeze once terminal"
    );
    assert_eq!(s.billed(&id), 1, "billed exactly once");
}

async fn a_batch_submission_is_flushed_and_polled_by_the_cron(s: Arc<TestStack>) {
    let id = submit(&s, "batch", "I love the new editor, thanks!").await;
    // It waits in the bulk accumulation until the cron flushes it (the oldest waited 3 s).
    let submitted = s
        .anon()
        .feedback_reaches(&id, "submitted", Duration::from_secs(30), true)
        .await;
    assert_eq!(submitted["lane"], "bulk");
    let batch_id = submitted["anthropic_batch_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(batch_id.starts_with("msgbatch_"));
    // While submitted, elapsed ticks.
    let a = s.anon().feedback(&id).await["elapsed_ms"].as_i64().unwrap();
    end2end::pause(Duration::from_millis(300)).await;
    let b = s.anon().feedback(&id).await;
    if b["status"] == "submitted" {
        assert!(b["elapsed_ms"].as_i64().unwrap() > a);
    }
    let done = s
        .anon()
        .feedback_reaches(&id, "completed", Duration::from_secs(60), true)
        .await;
    assert_eq!(done["analysis"]["sentiment"], "positive", "{done}");
    assert_eq!(done["anthropic_batch_id"], batch_id.as_str());
    assert_eq!(s.billed(&id), 1);
    // Half price: the simulator billed this job at the batch rate, and so did we.
    let usage = pipeline::anthropic::Usage {
        input_tokens: done["input_tokens"].as_u64().unwrap() as u32,
        output_tokens: done["output_tokens"].as_u64().unwrap() as u32,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation: None,
        speed: None,
    };
    let model = done["model"].as_str().unwrap();
    let completed_at = done["completed_at"].as_i64().unwrap();
    let batch_cost =
        pipeline::pricing::cost_micros(model, &usage, pipeline::pricing::Tier::Batch, completed_at)
            .map(|c| c.micros());
    assert_eq!(Some(done["cost_micros"].as_u64().unwrap()), batch_cost);
}

async fn a_529x2_job_is_retried_and_then_completes(s: Arc<TestStack>) {
    let id = submit(&s, "sync", "Export is broken again [[sim:529x2]]").await;
    let done = s
        .anon()
        .feedback_reaches(&id, "completed", Duration::from_secs(60), false)
        .await;
    assert_eq!(done["attempts"], 3, "{done}");
    assert_eq!(s.billed(&id), 1, "failed attempts are not billed");
}

async fn a_job_that_always_gets_529_is_dead_lettered(s: Arc<TestStack>) {
    let id = submit(&s, "sync", "Nothing works [[sim:529]]").await;
    let dead = s
        .anon()
        .feedback_reaches(&id, "dead_lettered", Duration::from_secs(90), false)
        .await;
    assert!(dead["error"].as_str().unwrap().contains("529"), "{dead}");
    assert_eq!(
        dead["attempts"], 6,
        "the first delivery and max_retries = 5"
    );
    assert!(dead["completed_at"].is_i64());
    assert_eq!(s.billed(&id), 0);
    // The dead letter was announced, Slack-compatible.
    let hook = eventually(
        "the dead-letter webhook",
        Duration::from_secs(10),
        || async { s.webhooks().into_iter().find(|h| h["jobId"] == id.as_str()) },
    )
    .await;
    assert_eq!(hook["event"], "job.failed");
    assert_eq!(hook["userId"], "anonymous");
    assert!(hook["text"].as_str().unwrap().contains(&id));
    assert!(hook["createdAt"].is_i64());
}

async fn a_400_fails_the_job_at_once_without_the_dlq(s: Arc<TestStack>) {
    let id = submit(&s, "sync", "Bad request please [[sim:400]]").await;
    let failed = s
        .anon()
        .feedback_reaches(&id, "failed", Duration::from_secs(30), false)
        .await;
    assert_eq!(failed["attempts"], 1, "{failed}");
    assert!(failed["error"].as_str().unwrap().contains("400"));
}

async fn twenty_batch_jobs_are_accumulated_across_queue_batches(s: Arc<TestStack>) {
    let creates = |s: &TestStack| s.sim_calls("batches.create 200");
    let before = creates(&s);
    // Submitted concurrently, as a burst of users would.
    let handles: Vec<_> = (0..20)
        .map(|i| {
            let s = s.clone();
            tokio::spawn(async move {
                submit(&s, "batch", &format!("Batch item {i}: the app is slow")).await
            })
        })
        .collect();
    let mut ids = Vec::new();
    for h in handles {
        ids.push(h.await.unwrap());
    }
    let mut batches = std::collections::BTreeSet::new();
    for id in &ids {
        let j = eventually("submitted", Duration::from_secs(60), || async {
            let j = s.anon().feedback(id).await;
            if j["status"] == "queued" {
                // A flush by age is the cron's: run it, as the dev tooling does every minute.
                s.cron().await;
                return None;
            }
            Some(j)
        })
        .await;
        batches.insert(
            j["anthropic_batch_id"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        );
    }
    let made = creates(&s) - before;
    println!(
        "    20 batch-mode jobs → {made} batch create call(s), {} Anthropic batch(es)",
        batches.len()
    );
    assert_eq!(
        made as usize,
        batches.len(),
        "one create per Anthropic batch"
    );
    // The bulk consumer takes at most 10 messages per queue batch; the accumulation holds
    // them across queue batches until 20 (the test profile's flush size) wait, or the oldest has
    // waited 3 s.
    assert!(
        made <= 2,
        "accumulated across queue batches, never one create per queue batch or job: {made}"
    );
    for id in &ids {
        s.anon()
            .feedback_reaches(id, "completed", Duration::from_secs(60), true)
            .await;
    }
}

async fn bad_submissions_are_refused_and_store_nothing(s: Arc<TestStack>) {
    let count = || async {
        let (_, l) = s.anon().get("/api/feedback?limit=100").await;
        l["items"].as_array().unwrap().len()
    };
    let before = count().await;
    let post = |body: &str, ctype: &str| {
        s.anon()
            .request(Method::POST, "/feedback")
            .header("content-type", ctype)
            .body(body.to_string())
    };
    for (body, field) in [
        (r#"{"mode":"sync"}"#, "text"),
        (r#"{"text":""}"#, "text"),
        (r#"{"text":42}"#, "text"),
        (r#"{"text":"hi","mode":"later"}"#, "mode"),
        (r#"{"text":"hi","source":"has space"}"#, "source"),
        (r#"{"text":"hi","expires_in_s":0}"#, "expires_in_s"),
        (r#"{"text":"hi","expires_in_s":"soon"}"#, "expires_in_s"),
    ] {
        let (status, e) = send_json(post(body, "application/json")).await;
        assert_error(status, &e, 400, "invalid_field");
        assert_eq!(e["field"], field, "{body}");
    }
    let (status, e) = send_json(post("{not json", "application/json")).await;
    assert_error(status, &e, 400, "invalid_json");
    let (status, e) = send_json(post(r#"{"text":"hi"}"#, "text/plain")).await;
    assert_error(status, &e, 415, "unsupported_media_type");
    let huge = json!({"text": "a".repeat(10_001)}).to_string();
    let (status, e) = send_json(post(&huge, "application/json")).await;
    assert_error(status, &e, 400, "invalid_field");
    let (status, e) = send_json(post(&"x".repeat(70_000), "application/json")).await;
    assert_error(status, &e, 413, "body_too_large");
    assert_eq!(count().await, before, "a refused submission leaves no row");
}

async fn unknown_and_other_users_ids_are_404(s: Arc<TestStack>) {
    let id = submit(&s, "sync", "Mine, not Bob's").await;
    let (status, e) = s.user("bob").get(&format!("/api/feedback/{id}")).await;
    assert_error(status, &e, 404, "not_found");
    for bad in [
        "00000000-0000-4000-8000-000000000000",
        "not-an-id",
        "..%2F..%2Fetc",
    ] {
        let (status, e) = s.anon().get(&format!("/api/feedback/{bad}")).await;
        assert_error(status, &e, 404, "not_found");
    }
}

async fn the_list_is_newest_first_and_paginated_with_a_cursor(s: Arc<TestStack>) {
    let lister = s.user("lister");
    let mut ids = Vec::new();
    for i in 0..3 {
        ids.push(
            lister
                .submit_feedback(&json!({"text": format!("item {i}")}))
                .await,
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let get = |q: String| {
        let lister = lister.clone();
        async move { lister.get(&format!("/api/feedback{q}")).await }
    };
    let (_, page) = get("?limit=2".into()).await;
    let got: Vec<&str> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap())
        .collect();
    assert_eq!(got, [ids[2].as_str(), ids[1].as_str()]);
    let cursor = page["next_cursor"].as_str().unwrap();
    let (_, next) = get(format!("?limit=2&cursor={cursor}")).await;
    assert_eq!(next["items"][0]["id"], ids[0].as_str());
    assert_eq!(next["next_cursor"], Value::Null);
    let (status, e) = get("?cursor=garbage".into()).await;
    assert_error(status, &e, 400, "invalid_cursor");
    let (status, e) = get("?limit=0".into()).await;
    assert_error(status, &e, 400, "invalid_limit");
}

async fn an_idempotency_key_makes_a_retried_submission_one_job(s: Arc<TestStack>) {
    let user = s.user("feedback-idem");
    let send = |text: &str, key: &str| {
        send_json(
            user.json_request(
                Method::POST,
                "/feedback",
                &json!({"mode": "sync", "text": text}),
            )
            .header("idempotency-key", key),
        )
    };
    let (a_status, a) = send(EXAMPLE, "retry-7").await;
    let (b_status, b) = send(EXAMPLE, "retry-7").await;
    assert_eq!((a_status, b_status), (202, 202), "{a} {b}");
    assert_eq!(a, b, "the retry answers the first acknowledgement");
    let (status, list) = user.get("/api/feedback").await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(
        list["items"].as_array().unwrap().len(),
        1,
        "one job: {list}"
    );
    // Another text under the same key is a conflict, and stores nothing.
    let (status, e) = send("Something else entirely.", "retry-7").await;
    assert_error(status, &e, 422, "idempotency_key_reused");
    // A key first used on POST /jobs never answers for feedback (the path is part of the hash).
    let (status, _) = send_json(
        user.json_request(Method::POST, "/jobs", &json!({"prompt": EXAMPLE}))
            .header("idempotency-key", "shared-1"),
    )
    .await;
    assert_eq!(status, 202);
    let (status, e) = send(EXAMPLE, "shared-1").await;
    assert_error(status, &e, 422, "idempotency_key_reused");
    let (status, e) = send(EXAMPLE, &"k".repeat(256)).await;
    assert_error(status, &e, 400, "invalid_idempotency_key");
    let (_, list) = user.get("/api/feedback").await;
    assert_eq!(list["items"].as_array().unwrap().len(), 1, "{list}");
    let id = a["id"].as_str().unwrap();
    user.feedback_reaches(id, "completed", Duration::from_secs(60), false)
        .await;
}

async fn feedback_past_its_expiry_is_expired_without_a_call(s: Arc<TestStack>) {
    // Batch feedback goes through the bulk lane's delay, by which time its second has passed.
    let id = s
        .anon()
        .submit_feedback(&json!({"mode": "batch", "text": "Whenever you can", "expires_in_s": 1}))
        .await;
    let expired = s
        .anon()
        .until(
            &format!("/api/feedback/{id}"),
            "expired",
            Duration::from_secs(60),
            true,
        )
        .await;
    assert!(expired["expires_at"].is_i64(), "{expired}");
    assert_eq!(s.billed(&id), 0, "an expired job is never sent to Claude");
}
