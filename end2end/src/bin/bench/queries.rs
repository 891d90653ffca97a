//! `cargo xtask bench queries [--rows N[,M…]]`: the ops side's queries over a large `jobs` table,
//! at each size in one run.
//!
//! A fresh local stack (workerd + the local D1 on disk) gets generated job rows spread over 60
//! days and 1,001 users — one of them, `whale`, holding a tenth of all rows — with the status
//! mix of a busy pipeline (90% completed, 4% failed, 3% dead-lettered, the rest pending or
//! canceled). The rows go in through plain INSERTs, so migration 0012's triggers keep the
//! rollups as they do in production. At each size (default 1,000,000; `--rows
//! 1000000,5000000` grows the same table from one to the next) each endpoint is called 7 times
//! through HTTP and the median and worst wall times are reported (client side, so they include
//! the Worker and the local runtime's D1 round trips), with the D1 rows the request read (the
//! Worker's `x-d1-rows-read` header, `D1_STATS = "on"`). Results: a table on stdout and
//! `target/bench/queries.md`.

use std::time::{Duration, Instant};

use end2end::api::client;
use end2end::spawn_stack_with;

/// Rows per `wrangler d1 execute` (each is one INSERT … SELECT over a recursive CTE).
const CHUNK: u64 = 100_000;
const RUNS: usize = 7;

/// One measured query: its median and worst wall time, and the rows it read.
struct Measured {
    median_ms: f64,
    worst_ms: f64,
    rows_read: Option<u64>,
}

pub fn run(args: &[String]) {
    let sizes: Vec<u64> = args
        .iter()
        .position(|a| a == "--rows")
        .and_then(|i| args.get(i + 1))
        .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .filter(|v: &Vec<u64>| !v.is_empty())
        .unwrap_or_else(|| vec![1_000_000]);
    let rt = crate::common::runtime();
    let stack = spawn_stack_with("bench-queries", &rt, sim::Knobs::default(), Vec::new());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let from60 = pipeline::clock::day_of(now as i64 - 59 * pipeline::clock::DAY_MS);
    let cases: Vec<(&str, &str, String)> = vec![
        (
            "Dashboard: GET /api/metrics (60 min series)",
            "GET",
            "/api/metrics?minutes=60".into(),
        ),
        (
            "Usage: whale, 30 days (a tenth of all jobs)",
            "GET",
            "/api/usage?user=whale".into(),
        ),
        (
            "Usage: an ordinary user, 30 days",
            "GET",
            "/api/usage?user=user7".into(),
        ),
        (
            "Usage CSV: whale, 60 days",
            "GET",
            format!("/api/usage.csv?user=whale&from={from60}"),
        ),
        (
            "DLQ: first page (dead-lettered)",
            "GET",
            "/api/dlq?limit=50".into(),
        ),
        (
            "DLQ: failed + dead, class filter",
            "GET",
            "/api/dlq?status=all&error_class=overloaded&limit=50".into(),
        ),
        (
            "DLQ: one user's",
            "GET",
            "/api/dlq?status=all&user=user7&limit=50".into(),
        ),
        (
            "Jobs list: whale, first page",
            "GET",
            "/jobs?limit=50".into(),
        ),
        (
            "Producer: POST /jobs (caps, limits and spend checks)",
            "POST",
            "/jobs".into(),
        ),
        (
            "Cron run (flush, poll, recovery, reconcile, metrics row, DLQ alert, retention)",
            "CRON",
            String::new(),
        ),
    ];
    let base = stack.base_url.clone();
    let mut loaded = 0u64;
    let mut load_s = Vec::new();
    let mut results: Vec<(u64, Vec<Measured>)> = Vec::new();
    for &size in &sizes {
        let t0 = Instant::now();
        // Each size's new rows cover the same 60 days (ids continue where the last size ended).
        let (phase_start, phase_rows) = (loaded, size.saturating_sub(loaded));
        while loaded < size {
            let end = (loaded + CHUNK).min(size);
            stack.d1(&generate(loaded, end, phase_start, phase_rows, now));
            eprintln!("==> {end} rows");
            loaded = end;
        }
        let count = stack.d1("SELECT COUNT(*) AS n FROM jobs")[0]["n"]
            .as_u64()
            .unwrap_or(0);
        load_s.push((count, t0.elapsed().as_secs_f64()));
        eprintln!("==> {count} rows in {:.0} s", t0.elapsed().as_secs_f64());
        // Two cron runs: the metrics series has a baseline and a row.
        for _ in 0..2 {
            stack.trigger_cron();
        }
        let mut measured = Vec::new();
        for (name, method, path) in &cases {
            let mut times = Vec::new();
            let mut reads = Vec::new();
            for _ in 0..RUNS {
                let t = Instant::now();
                let (status, read) = match *method {
                    "CRON" => (stack.trigger_cron(), None),
                    _ => rt.block_on(call(&base, method, path)),
                };
                times.push(t.elapsed());
                reads.extend(read);
                assert!((200..300).contains(&status), "{name}: answered {status}");
            }
            times.sort();
            reads.sort();
            let ms = |d: Duration| d.as_secs_f64() * 1000.0;
            let m = Measured {
                median_ms: ms(times[RUNS / 2]),
                worst_ms: ms(*times.last().unwrap()),
                rows_read: reads.get(reads.len() / 2).copied(),
            };
            eprintln!(
                "{count} rows, {name}: median {:.1} ms, {:?} rows read",
                m.median_ms, m.rows_read
            );
            measured.push(m);
        }
        results.push((count, measured));
    }
    drop(stack);
    rt.shutdown_timeout(Duration::from_secs(5));
    let table = render(&cases, &results, &load_s);
    println!("{table}");
    crate::common::write("queries", &table);
}

