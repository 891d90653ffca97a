//! Deadline routing suite (issue 20): jobs that say when their answer is needed instead of a
//! mode. On the test profile the router needs 10 s for a synchronous call, keeps a 10 s rescue
//! reserve and a 2 s margin, and expects a batch to take 6 s until five of ours were measured;
//! a job accumulates for at most 4 s. The simulator's batches take 2 s, or — for the late
//! batch — ten minutes.
//!
//! - a loose deadline goes through a Message Batch and costs half of the same job synchronous;
//! - a batch that runs late is cancelled at its jobs' rescue time: the deadline job is moved
//!   to a synchronous call and paid once, at the standard price, before its deadline; the
//!   batch's other jobs go back to a batch (one with a loose deadline keeps it);
//! - a close deadline goes straight to sync;
//! - a deadline not even a synchronous call can meet is refused with a 400, storing nothing;
//! - the Dashboard's figures (`GET /api/routing`) count the routes, the deadlines met and the
//!   money saved, equal to what the jobs cost.

use std::sync::Arc;
use std::time::Duration;

use end2end::{eventually, tests, Client, StackConfig, Suite, TestStack};
use serde_json::{json, Value};

pub fn suite() -> Suite {
    let knobs = sim::Knobs {
        batch_ms: 2_000,
        ..sim::Knobs::default()
    };
    end2end::suite_with(
        "routing",
        StackConfig {
            knobs,
            ..StackConfig::vars(&[])
        },
        tests![
            a_loose_deadline_goes_to_a_batch_and_costs_half,
            a_batch_that_runs_late_is_cancelled_and_its_deadline_job_paid_once_by_sync,
            a_close_deadline_goes_straight_to_sync,
            a_deadline_not_even_sync_can_meet_is_refused_and_stores_nothing,
            the_dashboard_counts_the_routes_the_deadlines_met_and_the_money_saved,
            the_spa_shows_the_routing_panel_and_a_jobs_route,
        ],
    )
}

const WAIT: Duration = Duration::from_secs(120);

fn prompt(what: &str) -> String {
    format!("Summarize the {what} for the operations team in two sentences.")
}

