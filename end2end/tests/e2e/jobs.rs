//! Prompt-jobs suite: `/jobs` through the real local stack and the simulator — both lanes, the
//! R2 claim-check and result, Idempotency-Key, cancel, expiry, filters and ownership.
//!
//! One file on purpose, though over 400 lines: a suite is one stack and one module (run by name
//! by `cargo xtask test`), and its scenarios share that stack.

use std::sync::Arc;
use std::time::Duration;

use end2end::api::{assert_error, ids, send_json};
use end2end::{eventually, rollout_user, tests, Suite, TestStack};
use reqwest::Method;
use serde_json::{json, Value};

pub fn suite() -> Suite {
    end2end::suite(
        "jobs",
        tests![
            a_high_priority_prompt_completes_and_its_result_is_served,
            a_bulk_prompt_goes_through_a_message_batch_at_half_price,
            two_overloads_in_a_row_fall_back_to_the_next_model,
            the_same_idempotency_key_and_body_make_one_job_and_one_call,
            a_reused_idempotency_key_with_another_body_is_a_422,
            a_queued_job_can_be_canceled_and_is_never_sent_to_claude,
            a_job_past_its_expiry_is_expired_without_a_call,
            bad_jobs_are_refused_and_store_nothing,
            other_users_jobs_are_404_everywhere,
            the_list_filters_by_priority_status_and_kind,
            every_job_reaches_a_terminal_state_across_a_runtime_kill,
            the_rollout_sends_users_inside_the_percent_through_the_queue,
            a_bulk_burst_keeps_three_in_flight_and_does_not_slow_the_high_lane,
            a_429_without_retry_after_waits_the_cap_and_raises_an_alert,
            any_other_error_is_a_plain_retry,
            no_job_was_billed_twice_outside_the_kill_test,
        ],
    )
}

/// `POST /jobs` anonymously, to finish (an `Idempotency-Key`, another user) and send.
fn post_job(s: &Arc<TestStack>, body: Value) -> reqwest::RequestBuilder {
    s.anon().json_request(Method::POST, "/jobs", &body)
}

/// Waits (up to a minute) until the anonymous job `id` has `status`, running the cron while
/// waiting when `cron` is set.
async fn until(s: &Arc<TestStack>, id: &str, status: &str, cron: bool) -> Value {
    let path = format!("/jobs/{id}");
    s.anon()
        .until(&path, status, Duration::from_secs(60), cron)
        .await
}

async fn a_high_priority_prompt_completes_and_its_result_is_served(s: Arc<TestStack>) {
    let id = s.anon().submit_job(
        &json!({"prompt": "Explain queues in one sentence.", "max_tokens": 200, "output_config": {"effort": "low"}}),
    )
    .await;
    let done = until(&s, &id, "completed", false).await;
    assert_eq!(done["kind"], "prompt");
    assert_eq!(done["priority"], "high");
    assert_eq!(done["mode"], "sync");
    assert_eq!(done["attempts"], 1);
    assert!(done["output_tokens"].as_u64().unwrap() > 0);
    assert!(done["cost_micros"].as_u64().unwrap() > 0);
    assert_eq!(done["result_url"], format!("/jobs/{id}/result"));
    let (ctype, text) = s.anon().get_text(&format!("/jobs/{id}/result")).await;
    assert!(ctype.starts_with("text/plain"), "{ctype}");
    assert!(text.contains("Explain queues in one sentence."), "{text}");
    assert_eq!(s.billed(&id), 1);
}

async fn a_bulk_prompt_goes_through_a_message_batch_at_half_price(s: Arc<TestStack>) {
    let id = s
        .anon()
        .submit_job(&json!({"prompt": "Summarize the plan.", "priority": "bulk"}))
        .await;
    let done = until(&s, &id, "completed", true).await;
    assert_eq!(done["mode"], "batch");
    assert!(done["anthropic_batch_id"]
        .as_str()
        .unwrap()
        .starts_with("msgbatch_"));
    let usage = pipeline::anthropic::Usage {
        input_tokens: done["input_tokens"].as_u64().unwrap() as u32,
        output_tokens: done["output_tokens"].as_u64().unwrap() as u32,
        ..Default::default()
    };
    let half = pipeline::pricing::cost_micros(
        done["model"].as_str().unwrap(),
        &usage,
        pipeline::pricing::Tier::Batch,
        done["completed_at"].as_i64().unwrap(),
    )
    .map(|c| c.micros());
    assert_eq!(Some(done["cost_micros"].as_u64().unwrap()), half);
    assert_eq!(Some(s.sim_cost(&id)), half, "the simulator billed the same");
    s.anon().get_text(&format!("/jobs/{id}/result")).await;
    assert_eq!(s.billed(&id), 1);
}

