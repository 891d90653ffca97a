//! `cargo xtask bench queries [--rows N]`: the ops side's queries over a large `jobs` table.
//!
//! A fresh local stack (workerd + the local D1 on disk) gets N generated job rows (default
//! 1,000,000) spread over 60 days and 1,001 users — one of them, `whale`, holding a tenth of all
//! rows — with the status mix of a busy pipeline (90% completed, 4% failed, 3% dead-lettered, the
//! rest pending or canceled). Then each endpoint is called 7 times through HTTP and the median
//! and worst wall times are reported (client side, so they include the Worker and the local
//! runtime's D1 round trips). Results: a table on stdout and `target/bench/queries.md`.

use std::time::{Duration, Instant};

use end2end::api::client;
use end2end::spawn_stack_with;

/// Rows per `wrangler d1 execute` (each is one INSERT … SELECT over a recursive CTE).
const CHUNK: u64 = 100_000;
const RUNS: usize = 7;

pub fn run(args: &[String]) {
    let rows = crate::arg(args, "--rows", 1_000_000);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let stack = spawn_stack_with("bench-queries", &rt, sim::Knobs::default(), Vec::new());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let t0 = Instant::now();
    let mut start = 0;
    while start < rows {
        let end = (start + CHUNK).min(rows);
        stack.d1(&generate(start, end, rows, now));
        eprintln!("==> {end} rows");
        start = end;
    }
    let load_s = t0.elapsed().as_secs_f64();
    let count = stack.d1("SELECT COUNT(*) AS n FROM jobs")[0]["n"]
        .as_u64()
        .unwrap_or(0);
    eprintln!("==> {count} rows in {load_s:.0} s");
    // Two cron runs: the metrics series has a baseline and a row.
    for _ in 0..2 {
        stack.trigger_cron();
    }
    let base = stack.base_url.clone();
    let cases: Vec<(&str, &str, &str)> = vec![
        (
            "Dashboard: GET /api/metrics (60 min series)",
            "GET",
            "/api/metrics?minutes=60",
        ),
        (
            "Usage: whale, 30 days (≈ 50,000 jobs)",
            "GET",
            "/api/usage?user=whale",
        ),
        (
            "Usage: an ordinary user, 30 days",
            "GET",
            "/api/usage?user=user7",
        ),
        (
            "Usage CSV: whale, 60 days",
            "GET",
            "/api/usage.csv?user=whale&from=FROM60",
        ),
        (
            "DLQ: first page (dead-lettered)",
            "GET",
            "/api/dlq?limit=50",
        ),
        (
            "DLQ: failed + dead, class filter",
            "GET",
            "/api/dlq?status=all&error_class=overloaded&limit=50",
        ),
        (
            "DLQ: one user's",
            "GET",
            "/api/dlq?status=all&user=user7&limit=50",
        ),
        ("Jobs list: whale, first page", "GET", "/jobs?limit=50"),
        (
            "Producer: POST /jobs (with the daily-cap check)",
            "POST",
            "/jobs",
        ),
        ("Cron run (metrics row, DLQ alert, reconcile)", "CRON", ""),
    ];
    let from60 = pipeline::clock::day_of(now as i64 - 59 * pipeline::clock::DAY_MS);
    let mut table = String::new();
    table.push_str(&format!(
        "Ops queries over {count} job rows in local D1 (wrangler dev, 2-core machine); \
         {RUNS} calls each, wall time through HTTP.\n\n\
         | query | median ms | worst ms |\n|---|---:|---:|\n"
    ));
    for (name, method, path) in cases {
        let path = path.replace("FROM60", &from60);
        let mut times = Vec::new();
        for _ in 0..RUNS {
            let t = Instant::now();
            let status = match method {
                "CRON" => stack.trigger_cron(),
                _ => rt.block_on(async {
                    let rb = if method == "GET" {
                        client().get(format!("{base}{path}"))
                    } else {
                        client()
                            .post(format!("{base}{path}"))
                            .header("content-type", "application/json")
                            .body(r#"{"prompt":"bench","priority":"bulk"}"#)
                    };
                    let resp = rb
                        .header("x-user-id", "whale")
                        .send()
                        .await
                        .expect("request");
                    let status = resp.status().as_u16();
                    let _ = resp.bytes().await;
                    status
                }),
            };
            times.push(t.elapsed());
            assert!((200..300).contains(&status), "{name}: answered {status}");
        }
        times.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        eprintln!("{name}: median {:.0} ms", ms(times[RUNS / 2]));
        table.push_str(&format!(
            "| {name} | {:.0} | {:.0} |\n",
            ms(times[RUNS / 2]),
            ms(*times.last().unwrap())
        ));
    }
    table.push_str(&format!("\nLoading the rows took {load_s:.0} s.\n"));
    drop(stack);
    rt.shutdown_timeout(Duration::from_secs(5));
    println!("{table}");
    crate::write("queries", &table);
}

/// Rows `start..end` of `total`, created over the 60 days before `now`.
fn generate(start: u64, end: u64, total: u64, now: u64) -> String {
    let span = 60 * 86_400_000u64;
    let step = (span / total.max(1)).max(1);
    format!(
        "WITH RECURSIVE n(i) AS (SELECT {start} UNION ALL SELECT i + 1 FROM n WHERE i + 1 < {end}) \
         INSERT INTO jobs (id, user_id, kind, status, lane, mode, model, input_text, attempts, \
         input_tokens, output_tokens, cache_write_tokens, cache_read_tokens, cost_micros, error, \
         error_class, created_at, started_at, completed_at, updated_at) \
         SELECT printf('gen%013d', i), \
           CASE WHEN i % 10 = 0 THEN 'whale' ELSE 'user' || (i % 1000) END, \
           CASE i % 3 WHEN 0 THEN 'feedback' WHEN 1 THEN 'prompt' ELSE 'pdf' END, \
           CASE WHEN i % 100 < 90 THEN 'completed' WHEN i % 100 < 94 THEN 'failed' \
                WHEN i % 100 < 97 THEN 'dead_lettered' WHEN i % 100 = 97 THEN 'queued' \
                WHEN i % 100 = 98 THEN 'submitted' ELSE 'canceled' END, \
           CASE WHEN i % 2 = 0 THEN 'high' ELSE 'bulk' END, \
           CASE WHEN i % 2 = 0 THEN 'sync' ELSE 'batch' END, \
           CASE WHEN i % 5 = 0 THEN 'claude-haiku-5-5' ELSE 'claude-sonnet-5-5' END, \
           'generated job ' || i, 1 + i % 3, 500 + i % 1500, 50 + i % 400, 0, i % 7 * 100, \
           100 + i % 5000, \
           CASE WHEN i % 100 BETWEEN 90 AND 96 THEN 'Anthropic API 529: Overloaded' END, \
           CASE WHEN i % 100 BETWEEN 90 AND 96 THEN 'overloaded' END, \
           {now} - ({total} - i) * {step}, \
           {now} - ({total} - i) * {step} + 200, \
           CASE WHEN i % 100 < 97 OR i % 100 = 99 THEN {now} - ({total} - i) * {step} + 1200 + i % 3000 END, \
           {now} - ({total} - i) * {step} + 1200 \
         FROM n"
    )
}