/// Runs the cron (flush, poll, rescue) until the job has ended; answers it.
async fn ended(user: &Client, id: &str) -> Value {
    eventually(&format!("job {id} ends"), WAIT, || async {
        let job = user.job(id).await;
        let open = ["queued", "running", "submitted"].contains(&job["status"].as_str().unwrap());
        if open {
            user.stack().cron().await;
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        (!open).then_some(job)
    })
    .await
}

fn cost(job: &Value) -> u64 {
    job["cost_micros"].as_u64().unwrap()
}

async fn a_loose_deadline_goes_to_a_batch_and_costs_half(s: Arc<TestStack>) {
    let u = s.user("loose");
    let text = prompt("quarterly plan");
    let routed = u
        .submit_job(&json!({"prompt": text, "deadline_s": 3600}))
        .await;
    let sync = u.submit_job(&json!({"prompt": text, "mode": "sync"})).await;
    let (routed, sync) = (ended(&u, &routed).await, ended(&u, &sync).await);
    assert_eq!(routed["status"], "completed", "{routed}");
    assert_eq!(routed["mode"], "batch");
    assert_eq!(routed["route_reason"], "deadline_allows_batch");
    assert_eq!(routed["deadline_met"], true);
    assert!(routed["anthropic_batch_id"].is_string(), "{routed}");
    let deadline = routed["deadline_at"].as_i64().unwrap();
    let created = routed["created_at"].as_i64().unwrap();
    assert!((deadline - created - 3_600_000).abs() < 2_000, "{routed}");
    // The Message Batches API bills half the standard price.
    let (half, full) = (cost(&routed), cost(&sync));
    assert!(full > 0);
    assert!(half.abs_diff(full / 2) <= 1, "batch {half} vs sync {full}");
    let id = routed["id"].as_str().unwrap();
    assert_eq!(s.billed(id), 1);
    assert_eq!(s.sim_cost(id), half);
}

async fn a_batch_that_runs_late_is_cancelled_and_its_deadline_job_paid_once_by_sync(
    s: Arc<TestStack>,
) {
    let u = s.user("late");
    // Batches created from now on take ten minutes.
    s.sim.lock().knobs.batch_ms = 600_000;
    let tight = u
        .submit_job(&json!({"prompt": prompt("incident review"), "deadline_s": 40}))
        .await;
    let loose = u
        .submit_job(&json!({"prompt": prompt("hiring plan"), "deadline_s": 7200}))
        .await;
    let plain = u
        .submit_job(&json!({"prompt": prompt("budget memo"), "mode": "batch"}))
        .await;
    // All three go into one batch: flushed once all three wait (no cron runs meanwhile).
    eventually("the three jobs accumulate", WAIT, || async {
        let rows = s
            .d1_now("SELECT COUNT(*) AS n FROM jobs WHERE user_id = 'late' AND accumulated_at IS NOT NULL")
            .await;
        (rows[0]["n"] == 3).then_some(())
    })
    .await;
    let batches = u
        .flushed(&[tight.clone(), loose.clone(), plain.clone()])
        .await;
    // Its length was fixed at its creation: later batches are quick again, for the jobs that
    // go back to one.
    s.sim.lock().knobs.batch_ms = 2_000;
    assert!(batches.iter().all(|b| b == &batches[0]), "{batches:?}");
    let tight_job = u.job(&tight).await;
    assert_eq!(tight_job["mode"], "batch", "{tight_job}");
    assert_eq!(tight_job["route_reason"], "deadline_allows_batch");
    // The rescue: the cron cancels the batch 10 s before the tight deadline.
    let moved = ended(&u, &tight).await;
    assert_eq!(moved["status"], "completed", "{moved}");
    assert_eq!(moved["mode"], "sync");
    assert_eq!(moved["route_reason"], "batch_ran_late");
    assert_eq!(moved["deadline_met"], true, "{moved}");
    assert!(
        moved["completed_at"].as_i64().unwrap() <= moved["deadline_at"].as_i64().unwrap(),
        "{moved}"
    );
    // Paid once, by the synchronous call: the canceled batch request billed nothing.
    assert_eq!(s.billed(&tight), 1);
    assert_eq!(s.sim_cost(&tight), cost(&moved));
    let batch = s.sim_batch(&batches[0]).await;
    assert_eq!(batch["request_counts"]["canceled"], 3, "{batch}");
    // The batch's other jobs were not canceled by anyone: they go back to a batch.
    for id in [&loose, &plain] {
        let job = ended(&u, id).await;
        assert_eq!(job["status"], "completed", "{job}");
        assert_eq!(job["mode"], "batch", "{job}");
        assert_ne!(job["anthropic_batch_id"], batches[0].as_str(), "{job}");
        assert_eq!(s.billed(id), 1, "{job}");
    }
    let kept = u.job(&loose).await;
    assert_eq!(kept["route_reason"], "deadline_allows_batch");
    assert_eq!(kept["deadline_met"], true);
}

async fn a_close_deadline_goes_straight_to_sync(s: Arc<TestStack>) {
    let u = s.user("close");
    // 15 s: more than a synchronous call needs (10 s), less than a batch (4 + 6 + 2 + 10 s).
    let id = u
        .submit_job(&json!({"prompt": prompt("launch checklist"), "deadline_s": 15}))
        .await;
    let job = ended(&u, &id).await;
    assert_eq!(job["status"], "completed", "{job}");
    assert_eq!(job["mode"], "sync");
    assert_eq!(job["route_reason"], "deadline_too_close_for_batch");
    assert_eq!(job["deadline_met"], true);
    assert!(job["anthropic_batch_id"].is_null());
    // Feedback takes a deadline too.
    let fid = u
        .submit_feedback(&json!({"text": "Export is slow.", "deadline_s": 15}))
        .await;
    let feedback = ended(&u, &fid).await;
    assert_eq!(feedback["mode"], "sync", "{feedback}");
    assert_eq!(feedback["route_reason"], "deadline_too_close_for_batch");
}

async fn a_deadline_not_even_sync_can_meet_is_refused_and_stores_nothing(s: Arc<TestStack>) {
    let u = s.user("refused");
    let past = "2020-01-01T00:00:00Z";
    for (body, code, field) in [
        (
            json!({"prompt": "Hi", "deadline_s": 5}),
            "deadline_unreachable",
            "deadline_s",
        ),
        (
            json!({"prompt": "Hi", "deadline_at": past}),
            "deadline_unreachable",
            "deadline_s",
        ),
        (
            json!({"prompt": "Hi", "deadline_s": 600, "mode": "batch"}),
            "invalid_field",
            "mode",
        ),
        (
            json!({"prompt": "Hi", "deadline_s": 600, "deadline_at": past}),
            "invalid_field",
            "deadline_at",
        ),
        (
            json!({"prompt": "Hi", "deadline_s": -3}),
            "invalid_field",
            "deadline_s",
        ),
        (
            json!({"prompt": "Hi", "deadline_at": "tomorrow"}),
            "invalid_field",
            "deadline_at",
        ),
    ] {
        let (status, answer) = u.post_json("/jobs", &body).await;
        assert_eq!(status, 400, "{body}: {answer}");
        assert_eq!(answer["code"], code, "{body}: {answer}");
        assert_eq!(answer["field"], field, "{body}: {answer}");
        assert!(answer["error"].as_str().unwrap().len() > 10, "{answer}");
    }
    let (status, answer) = u
        .post_json("/feedback", &json!({"text": "Hi", "deadline_s": 3}))
        .await;
    assert_eq!(
        (status, answer["code"].as_str()),
        (400, Some("deadline_unreachable"))
    );
    let (status, answer) = u
        .post_json("/api/claude", &json!({"prompt": "Hi", "deadline_s": 600}))
        .await;
    assert_eq!(status, 400, "{answer}");
    assert!(u.all_jobs().await.is_empty());
    let rows = s.d1("SELECT COUNT(*) AS n FROM jobs WHERE user_id = 'refused'");
    assert_eq!(rows[0]["n"], 0);
}

async fn the_dashboard_counts_the_routes_the_deadlines_met_and_the_money_saved(s: Arc<TestStack>) {
    let admin = s.user("routing-admin");
    let r = admin.get_ok("/api/routing?days=1").await;
    // Every deadline job of the suite so far has ended.
    let mut jobs = Vec::new();
    for user in ["loose", "late", "close"] {
        jobs.extend(
            s.user(user)
                .all_jobs()
                .await
                .into_iter()
                .filter(|j| j["deadline_at"].is_i64()),
        );
    }
    let count = |f: &dyn Fn(&Value) -> bool| jobs.iter().filter(|j| f(j)).count() as u64;
    assert_eq!(r["jobs"].as_u64().unwrap(), jobs.len() as u64, "{r}");
    assert_eq!(r["by_batch"], count(&|j| j["mode"] == "batch"), "{r}");
    assert_eq!(
        r["by_sync"],
        count(&|j| j["route_reason"] == "deadline_too_close_for_batch"),
        "{r}"
    );
    assert_eq!(r["moved"], 1, "{r}");
    assert_eq!(r["met"], count(&|j| j["deadline_met"] == true), "{r}");
    assert_eq!(r["missed"], 0, "{r}");
    let batch_cost: u64 = jobs.iter().filter(|j| j["mode"] == "batch").map(cost).sum();
    assert_eq!(r["saved_micros"], batch_cost, "{r}");
    assert_eq!(r["cost_micros"], jobs.iter().map(cost).sum::<u64>(), "{r}");
    assert_eq!(
        (r["sync_s"].as_u64(), r["rescue_s"].as_u64()),
        (Some(10), Some(10))
    );
    let (status, _) = admin.get("/api/routing?days=0").await;
    assert_eq!(status, 400);
}

async fn the_spa_shows_the_routing_panel_and_a_jobs_route(s: Arc<TestStack>) {
    use end2end::browser::{check_text, screenshot, Browser};
    // The SPA in open mode is the anonymous user.
    let u = s.user("anonymous");
    let id = u
        .submit_job(&json!({"prompt": prompt("release notes"), "deadline_s": 15}))
        .await;
    ended(&u, &id).await;
    let r = s.user("routing-admin").get_ok("/api/routing?days=7").await;
    let browser = Browser::launch(&s, "routing").await;
    let page = browser.open(&s.url("/ui/dashboard")).await;
    check_text(&page, "routing-jobs", &r["jobs"].to_string()).await;
    check_text(&page, "routing-moved", "1").await;
    let micros = r["saved_micros"].as_u64().unwrap();
    let saved = format!("${}.{:06}", micros / 1_000_000, micros % 1_000_000);
    check_text(&page, "routing-saved", &saved).await;
    screenshot(&page, &s, "dashboard-routing").await;
    let job = browser.open(&s.url(&format!("/ui/jobs/{id}"))).await;
    check_text(
        &job,
        "detail-deadline",
        "sent to sync: too close for a batch",
    )
    .await;
    check_text(&job, "detail-deadline", "met").await;
    screenshot(&job, &s, "job-deadline").await;
    browser.close().await;
}
