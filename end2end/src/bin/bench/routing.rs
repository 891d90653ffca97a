//! `cargo xtask bench routing [--jobs N]`: deadline routing against "everything sync" and
//! "everything batch", on one fresh local stack (test timing profile) and the simulator.
//!
//! The workload: N jobs (default 8) of each of four deadline classes — 15 s, 60 s, 150 s and
//! 600 s — submitted at once, the same prompts in every pass. First a warm-up measures the
//! batches: five one-job batches of 30 s each, so the router expects 30 s. Then the simulator's
//! batches slow to 60 s (a slow day the measurements have not seen yet) and three passes run,
//! each by its own user:
//! - routed: the jobs send `deadline_s` and the router picks the path;
//! - everything sync: `mode: "sync"`;
//! - everything batch: `mode: "batch"`.
//!
//! Reported per pass: what the jobs cost (the simulator's billing), the share of deadlines met
//! (completed by `created_at + deadline`), and how many jobs each path answered. Results: a
//! table on stdout and `target/bench/routing.md`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use end2end::api::{client, send_json};
use end2end::{spawn_stack_with, TestStack};
use serde_json::{json, Value};

/// The deadline classes, in seconds.
const CLASSES: [u64; 4] = [15, 60, 150, 600];

pub fn run(args: &[String]) {
    let per_class = crate::common::arg(args, "--jobs", 8) as usize;
    let rt = crate::common::runtime();
    let knobs = sim::Knobs {
        batch_ms: 30_000,
        ..crate::common::instant_sim()
    };
    let stack = Arc::new(spawn_stack_with("bench-routing", &rt, knobs, Vec::new()));
    let rows = rt.block_on(async {
        warm_up(&stack).await;
        stack.sim.lock().knobs.batch_ms = 60_000;
        let mut rows = Vec::new();
        for pass in [Pass::Routed, Pass::Sync, Pass::Batch] {
            let started = Instant::now();
            let jobs = pass_of(&stack, pass, per_class).await;
            eprintln!(
                "==> {}: {} jobs in {} s",
                pass.label(),
                jobs.len(),
                started.elapsed().as_secs()
            );
            rows.push((pass, jobs));
        }
        rows
    });
    let sync_cost: u64 = rows
        .iter()
        .find(|(p, _)| *p == Pass::Sync)
        .map(|(_, jobs)| jobs.iter().map(|j| j.cost).sum())
        .unwrap_or(0);
    let mut table = format!(
        "Deadline routing against fixed modes: {per_class} jobs in each of the deadline classes \
         {CLASSES:?} s, submitted at once; the simulator's batches take 60 s while the router, \
         from a warm-up, expects 30 s (test timing profile: 10 s for a sync call, a 10 s rescue \
         reserve, a 2 s margin).\n\n\
         | pass | cost (simulator billing) | vs everything sync | deadlines met | answered by a batch | by sync | moved from a batch to sync |\n\
         |---|---:|---:|---:|---:|---:|---:|\n"
    );
    for (pass, jobs) in &rows {
        let cost: u64 = jobs.iter().map(|j| j.cost).sum();
        let met = jobs.iter().filter(|j| j.met).count();
        let by_batch = jobs.iter().filter(|j| j.mode == "batch").count();
        let moved = jobs.iter().filter(|j| j.moved).count();
        table.push_str(&format!(
            "| {} | ${:.6} | {:.0} % | {met} / {} ({:.0} %) | {by_batch} | {} | {moved} |\n",
            pass.label(),
            cost as f64 / 1e6,
            cost as f64 * 100.0 / sync_cost.max(1) as f64,
            jobs.len(),
            met as f64 * 100.0 / jobs.len().max(1) as f64,
            jobs.len() - by_batch,
        ));
    }
    drop(stack);
    rt.shutdown_timeout(Duration::from_secs(5));
    println!("{table}");
    crate::common::write("routing", &table);
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pass {
    Routed,
    Sync,
    Batch,
}

impl Pass {
    fn label(self) -> &'static str {
        match self {
            Pass::Routed => "routed by deadline",
            Pass::Sync => "everything sync",
            Pass::Batch => "everything batch",
        }
    }

    fn user(self) -> &'static str {
        match self {
            Pass::Routed => "bench-routed",
            Pass::Sync => "bench-sync",
            Pass::Batch => "bench-batch",
        }
    }
}

