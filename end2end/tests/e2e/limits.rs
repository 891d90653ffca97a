//! Per-user limits on the producers, on a stack with tiny ones: at most 3 jobs waiting and 5
//! made a minute per user (`USER_MAX_QUEUED`, `USER_MAX_PER_MIN`). Over either, a 429 that says
//! which, with a `retry-after` — and nothing stored.

use std::sync::Arc;
use std::time::Duration;

use end2end::{tests, StackConfig, Suite, TestStack};
use reqwest::Method;
use serde_json::json;

pub fn suite() -> Suite {
    end2end::suite_with(
        "limits",
        // Batch-mode jobs wait for a flush a minute away, so they stay queued.
        StackConfig::vars(&[
            ("USER_MAX_QUEUED", "3"),
            ("USER_MAX_PER_MIN", "5"),
            ("BATCH_FLUSH_AGE_S", "60"),
        ]),
        tests![
            a_user_with_three_jobs_waiting_is_told_to_come_back_and_others_are_not,
            a_user_past_five_jobs_a_minute_is_told_to_come_back_in_a_minute,
        ],
    )
}

/// Sends `POST /jobs` as `user` → (status, retry-after header, body).
async fn submit(
    s: &Arc<TestStack>,
    user: &str,
    body: &serde_json::Value,
) -> (u16, Option<String>, serde_json::Value) {
    let resp = s
        .user(user)
        .json_request(Method::POST, "/jobs", body)
        .send()
        .await
        .expect("request");
    let status = resp.status().as_u16();
    let after = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    (status, after, resp.json().await.expect("JSON"))
}

async fn a_user_with_three_jobs_waiting_is_told_to_come_back_and_others_are_not(s: Arc<TestStack>) {
    let waiting = json!({"prompt": "Wait for the flush", "priority": "bulk", "mode": "batch"});
    for _ in 0..3 {
        let (status, _, body) = submit(&s, "queuer", &waiting).await;
        assert_eq!(status, 202, "{body}");
    }
    let rows = s.d1("SELECT id FROM jobs WHERE user_id = 'queuer'").len();
    let (status, after, body) = submit(&s, "queuer", &waiting).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (429, Some("too_many_queued")),
        "{body}"
    );
    assert_eq!(after.as_deref(), Some("10"));
    assert_eq!(body["retry_after_s"], 10);
    assert_eq!(
        s.d1("SELECT id FROM jobs WHERE user_id = 'queuer'").len(),
        rows,
        "nothing stored"
    );
    let (status, _, body) = submit(&s, "someone-else", &waiting).await;
    assert_eq!(status, 202, "another user's queue is their own: {body}");
}

async fn a_user_past_five_jobs_a_minute_is_told_to_come_back_in_a_minute(s: Arc<TestStack>) {
    let quick = json!({"prompt": "Quick one", "priority": "high", "max_tokens": 64,
                       "output_config": {"effort": "low"}});
    let client = s.user("busy");
    for _ in 0..5 {
        let (status, _, body) = submit(&s, "busy", &quick).await;
        assert_eq!(status, 202, "{body}");
        // Each one answered before the next: the queue limit is not what binds.
        let id = body["jobId"].as_str().unwrap();
        client
            .job_reaches(id, "completed", Duration::from_secs(60))
            .await;
    }
    let (status, after, body) = submit(&s, "busy", &quick).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (429, Some("rate_limited")),
        "{body}"
    );
    assert_eq!(after.as_deref(), Some("60"));
    assert!(
        body["error"].as_str().unwrap().contains("5 jobs a minute"),
        "{body}"
    );
}
