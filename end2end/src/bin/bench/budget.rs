//! The rate-limit benchmark of the token budget:
//!
//! Two passes on fresh local stacks, identical but for `BUDGET_ENFORCE` (on, then off): the
//! simulator allows 60 requests, 40,000 input tokens and 8,000 output tokens per minute and
//! answers at once; a mixed workload (high-lane prompt jobs of varied length, feedback
//! analyses, bulk-lane sync prompts) is submitted at once and run to the end. The simulator's
//! counters are sampled every 2 s; each limit's use is measured over the stretch where a backlog
//! keeps the pipeline saturated (from 60 s in — after the initial full bucket — until 95% of the
//! jobs are done), as accepted tokens (or requests) per minute over the limit. The share of
//! calls answered 429 is over the whole pass.
//!
//! Usage: `bench budget [--jobs N]` (default 500). Results: a table on stdout and
//! `target/bench/budget.md`.

use std::time::{Duration, Instant};

use end2end::api::{client, get_json, send_json};
use end2end::{spawn_stack_with, TestStack};
use pipeline::status::Status;
use serde_json::{json, Value};

use crate::common::{arg, runtime, write};

const RPM: u32 = 60;
const ITPM: u32 = 40_000;
const OTPM: u32 = 8_000;

pub fn run(args: &[String]) {
    let jobs = arg(args, "--jobs", 500) as usize;
    let rt = runtime();
    let mut rows = Vec::new();
    for enforce in [true, false] {
        let label = if enforce { "on" } else { "off" };
        eprintln!("==> pass with the budget {label}: starting a fresh stack");
        let stack = std::sync::Arc::new(limited_stack(
            &format!("bench-budget-{label}"),
            &rt,
            [RPM, ITPM, OTPM],
            &[("BUDGET_ENFORCE", if enforce { "on" } else { "off" })],
        ));
        let row = rt.block_on(pass(&stack, jobs, enforce));
        eprintln!("==> pass {label}: {row:?}");
        rows.push(row);
        drop(stack);
    }
    rt.shutdown_timeout(Duration::from_secs(5));
    let table = table(&rows, jobs);
    println!("{table}");
    write("budget", &table);
}

/// A fresh stack whose simulator allows `[rpm, itpm, otpm]` and answers at once, with the
/// budget configured to the same limits (and `extra` vars).
pub fn limited_stack(
    name: &str,
    rt: &tokio::runtime::Runtime,
    [rpm, itpm, otpm]: [u32; 3],
    extra: &[(&str, &str)],
) -> TestStack {
    let knobs = sim::Knobs {
        rpm,
        itpm,
        otpm,
        latency_ms: 0,
        ..sim::Knobs::default()
    };
    let vars = [
        ("BUDGET_RPM", rpm.to_string()),
        ("BUDGET_ITPM", itpm.to_string()),
        ("BUDGET_OTPM", otpm.to_string()),
    ]
    .into_iter()
    .chain(extra.iter().map(|(k, v)| (*k, v.to_string())))
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    spawn_stack_with(name, rt, knobs, vars)
}

/// What one pass measured.
#[derive(Debug)]
pub struct Row {
    enforce: bool,
    seconds: f64,
    completed: usize,
    other_terminal: usize,
    /// Use of each limit over the saturated stretch: requests, input tokens, output tokens.
    use_rpm: f64,
    use_itpm: f64,
    use_otpm: f64,
    calls: u64,
    calls_429: u64,
    refused: u64,
}

/// One sample of the simulator's counters.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub at: f64,
    ok: u64,
    input: u64,
    output: u64,
    pub done: usize,
}

pub fn sample(s: &TestStack, at: f64, done: usize) -> Sample {
    let inner = s.sim.lock();
    let b = &inner.stats.standard;
    Sample {
        at,
        ok: b.messages,
        input: b.input_tokens + b.cache_creation_input_tokens,
        output: b.output_tokens,
        done,
    }
}

/// Each limit's use (requests, input tokens, output tokens per minute over `limits`) over the
/// saturated stretch of a run: from `from_s` in (after the first full bucket) until 95% of the
/// `n` jobs counted in `done` were done. A run too short to outlast `from_s` is measured from
/// the start.
pub fn limits_use(samples: &[Sample], n: usize, from_s: f64, limits: [u32; 3]) -> [f64; 3] {
    let to = samples
        .iter()
        .find(|x| x.done * 100 >= n * 95)
        .copied()
        .unwrap_or(*samples.last().unwrap());
    let from = samples
        .iter()
        .find(|x| x.at >= from_s && x.at < to.at)
        .copied()
        .unwrap_or(samples[0]);
    let minutes = ((to.at - from.at) / 60.0).max(1e-9);
    let rate = |a: u64, b: u64, limit: u32| b.saturating_sub(a) as f64 / minutes / limit as f64;
    [
        rate(from.ok, to.ok, limits[0]),
        rate(from.input, to.input, limits[1]),
        rate(from.output, to.output, limits[2]),
    ]
}

