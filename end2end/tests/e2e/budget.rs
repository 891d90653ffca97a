//! Rate limits and cost suite, on a stack whose simulator allows only 40 requests per minute and
//! whose Worker flushes bulk accumulations at 50 jobs (or after an hour): the token budget keeps
//! bursts under the provider's limits without a single 429, the bulk lane accumulates across
//! queue batches into one Message Batch at half price, a create call of unknown outcome is
//! adopted rather than paid twice, errored batch requests are resubmitted or failed, canceling
//! reaches into Anthropic batches, prompt caching shows up where it really happens, and every
//! job's cost equals what the simulator billed.
//!
//! One file on purpose, though over 400 lines: a suite is one stack and one module (run by name
//! by `cargo xtask test`), and its scenarios share that stack.

use std::sync::Arc;
use std::time::{Duration, Instant};

use end2end::{eventually, tests, Client, StackConfig, Suite, TestStack};
use serde_json::{json, Value};

/// The simulator's requests per minute in this suite; the budget is configured with 50 and must
/// learn 40 from the answers' headers.
const RPM: u32 = 40;

pub fn suite() -> Suite {
    let knobs = sim::Knobs {
        rpm: RPM,
        itpm: 400_000,
        otpm: 200_000,
        batch_ms: 2_000,
        ..sim::Knobs::default()
    };
    let config = StackConfig {
        knobs,
        ..StackConfig::vars(&[
            ("BUDGET_RPM", "50"),
            ("BUDGET_ITPM", "400000"),
            ("BUDGET_OTPM", "200000"),
            ("BATCH_FLUSH_SIZE", "50"),
            ("BATCH_FLUSH_AGE_S", "3600"),
        ])
    };
    end2end::suite_with(
        "budget",
        config,
        tests![
            fifty_bulk_jobs_make_one_batch_create_and_cost_half_of_the_same_jobs_in_sync,
            a_burst_beyond_the_rate_limit_waits_for_the_budget_and_draws_no_429,
            a_429_pauses_the_budget_and_the_job_still_completes,
            a_long_shared_system_prompt_is_written_once_then_read_from_the_cache,
            waiting_and_batched_jobs_can_be_canceled_and_the_last_one_cancels_its_batch,
            errored_batch_requests_are_resubmitted_or_failed_by_their_error,
            a_create_call_that_times_out_is_adopted_not_sent_again,
            every_jobs_cost_equals_what_the_simulator_billed,
        ],
    )
}

/// Every user of this suite, for the final cost check.
const USERS: &[&str] = &[
    "half", "burst", "pause", "cache", "cancel", "errored", "adopt",
];

/// Submits a job and waits (running the batch machinery) until it completes; answers it.
async fn completed(user: &Client, body: &Value) -> Value {
    let id = user.submit_job(body).await;
    user.all_reach(
        std::slice::from_ref(&id),
        "completed",
        Duration::from_secs(60),
    )
    .await;
    user.job(&id).await
}

fn prompt(i: usize) -> String {
    format!("Item {i}: summarize the quarterly plan for the operations team.")
}

fn sum(jobs: &[Value]) -> u64 {
    jobs.iter()
        .map(|j| j["cost_micros"].as_u64().unwrap())
        .sum()
}