async fn the_same_idempotency_key_and_body_make_one_job_and_one_call(s: Arc<TestStack>) {
    let body = json!({"prompt": "Idempotent please."});
    let send = || send_json(post_job(&s, body.clone()).header("idempotency-key", "order-42"));
    let (a_status, a) = send().await;
    let (b_status, b) = send().await;
    assert_eq!((a_status, b_status), (202, 202), "{a} {b}");
    assert_eq!(
        a["jobId"], b["jobId"],
        "the same key and body answer the original job"
    );
    let id = a["jobId"].as_str().unwrap().to_string();
    until(&s, &id, "completed", false).await;
    let (c_status, c) = send().await;
    assert_eq!(c_status, 202);
    assert_eq!(c["jobId"], id.as_str());
    end2end::pause(Duration::from_secs(2)).await;
    assert_eq!(s.billed(&id), 1, "one job, one call");
}

async fn a_reused_idempotency_key_with_another_body_is_a_422(s: Arc<TestStack>) {
    let (status, _) =
        send_json(post_job(&s, json!({"prompt": "first"})).header("idempotency-key", "k-1")).await;
    assert_eq!(status, 202);
    let (status, e) =
        send_json(post_job(&s, json!({"prompt": "second"})).header("idempotency-key", "k-1")).await;
    assert_error(status, &e, 422, "idempotency_key_reused");
    let (status, e) =
        send_json(post_job(&s, json!({"prompt": "x"})).header("idempotency-key", "k".repeat(256)))
            .await;
    assert_error(status, &e, 400, "invalid_idempotency_key");
    // Keys are per user: another user may use the same key for another body.
    let (status, _) = send_json(
        post_job(&s, json!({"prompt": "second"}))
            .header("idempotency-key", "k-1")
            .header("x-user-id", "someone-else"),
    )
    .await;
    assert_eq!(status, 202);
}

async fn a_queued_job_can_be_canceled_and_is_never_sent_to_claude(s: Arc<TestStack>) {
    // The bulk lane delivers after a delay, so the job is still queued when we cancel.
    let id = s
        .anon()
        .submit_job(&json!({"prompt": "Never run me", "priority": "bulk", "mode": "sync"}))
        .await;
    let (status, canceled) = s.anon().cancel(&id).await;
    assert_eq!(status, 200, "{canceled}");
    assert_eq!(canceled["status"], "canceled");
    let (status, e) = s.anon().cancel(&id).await;
    assert_error(status, &e, 409, "not_cancelable");
    end2end::pause(Duration::from_secs(4)).await;
    assert_eq!(s.anon().job(&id).await["status"], "canceled");
    assert_eq!(s.billed(&id), 0, "a canceled job is never sent to Claude");
    let (status, e) = s.anon().get(&format!("/jobs/{id}/result")).await;
    assert_error(status, &e, 409, "not_completed");
}

async fn a_job_past_its_expiry_is_expired_without_a_call(s: Arc<TestStack>) {
    // Delivered after the bulk delay, by which time its one second has passed.
    let id = s
        .anon()
        .submit_job(
            &json!({"prompt": "Too late", "priority": "bulk", "mode": "sync", "expires_in_s": 1}),
        )
        .await;
    let expired = until(&s, &id, "expired", false).await;
    assert!(expired["expires_at"].is_i64());
    assert_eq!(s.billed(&id), 0);
}

