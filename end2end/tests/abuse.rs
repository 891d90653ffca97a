//! Abuse suite, on a stack in keys mode (production's default): what a client that retries,
//! races or floods can make the pipeline do — and pay for. Each test is one way to spend the
//! account's money twice or unseen, shown not to work.
//!
//! A suite is one stack and one binary (`cargo xtask test --suite abuse`); its tests share it,
//! each with its own users.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use end2end::api::send_json;
use end2end::{run_suite_with, tests, StackConfig, TestStack};
use pipeline::dto::{FeedbackRequest, JobRequest};
use reqwest::Method;
use serde_json::Value;

fn main() -> ExitCode {
    run_suite_with(
        "abuse",
        StackConfig::vars(&[("AUTH_MODE", "keys")]),
        tests![
            twenty_concurrent_prompt_jobs_with_one_key_make_one_job_and_one_call,
            twenty_concurrent_feedback_posts_with_one_key_make_one_job_and_one_call,
        ],
    )
}

/// How many requests race with one `Idempotency-Key`.
const RACERS: usize = 20;

/// Sends `body` to `path` `RACERS` times at once as a new user, all with the same key; answers
/// that user's client and each (status, body).
async fn race(
    s: &Arc<TestStack>,
    user: &str,
    path: &str,
    body: Value,
) -> (end2end::Client, Vec<(u16, Value)>) {
    let client = s.key(Some(&s.create_key(user, false)));
    let mut racers = tokio::task::JoinSet::new();
    for _ in 0..RACERS {
        let request = client
            .json_request(Method::POST, path, &body)
            .header("idempotency-key", "race-1");
        racers.spawn(send_json(request));
    }
    let answers = racers.join_all().await;
    (client, answers)
}

/// Every racer was acknowledged with the same job, which the stack holds once and which
/// completes; answers its id.
async fn one_job(
    s: &Arc<TestStack>,
    client: &end2end::Client,
    user: &str,
    answers: &[(u16, Value)],
    id_field: &str,
) -> String {
    for (status, body) in answers {
        assert_eq!(*status, 202, "every racer is acknowledged: {body}");
    }
    let ids: std::collections::BTreeSet<&str> = answers
        .iter()
        .map(|(_, b)| b[id_field].as_str().expect("an id"))
        .collect();
    assert_eq!(ids.len(), 1, "one job for every racer: {ids:?}");
    let id = ids.into_iter().next().unwrap().to_string();
    let rows = s.d1(&format!("SELECT id FROM jobs WHERE user_id = '{user}'"));
    assert_eq!(rows.len(), 1, "one row: {rows:?}");
    client
        .job_reaches(&id, "completed", Duration::from_secs(60))
        .await;
    // Nothing else is billed later: the losers made no job to run.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(s.billed(&id), 1, "one call");
    id
}

async fn twenty_concurrent_prompt_jobs_with_one_key_make_one_job_and_one_call(s: Arc<TestStack>) {
    let before = s.r2_objects();
    let body = serde_json::to_value(JobRequest::prompt("Race me.")).unwrap();
    let (client, answers) = race(&s, "racer-jobs", "/jobs", body).await;
    one_job(&s, &client, "racer-jobs", &answers, "jobId").await;
    assert_eq!(
        s.r2_objects(),
        before + 2,
        "the winner's request and result, and no loser's request left behind"
    );
}

async fn twenty_concurrent_feedback_posts_with_one_key_make_one_job_and_one_call(
    s: Arc<TestStack>,
) {
    let body = serde_json::to_value(FeedbackRequest {
        text: "Racing the same feedback twenty times.".into(),
        ..FeedbackRequest::default()
    })
    .unwrap();
    let (client, answers) = race(&s, "racer-feedback", "/feedback", body).await;
    one_job(&s, &client, "racer-feedback", &answers, "id").await;
}
