//! `cargo xtask bench load [--clients N] [--seconds S]`: the producers under load.
//!
//! A fresh local stack; N concurrent clients (default 200), each sending one request after the
//! other for S seconds (default 10): feedback analyses (sync, high lane) and prompt jobs (bulk
//! lane) in turn, each client as its own user. Reported: requests, accepted (202) per second,
//! latency p50 / p99 of all answers, answers by status (no 5xx is the aim), and whether every
//! 202 has its row in D1 afterwards. Results: a table on stdout and `target/bench/load.md`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use end2end::spawn_stack_with;

pub fn run(args: &[String]) {
    let clients = crate::common::arg(args, "--clients", 200) as usize;
    let seconds = crate::common::arg(args, "--seconds", 10);
    let rt = crate::common::runtime();
    let stack = spawn_stack_with("bench-load", &rt, sim::Knobs::default(), Vec::new());
    let base = Arc::new(stack.base_url.clone());
    eprintln!("==> {clients} clients for {seconds} s");
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .pool_max_idle_per_host(clients)
        .build()
        .expect("client");
    let started = Instant::now();
    let deadline = started + Duration::from_secs(seconds);
    let results = rt.block_on(async {
        let tasks: Vec<_> = (0..clients)
            .map(|c| {
                let http = http.clone();
                let base = base.clone();
                tokio::spawn(async move {
                    let mut out = Vec::new();
                    let mut i = 0u64;
                    while Instant::now() < deadline {
                        let (path, body) = if i.is_multiple_of(2) {
                            ("/feedback", format!(r#"{{"text":"Load test {c}-{i}: the app is slow"}}"#))
                        } else {
                            (
                                "/jobs",
                                format!(r#"{{"prompt":"Load test {c}-{i}","priority":"bulk","max_tokens":20,"output_config":{{"effort":"low"}}}}"#),
                            )
                        };
                        let t = Instant::now();
                        let resp = http
                            .post(format!("{base}{path}"))
                            .header("x-user-id", format!("load-{c}"))
                            .header("content-type", "application/json")
                            .body(body)
                            .send()
                            .await;
                        let (status, text) = match resp {
                            Ok(r) => {
                                let s = r.status().as_u16();
                                let body = r.text().await.unwrap_or_default();
                                (s, if s == 202 { String::new() } else { body })
                            }
                            Err(e) => (0, e.to_string()),
                        };
                        out.push((status, t.elapsed(), text));
                        i += 1;
                    }
                    out
                })
            })
            .collect();
        let mut all = Vec::new();
        for t in tasks {
            all.extend(t.await.expect("client task"));
        }
        all
    });
    let wall = started.elapsed().as_secs_f64();
    let accepted = results.iter().filter(|(s, _, _)| *s == 202).count();
    let server_errors = results
        .iter()
        .filter(|(s, _, _)| *s >= 500 || *s == 0)
        .count();
    let mut by_status = std::collections::BTreeMap::new();
    let mut refusals = std::collections::BTreeMap::new();
    for (s, _, text) in &results {
        *by_status.entry(*s).or_insert(0usize) += 1;
        if *s != 202 {
            *refusals.entry(format!("{s} {text}")).or_insert(0usize) += 1;
        }
    }
    for (answer, n) in &refusals {
        eprintln!("{n} × {answer}");
    }
    let mut latencies: Vec<Duration> = results.iter().map(|(_, d, _)| *d).collect();
    latencies.sort();
    let pct = |p: usize| {
        let rank = (latencies.len() * p).div_ceil(100).max(1);
        latencies[rank - 1].as_secs_f64() * 1000.0
    };
    // Every 202 has its row.
    let rows = stack.d1("SELECT COUNT(*) AS n FROM jobs WHERE user_id LIKE 'load-%'")[0]["n"]
        .as_u64()
        .unwrap_or(0) as usize;
    let table = format!(
        "Producers under load: {clients} concurrent clients for {seconds} s against `wrangler dev` \
         (2-core machine; the consumers and the simulator run on the same cores).\n\n\
         | requests | accepted (202) | accepted / s | p50 ms | p99 ms | 5xx or no answer | answers by status | rows for the 202s |\n\
         |---:|---:|---:|---:|---:|---:|---|---|\n\
         | {} | {} | {:.0} | {:.0} | {:.0} | {} | {:?} | {} of {} |\n",
        results.len(),
        accepted,
        accepted as f64 / wall,
        pct(50),
        pct(99),
        server_errors,
        by_status,
        rows,
        accepted
    );
    drop(stack);
    rt.shutdown_timeout(Duration::from_secs(5));
    println!("{table}");
    crate::common::write("load", &table);
    if rows != accepted || server_errors > 0 {
        eprintln!("FAILED: {server_errors} 5xx / unanswered, {rows} rows for {accepted} accepted");
        std::process::exit(1);
    }
}