/// One request as `whale`: its status and the `x-d1-rows-read` it answered with.
async fn call(base: &str, method: &str, path: &str) -> (u16, Option<u64>) {
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
    let read = resp
        .headers()
        .get("x-d1-rows-read")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok());
    let _ = resp.bytes().await;
    (status, read)
}

/// The table: one row per query, a median / worst / rows-read triple per size, and the growth
/// of the median from the first size to the last.
fn render(
    cases: &[(&str, &str, String)],
    results: &[(u64, Vec<Measured>)],
    load_s: &[(u64, f64)],
) -> String {
    let mut t = format!(
        "Ops queries in local D1 (wrangler dev, 2-core machine); {RUNS} calls each, wall time \
         through HTTP; rows read as D1 reported them to the Worker (`x-d1-rows-read`).\n\n| query |"
    );
    for (count, _) in results {
        t.push_str(&format!(
            " {count} rows: median ms | worst ms | rows read |"
        ));
    }
    if results.len() > 1 {
        t.push_str(" median growth |");
    }
    t.push_str("\n|---|");
    for _ in results {
        t.push_str("---:|---:|---:|");
    }
    if results.len() > 1 {
        t.push_str("---:|");
    }
    t.push('\n');
    for (i, (name, _, _)) in cases.iter().enumerate() {
        t.push_str(&format!("| {name} |"));
        for (_, m) in results {
            let m = &m[i];
            let read = m.rows_read.map_or("—".to_string(), |r| r.to_string());
            t.push_str(&format!(
                " {:.1} | {:.1} | {read} |",
                m.median_ms, m.worst_ms
            ));
        }
        if let (Some((_, first)), Some((_, last))) = (results.first(), results.last()) {
            if results.len() > 1 {
                t.push_str(&format!(
                    " {:.2}× |",
                    last[i].median_ms / first[i].median_ms.max(0.1)
                ));
            }
        }
        t.push('\n');
    }
    t.push('\n');
    for (count, s) in load_s {
        t.push_str(&format!("Loading up to {count} rows took {s:.0} s. "));
    }
    t.push('\n');
    t
}

/// Rows `start..end` of a phase of `total` rows starting at `first`, created over the 60 days
/// before `now`.
fn generate(start: u64, end: u64, first: u64, total: u64, now: u64) -> String {
    let span = 60 * 86_400_000u64;
    let step = (span / total.max(1)).max(1);
    format!(
        "WITH RECURSIVE n(i) AS (SELECT {start} UNION ALL SELECT i + 1 FROM n WHERE i + 1 < {end}) \
         INSERT INTO jobs (id, user_id, kind, status, lane, mode, model, input_text, attempts, \
         input_tokens, output_tokens, cache_write_tokens, cache_read_tokens, cost_micros, error, \
         error_class, created_at, started_at, completed_at, updated_at) \
         SELECT printf('9e000000-0000-4000-8000-%012x', i), \
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
           {now} - ({total} + {first} - i) * {step}, \
           {now} - ({total} + {first} - i) * {step} + 200, \
           CASE WHEN i % 100 < 97 OR i % 100 = 99 THEN {now} - ({total} + {first} - i) * {step} + 1200 + i % 3000 END, \
           {now} - ({total} + {first} - i) * {step} + 1200 \
         FROM n"
    )
}