/// The job mix: by index, deterministic.
fn job(i: usize) -> (&'static str, Value) {
    let words = "the quarterly report shows steady growth in every region and a few risks ";
    match i % 10 {
        // Feedback analyses (short input, a tight max_tokens).
        0 | 1 => (
            "/feedback",
            json!({"source": "bench", "mode": "sync",
                   "text": format!("Item {i}: the export button is slow and sometimes fails.")}),
        ),
        // Bulk-lane prompts, in sync mode so that they draw on the same limits.
        2 => (
            "/jobs",
            json!({"prompt": format!("{i}: {}", words.repeat(20)), "priority": "bulk",
                   "mode": "sync", "max_tokens": 100, "output_config": {"effort": "low"}}),
        ),
        // High-lane prompts of varied length (about 250 to 1,600 input tokens on the 5.x
        // tokenizer). Low effort: a tight max_tokens leaves no room for the thinking that
        // Sonnet 5.5 does by default at higher efforts.
        n => (
            "/jobs",
            json!({"prompt": format!("{i}: {}", words.repeat(10 + n * 7)), "max_tokens": 100, "output_config": {"effort": "low"}}),
        ),
    }
}

async fn pass(s: &std::sync::Arc<TestStack>, n: usize, enforce: bool) -> Row {
    let user = "bench";
    let started = Instant::now();
    let mut submitted = 0;
    for i in 0..n {
        let (path, body) = job(i);
        let (status, ack) = send_json(
            client()
                .post(s.url(path))
                .header("x-user-id", user)
                .header("content-type", "application/json")
                .body(body.to_string()),
        )
        .await;
        assert_eq!(status, 202, "{ack}");
        assert!(ack["jobId"].is_string() || ack["id"].is_string(), "{ack}");
        submitted += 1;
    }
    assert_eq!(submitted, n);
    let mut samples = vec![sample(s, 0.0, 0)];
    let mut terminal;
    let deadline = Duration::from_secs(60 * 60);
    loop {
        tokio::time::sleep(Duration::from_secs(2)).await;
        terminal = count_terminal(s, user).await;
        let at = started.elapsed().as_secs_f64();
        samples.push(sample(s, at, terminal.0));
        eprintln!(
            "    {at:>6.0} s: {} completed, {} otherwise ended, of {n}",
            terminal.0, terminal.1
        );
        if terminal.0 + terminal.1 >= n || started.elapsed() > deadline {
            break;
        }
        if started.elapsed().as_secs() % 60 < 2 {
            // The dev tooling runs the cron every minute (the reconciler, for lost messages).
            let _ = s.trigger_cron();
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let [use_rpm, use_itpm, use_otpm] = limits_use(&samples, n, 60.0, [RPM, ITPM, OTPM]);
    let stats = s.sim.lock().stats.clone();
    let calls_of = |k: &str| stats.calls.get(k).copied().unwrap_or(0);
    let calls: u64 = stats
        .calls
        .iter()
        .filter(|(k, _)| k.starts_with("messages "))
        .map(|(_, v)| *v)
        .sum();
    let (_, budget) = get_json(&s.url("/api/budget")).await;
    Row {
        enforce,
        seconds,
        completed: terminal.0,
        other_terminal: terminal.1,
        use_rpm,
        use_itpm,
        use_otpm,
        calls,
        calls_429: calls_of("messages 429"),
        refused: budget["refused"].as_u64().unwrap_or(0),
    }
}

/// (completed, otherwise terminal) among the user's jobs of every kind, from the jobs list (a
/// few pages, not one request per job, so that watching does not load the Worker).
async fn count_terminal(s: &std::sync::Arc<TestStack>, user: &str) -> (usize, usize) {
    let statuses: Vec<String> = s
        .user(user)
        .all_jobs()
        .await
        .iter()
        .map(|j| j["status"].as_str().unwrap_or("").to_string())
        .collect();
    let done = statuses.iter().filter(|s| *s == "completed").count();
    let other = statuses
        .iter()
        .filter_map(|s| Status::parse(s))
        .filter(|s| s.is_terminal() && *s != Status::Completed)
        .count();
    (done, other)
}

fn table(rows: &[Row], jobs: usize) -> String {
    let mut t = format!(
        "Rate-limit benchmark: {jobs} mixed jobs, simulator at {RPM} RPM / {ITPM} ITPM / {OTPM} OTPM, \
         0-latency answers.\n\n\
         | budget | wall time | completed | other end | requests/min use | input tokens/min use | output tokens/min use | binding limit use | calls | 429 share | reservations refused |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n"
    );
    for r in rows {
        let binding = r.use_rpm.max(r.use_itpm).max(r.use_otpm);
        t.push_str(&format!(
            "| {} | {:.0} s | {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {} | {:.2}% | {} |\n",
            if r.enforce { "on" } else { "off" },
            r.seconds,
            r.completed,
            r.other_terminal,
            r.use_rpm,
            r.use_itpm,
            r.use_otpm,
            binding,
            r.calls,
            if r.calls == 0 {
                0.0
            } else {
                100.0 * r.calls_429 as f64 / r.calls as f64
            },
            r.refused
        ));
    }
    t
}