async fn fifty_bulk_jobs_make_one_batch_create_and_cost_half_of_the_same_jobs_in_sync(
    s: Arc<TestStack>,
) {
    let user = s.user("half");
    let creates = s.sim_calls("batches.create 200");
    let mut bulk = Vec::new();
    for i in 0..50 {
        let body = json!({"prompt": prompt(i), "priority": "bulk", "max_tokens": 100, "output_config": {"effort": "low"}});
        bulk.push(user.submit_job(&body).await);
    }
    let mut sync = Vec::new();
    for i in 0..50 {
        let body = json!({"prompt": prompt(i), "priority": "high", "max_tokens": 100, "output_config": {"effort": "low"}});
        sync.push(user.submit_job(&body).await);
    }
    // The 50th waiting job triggers the flush in the bulk consumer: no cron needed for it.
    eventually(
        "the 50 bulk jobs are submitted in one batch",
        Duration::from_secs(90),
        || async {
            let mut batches = std::collections::BTreeSet::new();
            for id in &bulk {
                let j = user.job(id).await;
                if j["status"] == "queued" {
                    return None;
                }
                batches.insert(j["anthropic_batch_id"].as_str().unwrap_or("").to_string());
            }
            Some(batches)
        },
    )
    .await;
    assert_eq!(
        s.sim_calls("batches.create 200") - creates,
        1,
        "one batch-create call for 50 jobs accumulated across queue batches"
    );
    user.all_reach(&bulk, "completed", Duration::from_secs(90))
        .await;
    user.all_reach(&sync, "completed", Duration::from_secs(120))
        .await;
    let mut bulk_jobs = Vec::new();
    for id in &bulk {
        bulk_jobs.push(user.job(id).await);
    }
    let mut sync_jobs = Vec::new();
    for id in &sync {
        sync_jobs.push(user.job(id).await);
    }
    let one_batch: std::collections::BTreeSet<_> = bulk_jobs
        .iter()
        .map(|j| j["anthropic_batch_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(one_batch.len(), 1, "{one_batch:?}");
    let (b, st) = (sum(&bulk_jobs), sum(&sync_jobs));
    let billed_b: u64 = bulk.iter().map(|id| s.sim_cost(id)).sum();
    let billed_s: u64 = sync.iter().map(|id| s.sim_cost(id)).sum();
    println!(
        "    50 jobs: batch ${:.6} (billed ${:.6}), sync ${:.6} (billed ${:.6})",
        b as f64 / 1e6,
        billed_b as f64 / 1e6,
        st as f64 / 1e6,
        billed_s as f64 / 1e6
    );
    assert_eq!(b, billed_b, "the product's batch cost is what was billed");
    assert_eq!(st, billed_s, "the product's sync cost is what was billed");
    // Half, to the micro-dollar per job (each cost is rounded once).
    assert!(
        (2 * b).abs_diff(st) <= 50,
        "batch {b} µ$ is half of sync {st} µ$"
    );
    for (bj, sj) in bulk_jobs.iter().zip(&sync_jobs) {
        assert_eq!(bj["input_tokens"], sj["input_tokens"]);
        assert_eq!(bj["output_tokens"], sj["output_tokens"]);
    }
    for id in bulk.iter().chain(&sync) {
        assert_eq!(s.billed(id), 1, "job {id} billed once");
    }
    assert_eq!(
        s.sim_calls("messages 429"),
        0,
        "the budget kept every call in"
    );
}

async fn a_burst_beyond_the_rate_limit_waits_for_the_budget_and_draws_no_429(s: Arc<TestStack>) {
    let user = s.user("burst");
    let (_, before) = s.anon().get("/api/budget").await;
    let refused_before = before["refused"].as_u64().unwrap_or(0);
    let started = Instant::now();
    let mut ids = Vec::new();
    for i in 0..40 {
        let body = json!({"prompt": format!("Burst {i}: one line, please."), "max_tokens": 50, "output_config": {"effort": "low"}});
        ids.push(user.submit_job(&body).await);
    }
    user.all_reach(&ids, "completed", Duration::from_secs(170))
        .await;
    let took = started.elapsed();
    let (_, budget) = s.anon().get("/api/budget").await;
    println!(
        "    40 jobs at {RPM} rpm after the bucket was drained: {:.1} s, {} reservation(s) refused and retried",
        took.as_secs_f64(),
        budget["refused"].as_u64().unwrap_or(0) - refused_before
    );
    assert_eq!(s.sim_calls("messages 429"), 0, "no 429 drawn: {budget}");
    assert!(
        budget["refused"].as_u64().unwrap() > refused_before,
        "the budget held calls back: {budget}"
    );
    for id in &ids {
        let j = user.job(id).await;
        assert_eq!(
            j["attempts"], 1,
            "waiting for the budget spends no retry: {j}"
        );
        assert_eq!(s.billed(id), 1);
    }
    // The budget learned the simulator's limit (40) from the headers; it was configured at 50.
    let class = budget["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["class"] == "sonnet-5-5")
        .cloned()
        .unwrap_or_else(|| panic!("no class for the default model: {budget}"));
    assert_eq!(class["requests"]["limit"], RPM, "{class}");
    assert_eq!(budget["configured"]["rpm"], 50);
    assert_eq!(budget["enforce"], true);
}

async fn a_429_pauses_the_budget_and_the_job_still_completes(s: Arc<TestStack>) {
    let user = s.user("pause");
    let (_, before) = s.anon().get("/api/budget").await;
    let body = json!({"prompt": "Rate limited once [[sim:429x1]]", "max_tokens": 50, "output_config": {"effort": "low"}});
    let j = completed(&user, &body).await;
    assert_eq!(j["attempts"], 2, "{j}");
    let (_, after) = s.anon().get("/api/budget").await;
    assert!(
        after["rate_limited"].as_u64().unwrap() > before["rate_limited"].as_u64().unwrap(),
        "the 429 reached the budget: {after}"
    );
}

async fn a_long_shared_system_prompt_is_written_once_then_read_from_the_cache(s: Arc<TestStack>) {
    let user = s.user("cache");
    let system = "You answer for the support team. Follow the policy below exactly. ".repeat(90);
    let mut jobs = Vec::new();
    for q in ["How do refunds work?", "How do I reset a password?"] {
        let body = json!({"prompt": q, "system": system, "max_tokens": 300, "output_config": {"effort": "low"}});
        jobs.push(completed(&user, &body).await);
    }
    let (first, second) = (&jobs[0], &jobs[1]);
    let written = first["cache_write_tokens"].as_u64().unwrap();
    assert!(
        written >= 1024,
        "the long system prompt is written: {first}"
    );
    assert_eq!(
        second["cache_read_tokens"].as_u64().unwrap(),
        written,
        "{second}"
    );
    assert_eq!(second["cache_write_tokens"], 0);
    let (c1, c2) = (
        first["cost_micros"].as_u64().unwrap(),
        second["cost_micros"].as_u64().unwrap(),
    );
    println!(
        "    shared {written}-token system prompt: first ${:.6}, second ${:.6}",
        c1 as f64 / 1e6,
        c2 as f64 / 1e6
    );
    assert!(c2 < c1, "the cache read is cheaper than the write");
    for j in &jobs {
        let id = j["id"].as_str().unwrap();
        assert_eq!(j["cost_micros"].as_u64().unwrap(), s.sim_cost(id));
    }
    // The Usage page's cache view: one line (template `prompt`, the model, sync).
    // (Open mode makes every caller an admin: name the user.)
    let r = user.get_ok("/api/usage/cache?user=cache").await;
    assert_eq!(r["user_id"], "cache", "{r}");
    let lines = r["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 1, "{r}");
    let l = &lines[0];
    assert_eq!(
        (l["template"].as_str(), l["mode"].as_str()),
        (Some("prompt"), Some("sync"))
    );
    assert_eq!(l["jobs"], 2);
    assert_eq!(l["cache_read_tokens"], written);
    assert_eq!(l["cache_write_tokens"], written);
    let prompt: u64 = jobs
        .iter()
        .map(|j| {
            ["input_tokens", "cache_write_tokens", "cache_read_tokens"]
                .iter()
                .map(|k| j[k].as_u64().unwrap())
                .sum::<u64>()
        })
        .sum();
    assert_eq!(l["prompt_tokens"], prompt, "{l}");
    let rate = l["hit_rate"].as_f64().unwrap();
    assert!((rate - written as f64 / prompt as f64).abs() < 1e-9, "{l}");
    // A read saves 0.9 of the input price, a 5-minute write costs 0.25 more: a net saving.
    assert!(l["saved_micros"].as_i64().unwrap() > 0, "{l}");
    assert_eq!(r["saved_micros"], l["saved_micros"]);
}

async fn waiting_and_batched_jobs_can_be_canceled_and_the_last_one_cancels_its_batch(
    s: Arc<TestStack>,
) {
    let user = s.user("cancel");
    // A job waiting in the accumulation is canceled and never sent.
    let waiting = user
        .submit_job(&json!({"prompt": "Wait for me", "priority": "bulk"}))
        .await;
    end2end::pause(Duration::from_secs(5)).await;
    let (status, j) = user.cancel(&waiting).await;
    assert_eq!(status, 200, "{j}");
    assert_eq!(j["status"], "canceled");
    // Two jobs inside a slow Message Batch: the first cancel leaves the batch running, the
    // second (its last live job) cancels it.
    s.sim.lock().knobs.batch_ms = 60_000;
    let a = user
        .submit_job(&json!({"prompt": "Batched A", "priority": "bulk"}))
        .await;
    let b = user
        .submit_job(&json!({"prompt": "Batched B", "priority": "bulk"}))
        .await;
    let batches = user.flushed(&[a.clone(), b.clone()]).await;
    s.sim.lock().knobs.batch_ms = 2_000;
    assert_eq!(batches[0], batches[1], "one batch for both");
    let (status, j) = user.cancel(&a).await;
    assert_eq!(
        (status, j["status"].as_str()),
        (200, Some("canceled")),
        "{j}"
    );
    assert_eq!(
        s.sim_batch(&batches[0]).await["processing_status"],
        "in_progress"
    );
    let (status, j) = user.cancel(&b).await;
    assert_eq!(
        (status, j["status"].as_str()),
        (200, Some("canceled")),
        "{j}"
    );
    let batch = s.sim_batch(&batches[0]).await;
    assert_ne!(batch["processing_status"], "in_progress", "{batch}");
    // Nothing was billed, and the poller leaves canceled jobs alone.
    s.cron().await;
    for id in [&waiting, &a, &b] {
        assert_eq!(s.billed(id), 0, "job {id} was never billed");
        assert_eq!(user.job(id).await["status"], "canceled");
    }
    let (status, j) = user.cancel(&a).await;
    assert_eq!(status, 409, "a canceled job cannot be canceled again: {j}");
}

async fn errored_batch_requests_are_resubmitted_or_failed_by_their_error(s: Arc<TestStack>) {
    let user = s.user("errored");
    let transient = user
        .submit_job(&json!({"prompt": "Overloaded once [[sim:529x1]]", "priority": "bulk"}))
        .await;
    let permanent = user
        .submit_job(&json!({"prompt": "Always invalid [[sim:400]]", "priority": "bulk"}))
        .await;
    let first = user.flushed(&[transient.clone(), permanent.clone()]).await;
    let failed = eventually("the 400 fails", Duration::from_secs(60), || async {
        s.anon().post_ok("/api/batches/poll").await;
        let j = user.job(&permanent).await;
        (j["status"] == "failed").then_some(j)
    })
    .await;
    assert!(
        failed["error"].as_str().unwrap().contains("400"),
        "{failed}"
    );
    // The overloaded request went back to the accumulation and completes in a later batch.
    let done = eventually(
        "the 529 is resubmitted and completes",
        Duration::from_secs(90),
        || async {
            s.anon().post_ok("/api/batches/flush").await;
            let j = user.job(&transient).await;
            (j["status"] == "completed").then_some(j)
        },
    )
    .await;
    assert_ne!(
        done["anthropic_batch_id"],
        first[0].as_str(),
        "a later batch: {done}"
    );
    assert_eq!(
        s.billed(&transient),
        1,
        "errored batch requests are not billed"
    );
    assert_eq!(s.billed(&permanent), 0);
}

async fn a_create_call_that_times_out_is_adopted_not_sent_again(s: Arc<TestStack>) {
    let user = s.user("adopt");
    let creates = s.sim_calls("batches.create 200");
    let ids = vec![
        user.submit_job(&json!({"prompt": "Adopt me 1", "priority": "bulk"}))
            .await,
        user.submit_job(&json!({"prompt": "Adopt me 2", "priority": "bulk"}))
            .await,
    ];
    end2end::pause(Duration::from_secs(5)).await;
    // The simulator creates the batch but answers after the Worker's 5 s timeout.
    s.sim.lock().knobs.create_batch_delay_ms = 8_000;
    let report = eventually(
        "a flush with an unknown outcome",
        Duration::from_secs(60),
        || async {
            let r = s.anon().post_ok("/api/batches/flush").await;
            (r["flush"]["outcomes_unknown"].as_u64() == Some(1)).then_some(r)
        },
    )
    .await;
    s.sim.lock().knobs.create_batch_delay_ms = 0;
    println!("    flush report: {}", report["flush"]);
    // Nothing is sent again while the outcome is unknown, however often the machinery runs.
    for _ in 0..3 {
        s.anon().post_ok("/api/batches/flush").await;
    }
    for id in &ids {
        assert_eq!(user.job(id).await["status"], "queued");
    }
    // Once the call can no longer be in flight, recovery finds the batch and adopts it.
    let adopted = eventually(
        "recovery adopts the batch",
        Duration::from_secs(60),
        || async {
            let r = s.anon().post_ok("/api/batches/poll").await;
            tokio::time::sleep(Duration::from_millis(500)).await;
            (r["recovery"]["adopted"].as_u64() == Some(1)).then_some(r)
        },
    )
    .await;
    println!("    recovery: {}", adopted["recovery"]);
    user.all_reach(&ids, "completed", Duration::from_secs(60))
        .await;
    assert_eq!(
        s.sim_calls("batches.create 200") - creates,
        1,
        "one create call in all"
    );
    for id in &ids {
        assert_eq!(s.billed(id), 1, "job {id} billed once");
    }
}

async fn every_jobs_cost_equals_what_the_simulator_billed(s: Arc<TestStack>) {
    let mut checked = 0;
    for user in USERS {
        for j in s.user(user).all_jobs().await {
            let id = j["id"].as_str().unwrap();
            assert_eq!(j["cost_unknown"], false, "{j}");
            assert_eq!(
                j["cost_micros"].as_u64().unwrap(),
                s.sim_cost(id),
                "job {id} of {user}: {j}"
            );
            checked += 1;
        }
    }
    println!("    {checked} jobs: each cost equals the simulator's bill, to the micro-dollar");
    assert!(checked >= 150, "{checked}");
}