async fn bad_jobs_are_refused_and_store_nothing(s: Arc<TestStack>) {
    let count = || async {
        let (_, l) = s.anon().get("/jobs?kind=prompt&limit=100").await;
        l["items"].as_array().unwrap().len()
    };
    let before = count().await;
    for (body, code, field) in [
        (json!({}), "invalid_field", "prompt"),
        (json!({"prompt": ""}), "invalid_field", "prompt"),
        (
            json!({"prompt": "a".repeat(200_001)}),
            "invalid_field",
            "prompt",
        ),
        (
            json!({"prompt": "x", "priority": "urgent"}),
            "invalid_field",
            "priority",
        ),
        (
            json!({"prompt": "x", "model": "gpt-4o"}),
            "unknown_model",
            "model",
        ),
        (
            json!({"prompt": "x", "model": "claude-sonnet-4-5"}),
            "unknown_model",
            "model",
        ),
        (
            json!({"prompt": "x", "max_tokens": 0}),
            "invalid_field",
            "max_tokens",
        ),
        (
            json!({"prompt": "x", "expires_in_s": "soon"}),
            "invalid_field",
            "expires_in_s",
        ),
    ] {
        let (status, e) = send_json(post_job(&s, body)).await;
        assert_error(status, &e, 400, code);
        assert_eq!(e["field"], field);
    }
    let (status, e) = send_json(
        s.anon()
            .request(Method::POST, "/jobs")
            .header("content-type", "text/plain")
            .body("hi"),
    )
    .await;
    assert_error(status, &e, 415, "unsupported_media_type");
    assert_eq!(count().await, before, "a refused job leaves no row");
}

async fn other_users_jobs_are_404_everywhere(s: Arc<TestStack>) {
    let id = s.anon().submit_job(&json!({"prompt": "private"})).await;
    let (bob, anon) = (s.user("bob"), s.anon());
    for req in [
        bob.request(Method::GET, &format!("/jobs/{id}")),
        bob.request(Method::GET, &format!("/jobs/{id}/result")),
        bob.request(Method::POST, &format!("/jobs/{id}/cancel")),
        anon.request(Method::GET, "/jobs/00000000-0000-4000-8000-000000000000"),
        anon.request(Method::GET, "/jobs/not-an-id"),
    ] {
        let (status, e) = send_json(req).await;
        assert_error(status, &e, 404, "not_found");
    }
}

async fn the_list_filters_by_priority_status_and_kind(s: Arc<TestStack>) {
    let user = s.user("filterer");
    let high = user.submit_job(&json!({"prompt": "h"})).await;
    let bulk = user
        .submit_job(&json!({"prompt": "b", "priority": "bulk"}))
        .await;
    let list = |q: &str| {
        let (user, path) = (user.clone(), format!("/jobs{q}"));
        async move { user.get(&path).await }
    };
    let (_, all) = list("").await;
    assert_eq!(ids(&all), [bulk.as_str(), high.as_str()]);
    let (_, b) = list("?priority=bulk").await;
    assert_eq!(ids(&b), [bulk.as_str()]);
    let (_, none) = list("?kind=feedback").await;
    assert!(ids(&none).is_empty());
    let (status, e) = list("?status=bogus").await;
    assert_error(status, &e, 400, "invalid_filter");
    let (status, e) = list("?priority=urgent").await;
    assert_error(status, &e, 400, "invalid_filter");
}