/// One job as the pass saw it end.
struct Ended {
    cost: u64,
    met: bool,
    mode: String,
    moved: bool,
}

async fn post(s: &TestStack, user: &str, body: &Value) -> String {
    let (status, ack) = send_json(
        client()
            .post(s.url("/jobs"))
            .header("x-user-id", user)
            .header("content-type", "application/json")
            .body(body.to_string()),
    )
    .await;
    assert_eq!(status, 202, "{ack}");
    ack["jobId"]
        .as_str()
        .or(ack["id"].as_str())
        .expect("job id")
        .to_string()
}

async fn job(s: &TestStack, user: &str, id: &str) -> Value {
    let (status, job) = send_json(
        client()
            .get(s.url(&format!("/jobs/{id}")))
            .header("x-user-id", user),
    )
    .await;
    assert_eq!(status, 200, "{job}");
    job
}

/// Runs the cron (as production does every minute; here about every second) until every job
/// has ended; answers them.
async fn run_to_end(s: &Arc<TestStack>, user: &str, ids: &[String]) -> Vec<Value> {
    let started = Instant::now();
    loop {
        let mut jobs = Vec::new();
        for id in ids {
            jobs.push(job(s, user, id).await);
        }
        let open = jobs.iter().any(|j| {
            matches!(
                j["status"].as_str(),
                Some("queued" | "running" | "submitted")
            )
        });
        if !open {
            return jobs;
        }
        assert!(
            started.elapsed() < Duration::from_secs(900),
            "{user}: jobs still open after 900 s"
        );
        s.cron().await;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Five batches of one job each, side by side, so that the router has measured five.
async fn warm_up(s: &Arc<TestStack>) {
    let user = "bench-warm";
    let mut ids = Vec::new();
    for i in 0..5 {
        let id = post(
            s,
            user,
            &json!({"prompt": format!("Warm-up {i}."), "mode": "batch"}),
        )
        .await;
        // Accumulated, then flushed on its own.
        loop {
            let rows = s
                .d1_now(&format!(
                    "SELECT COUNT(*) AS n FROM jobs WHERE id = '{id}' AND accumulated_at IS NOT NULL"
                ))
                .await;
            if rows[0]["n"] == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        send_json(client().post(s.url("/api/batches/flush"))).await;
        ids.push(id);
    }
    run_to_end(s, user, &ids).await;
    eprintln!("==> warm-up: 5 batches measured");
}

async fn pass_of(s: &Arc<TestStack>, pass: Pass, per_class: usize) -> Vec<Ended> {
    let user = pass.user();
    let mut ids = Vec::new();
    let mut deadlines = Vec::new();
    for (c, deadline_s) in CLASSES.iter().enumerate() {
        for i in 0..per_class {
            let mut body = json!({
                "prompt": format!("Job {c}-{i}: summarize the week's support tickets in three lines."),
                "output_config": {"effort": "low"},
            });
            match pass {
                Pass::Routed => body["deadline_s"] = json!(deadline_s),
                Pass::Sync => body["mode"] = json!("sync"),
                Pass::Batch => body["mode"] = json!("batch"),
            }
            ids.push(post(s, user, &body).await);
            deadlines.push(*deadline_s);
        }
    }
    let jobs = run_to_end(s, user, &ids).await;
    jobs.iter()
        .zip(deadlines)
        .map(|(j, deadline_s)| {
            let id = j["id"].as_str().unwrap();
            let completed = j["status"] == "completed";
            assert!(
                completed,
                "{}: job {id} did not complete: {j}",
                pass.label()
            );
            let took = j["completed_at"].as_i64().unwrap_or(i64::MAX)
                - j["created_at"].as_i64().unwrap_or(0);
            Ended {
                cost: s.sim_cost(id),
                met: completed && took <= deadline_s as i64 * 1000,
                mode: j["mode"].as_str().unwrap_or_default().to_string(),
                moved: j["route_reason"] == "batch_ran_late",
            }
        })
        .collect()
}
