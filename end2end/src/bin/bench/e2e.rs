//! `cargo xtask bench e2e [--jobs N]`: a synchronous job end to end with a 0-latency simulator.
//!
//! A fresh local stack; N jobs (default 100) of each kind are submitted one after the other —
//! a prompt job on the high lane (`POST /jobs`) and a sync feedback analysis (`POST /feedback`)
//! — and each is polled every 20 ms until it is completed. Reported per kind: p50 / p95 / max of
//! submit → completed as the client sees it, and of the job's own `completed_at − created_at`
//! (what the pipeline adds: queue delivery, budget reservation, the call, storage). Results: a
//! table on stdout and `target/bench/e2e.md`.

use std::time::{Duration, Instant};

use end2end::api::{client, send_json};
use end2end::{spawn_stack_with, TestStack};
use pipeline::ops::metrics::Percentiles;
use serde_json::{json, Value};

pub fn run(args: &[String]) {
    let jobs = crate::common::arg(args, "--jobs", 100) as usize;
    let rt = crate::common::runtime();
    let knobs = crate::common::instant_sim();
    let stack = spawn_stack_with("bench-e2e", &rt, knobs, Vec::new());
    let mut rows = Vec::new();
    rt.block_on(async {
        // Warm-up: the first calls compile and connect.
        for i in 0..5 {
            one(&stack, Kind::Prompt, i).await;
            one(&stack, Kind::Feedback, i).await;
        }
        for kind in [Kind::Prompt, Kind::Feedback] {
            let (mut client_ms, mut server_ms) = (Vec::new(), Vec::new());
            for i in 0..jobs {
                let (c, s) = one(&stack, kind, 100 + i).await;
                client_ms.push(c);
                server_ms.push(s);
            }
            eprintln!("==> {}: {jobs} jobs done", kind.label());
            rows.push((kind, client_ms, server_ms));
        }
    });
    drop(stack);
    rt.shutdown_timeout(Duration::from_secs(5));
    let mut table = format!(
        "Sync jobs end to end, one at a time, simulator latency 0 ({jobs} jobs per kind after 5 \
         warm-up jobs; polled every 20 ms).\n\n\
         | job | submit → completed p50 ms | p95 ms | max ms | inside the pipeline (created → completed) p50 ms | p95 ms |\n\
         |---|---:|---:|---:|---:|---:|\n"
    );
    for (kind, client_ms, server_ms) in rows {
        let max = client_ms.iter().copied().max().unwrap_or(0);
        let c = Percentiles::of(client_ms);
        let s = Percentiles::of(server_ms);
        let f = |v: Option<i64>| v.map_or("–".into(), |v| v.to_string());
        table.push_str(&format!(
            "| {} | {} | {} | {max} | {} | {} |\n",
            kind.label(),
            f(c.p50),
            f(c.p95),
            f(s.p50),
            f(s.p95)
        ));
    }
    println!("{table}");
    crate::common::write("e2e", &table);
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Prompt,
    Feedback,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::Prompt => "prompt job, high lane (`POST /jobs`)",
            Kind::Feedback => "feedback analysis, sync (`POST /feedback`)",
        }
    }
}

/// Submits one job and polls it until completed: (client ms, created → completed ms).
async fn one(s: &TestStack, kind: Kind, i: usize) -> (i64, i64) {
    let (path, body, poll) = match kind {
        Kind::Prompt => (
            "/jobs",
            json!({"prompt": format!("Benchmark {i}: one line on latency."), "max_tokens": 64, "output_config": {"effort": "low"}}),
            "/jobs/",
        ),
        Kind::Feedback => (
            "/feedback",
            json!({"mode": "sync", "text": format!("Benchmark {i}: the search box forgets my filters.")}),
            "/api/feedback/",
        ),
    };
    let t0 = Instant::now();
    let (status, ack) = send_json(
        client()
            .post(s.url(path))
            .header("x-user-id", "bench-e2e")
            .header("content-type", "application/json")
            .body(body.to_string()),
    )
    .await;
    assert_eq!(status, 202, "{ack}");
    let id = ack["jobId"]
        .as_str()
        .or(ack["id"].as_str())
        .expect("job id")
        .to_string();
    loop {
        let (status, job): (u16, Value) = send_json(
            client()
                .get(s.url(&format!("{poll}{id}")))
                .header("x-user-id", "bench-e2e"),
        )
        .await;
        assert_eq!(status, 200, "{job}");
        match job["status"].as_str() {
            Some("completed") => {
                let client_ms = t0.elapsed().as_millis() as i64;
                let server_ms = job["completed_at"].as_i64().unwrap_or(0)
                    - job["created_at"].as_i64().unwrap_or(0);
                return (client_ms, server_ms);
            }
            Some("queued" | "running") => {}
            other => panic!("job {id} ended {other:?}: {job}"),
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "job {id} not completed within 60 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