async fn two_overloads_in_a_row_fall_back_to_the_next_model(s: Arc<TestStack>) {
    let id = s.anon().submit_job(&json!({"prompt": "Sonnet is overloaded [[sim:529@claude-sonnet-5-5]]", "model": "claude-sonnet-5-5"})).await;
    let done = until(&s, &id, "completed", false).await;
    assert_eq!(done["attempts"], 3, "{done}");
    assert_eq!(
        done["model"], "claude-haiku-5-5",
        "the row records the model that answered"
    );
    assert_eq!(s.billed(&id), 1);
    let log = done["attempt_log"].as_array().unwrap();
    let summary: Vec<(&str, &str)> = log
        .iter()
        .map(|a| (a["model"].as_str().unwrap(), a["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(
        summary,
        [
            ("claude-sonnet-5-5", "retry"),
            ("claude-sonnet-5-5", "retry"),
            ("claude-haiku-5-5", "completed"),
        ],
        "{done}"
    );
    assert!(log[0]["error"].as_str().unwrap().contains("529"));
}

async fn every_job_reaches_a_terminal_state_across_a_runtime_kill(s: Arc<TestStack>) {
    let user = s.user("survivor");
    let mut ids = Vec::new();
    for i in 0..12 {
        ids.push(
            user.submit_job(&json!({"prompt": format!("Job {i} [[sim:slow=1500]]")}))
                .await,
        );
    }
    // The kill comes while calls are in flight: once one runs.
    eventually("a job is running", Duration::from_secs(60), || async {
        for id in &ids {
            if user.job(id).await["status"] == "running" {
                return Some(());
            }
        }
        None
    })
    .await;
    let in_flight = {
        let mut n = 0;
        for id in &ids {
            let (_, j) = user.get(&format!("/jobs/{id}")).await;
            if j["status"] == "running" {
                n += 1;
            }
        }
        n
    };
    s.restart_now().await;
    // Lost messages come back through the reconciler (RECONCILE_AFTER_S is 20 s in tests).
    for id in &ids {
        eventually(
            &format!("job {id} is terminal after the kill"),
            Duration::from_secs(120),
            || async {
                s.cron().await;
                let (_, j) = user.get(&format!("/jobs/{id}")).await;
                (j["status"] == "completed").then_some(())
            },
        )
        .await;
    }
    let twice: Vec<String> = ids.iter().filter(|id| s.billed(id) > 1).cloned().collect();
    println!(
        "    kill test: {in_flight} job(s) in flight at the kill, {} billed twice",
        twice.len()
    );
    assert!(
        twice.len() <= in_flight,
        "billed twice: {twice:?}, in flight: {in_flight}"
    );
    for id in &ids {
        assert!(s.billed(id) >= 1, "{id} completed without a call");
    }
}

async fn the_rollout_sends_users_inside_the_percent_through_the_queue(s: Arc<TestStack>) {
    // The stack runs with QUEUE_ROLLOUT_PERCENT = 50.
    let (inside, outside) = (rollout_user("user", true), rollout_user("user", false));
    let call = |user: &str| {
        let user = s.user(user);
        async move {
            user.post_json(
                "/api/claude",
                &json!({"prompt": "Say hello through the rollout."}),
            )
            .await
        }
    };
    let (status, queued) = call(&inside).await;
    assert_eq!(status, 200, "{queued}");
    assert_eq!(queued["path"], "queue");
    let job_id = queued["jobId"].as_str().unwrap();
    assert!(queued["text"].as_str().unwrap().contains("Say hello"));
    let (_, row) = s.user(&inside).get(&format!("/jobs/{job_id}")).await;
    assert_eq!(
        row["status"], "completed",
        "the queue path leaves a job behind"
    );
    assert_eq!(s.billed(job_id), 1);

    let (status, direct) = call(&outside).await;
    assert_eq!(status, 200, "{direct}");
    assert_eq!(direct["path"], "direct");
    assert!(direct["cost_micros"].as_u64().unwrap() > 0);
    // The direct path records its call as a job too (no queue): completed, path "direct".
    let direct_id = direct["jobId"].as_str().expect("the call's job");
    let (_, listed) = s.user(&outside).get("/jobs").await;
    assert_eq!(
        listed["items"].as_array().map(Vec::len),
        Some(1),
        "{listed}"
    );
    assert_eq!(listed["items"][0]["id"], direct_id);
    assert_eq!(listed["items"][0]["status"], "completed");
    assert_eq!(listed["items"][0]["path"], "direct");
    // Deterministic per user: the same user takes the same path again.
    let (_, again) = call(&inside).await;
    assert_eq!(again["path"], "queue");
}

async fn a_bulk_burst_keeps_three_in_flight_and_does_not_slow_the_high_lane(s: Arc<TestStack>) {
    let user = s.user("burst");
    let mut bulk = Vec::new();
    for i in 0..8 {
        bulk.push(
            user.submit_job(&json!({
                "prompt": format!("Bulk item {i} [[sim:slow=1500]]"), "priority": "bulk", "mode": "sync"
            }))
            .await,
        );
    }
    let in_flight = || async {
        let (status, b) = s.anon().get("/api/budget").await;
        assert_eq!(status, 200, "{b}");
        b["lanes"]["bulk"]["in_flight"].as_u64().unwrap()
    };
    // Sample the bulk lane until its burst has ended; send one high-priority job into it once
    // the lane is busy.
    let mut max_bulk = 0;
    let mut high: Option<String> = None;
    let mut bulk_done = Vec::new();
    let started = std::time::Instant::now();
    loop {
        let n = in_flight().await;
        max_bulk = max_bulk.max(n);
        if n > 0 && high.is_none() {
            high = Some(
                user.submit_job(&json!({"prompt": "Interactive, please."}))
                    .await,
            );
        }
        bulk_done.clear();
        for id in &bulk {
            let j = user.job(id).await;
            if let Some(at) = j["completed_at"]
                .as_i64()
                .filter(|_| j["status"] == "completed")
            {
                bulk_done.push(at);
            }
        }
        if bulk_done.len() == bulk.len() {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(150),
            "the bulk burst did not end: {} of {} completed",
            bulk_done.len(),
            bulk.len()
        );
        end2end::pause(Duration::from_millis(150)).await;
    }
    println!("    bulk burst: at most {max_bulk} bulk call(s) in flight");
    assert!(
        max_bulk <= 3,
        "the bulk lane is limited to 3 in flight, saw {max_bulk}"
    );
    assert!(
        max_bulk >= 2,
        "the burst should have filled the lane, saw {max_bulk}"
    );
    let high_id = high.expect("the bulk lane never got busy");
    let done = user
        .job_reaches(&high_id, "completed", Duration::from_secs(30))
        .await;
    // Not slowed: it was answered while the burst still ran — however fast the machine is,
    // the burst's last call ends after it (an order, not a figure in milliseconds).
    let high_at = done["completed_at"].as_i64().unwrap();
    let last_bulk = bulk_done.iter().copied().max().unwrap();
    println!(
        "    high-priority job during the burst: {} ms, answered {} ms before the burst's last",
        done["elapsed_ms"],
        last_bulk - high_at
    );
    assert!(
        high_at < last_bulk,
        "the high lane waited for the bulk burst: answered at {high_at}, the burst's last at {last_bulk}"
    );
    for id in &bulk {
        assert_eq!(s.billed(id), 1);
    }
}

async fn a_429_without_retry_after_waits_the_cap_and_raises_an_alert(s: Arc<TestStack>) {
    s.sim.lock().knobs.retry_after_s = 0;
    let id = s
        .anon()
        .submit_job(&json!({"prompt": "Spend limit reached [[sim:429x1]]"}))
        .await;
    let done = until(&s, &id, "completed", false).await;
    s.sim.lock().knobs.retry_after_s = 1;
    assert_eq!(done["attempts"], 2, "{done}");
    assert!(done["attempt_log"][0]["error"]
        .as_str()
        .unwrap()
        .contains("429"));
    let (_, budget) = s.anon().get("/api/budget").await;
    assert!(
        budget["alerts"]["spend_limit_429s"].as_u64().unwrap() >= 1,
        "{budget}"
    );
    assert_eq!(s.billed(&id), 1);
}

async fn any_other_error_is_a_plain_retry(s: Arc<TestStack>) {
    let id = s
        .anon()
        .submit_job(&json!({"prompt": "I am a teapot [[sim:418x1]]"}))
        .await;
    let done = until(&s, &id, "completed", false).await;
    assert_eq!(done["attempts"], 2, "{done}");
    assert_eq!(done["attempt_log"][0]["outcome"], "retry");
    assert!(done["attempt_log"][0]["error"]
        .as_str()
        .unwrap()
        .contains("418"));
}

async fn no_job_was_billed_twice_outside_the_kill_test(s: Arc<TestStack>) {
    let (_, survivors) = s.user("survivor").get("/jobs?limit=100").await;
    let killed = ids(&survivors);
    let twice: Vec<(String, u64)> = s
        .sim
        .lock()
        .stats
        .billed_by_job
        .iter()
        .filter(|(id, n)| **n > 1 && !killed.contains(id))
        .map(|(id, n)| (id.clone(), *n))
        .collect();
    assert!(twice.is_empty(), "billed more than once: {twice:?}");
}
