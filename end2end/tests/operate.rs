//! Operate suite: what an operator runs the pipeline by. Per-path SLOs: the metrics row keeps
//! sync work and Message Batch work apart, so a batch job waiting its hour raises no sync
//! warning, a slow sync path does, and every warning names its path and its figure.
//!
//! The Prometheus scrape, parsed by an independent parser of the text format
//! (`prometheus-parse`): every line is read, the counters hold each ended job once, and the
//! money in them is the money the usage rollup holds.
//!
//! The Worker's log lines about jobs: one JSON object each, with the same fields.
//!
//! Time is moved in the data, not by sleeping: a batch job's creation is moved back an hour
//! (the stack's flush age is two, so the job stays accumulating), and the simulator is made
//! slower than the test profile's sync SLO (`SLO_SYNC_P95_S` = 2 s).

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use end2end::{run_suite_with, tests, StackConfig, TestStack};
use serde_json::{json, Value};

const ADMIN: &str = "operate-admin";
const WAIT: Duration = Duration::from_secs(120);
const HOUR_MS: i64 = 3_600_000;
/// The stack's flush age: batch jobs accumulate for two hours (or until 20 wait).
const FLUSH_AGE_S: &str = "7200";

fn main() -> ExitCode {
    run_suite_with(
        "operate",
        StackConfig::vars(&[("BATCH_FLUSH_AGE_S", FLUSH_AGE_S)]),
        tests![
            a_batch_job_waiting_an_hour_raises_no_sync_warning,
            a_slow_sync_path_warns_and_names_its_path,
            the_prometheus_scrape_parses_and_counts_every_ended_job_once,
            every_log_line_about_a_job_is_one_json_object_with_the_same_fields,
        ],
    )
}

/// Runs the cron and answers the metrics report it wrote.
async fn metrics_now(s: &Arc<TestStack>) -> Value {
    assert_eq!(s.cron().await, 200);
    let (status, report) = s.user(ADMIN).get("/api/metrics?minutes=10").await;
    assert_eq!(status, 200, "{report}");
    report
}

/// `(path, metric)` of each warning of the report, the models' standings left out.
fn warned(report: &Value) -> Vec<(String, String)> {
    report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["path"] != "models")
        .map(|w| {
            (
                w["path"].as_str().unwrap().to_string(),
                w["metric"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn warning<'a>(report: &'a Value, metric: &str) -> &'a Value {
    report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["metric"] == metric)
        .unwrap_or_else(|| panic!("no {metric} warning in {report}"))
}

async fn a_batch_job_waiting_an_hour_raises_no_sync_warning(s: Arc<TestStack>) {
    let user = s.user("operate-batch");
    let id = user.submit_job(&json!({"prompt": "A report for tomorrow", "priority": "bulk", "max_tokens": 40, "output_config": {"effort": "low"}}))
    .await;
    assert_eq!(user.job(&id).await["mode"], "batch");
    let back =
        |ms: i64| format!("UPDATE jobs SET created_at = created_at - {ms} WHERE id = '{id}'");
    s.d1_now(&back(HOUR_MS)).await;

    let report = metrics_now(&s).await;
    let batch = &report["latest"]["batch"];
    assert!(batch["accumulating"].as_u64().unwrap() >= 1, "{batch}");
    let waited = batch["oldest_accumulating_ms"].as_i64().unwrap();
    assert!(waited >= HOUR_MS, "the job has waited an hour: {batch}");
    assert_eq!(
        report["latest"]["sync"]["oldest_waiting_ms"],
        Value::Null,
        "no sync job waits: {}",
        report["latest"]["sync"]
    );
    assert_eq!(
        warned(&report),
        Vec::<(String, String)>::new(),
        "an hour is within the batch path's two-hour flush age, and no concern of the sync path"
    );
    let slo = &report["latest"]["slo"];
    assert_eq!(slo["batch_flush_age_ms"], 7_200_000, "{slo}");

    // Past the flush age and its grace, the batch path warns — and the sync path still not.
    s.d1_now(&back(2 * HOUR_MS)).await;
    let report = metrics_now(&s).await;
    assert_eq!(
        warned(&report),
        [("batch".to_string(), "oldest_accumulating_ms".to_string())]
    );
    let w = warning(&report, "oldest_accumulating_ms");
    assert!(w["value_ms"].as_i64().unwrap() >= 3 * HOUR_MS, "{w}");
    assert_eq!(w["threshold_ms"], 7_200_000 + 10_000, "flush age + grace");
    let message = w["message"].as_str().unwrap();
    assert!(message.starts_with("batch path: "), "{message}");
    assert!(
        message.contains("3.0 h"),
        "the number is in the sentence: {message}"
    );

    let (status, body) = user.cancel(&id).await;
    assert_eq!(status, 200, "{body}");
}

async fn a_slow_sync_path_warns_and_names_its_path(s: Arc<TestStack>) {
    // A fresh window: the rows before ended before this test's jobs.
    assert_eq!(s.cron().await, 200);
    s.sim.lock().knobs.latency_ms = 2_500;
    let user = s.user("operate-sync");
    let mut ids = Vec::new();
    for i in 0..3 {
        ids.push(
            user.submit_job(&json!({"prompt": format!("Slow answer {i}"), "priority": "high", "max_tokens": 30, "output_config": {"effort": "low"}}))
            .await,
        );
    }
    for id in &ids {
        user.job_reaches(id, "completed", WAIT).await;
    }
    s.sim.lock().knobs.latency_ms = 0;
    let report = metrics_now(&s).await;
    let sync = &report["latest"]["sync"];
    assert!(sync["completed"].as_u64().unwrap() >= 3, "{sync}");
    assert!(sync["run_ms"]["p95"].as_i64().unwrap() >= 2_500, "{sync}");
    assert!(warned(&report).contains(&("sync".into(), "p95_end_to_end_ms".into())));
    assert!(
        warned(&report).iter().all(|(path, _)| path == "sync"),
        "the batch path is fine: {:?}",
        warned(&report)
    );
    let w = warning(&report, "p95_end_to_end_ms");
    assert_eq!(w["path"], "sync");
    assert_eq!(
        w["threshold_ms"], 2_000,
        "the test profile's SLO_SYNC_P95_S"
    );
    assert!(w["value_ms"].as_i64().unwrap() >= 2_500, "{w}");
    let message = w["message"].as_str().unwrap();
    assert!(
        message.starts_with("sync path: p95 end-to-end latency is "),
        "{message}"
    );
    assert!(message.contains("(threshold 2.0 s)"), "{message}");
}

async fn the_prometheus_scrape_parses_and_counts_every_ended_job_once(s: Arc<TestStack>) {
    // Two runs: every job of the earlier tests has ended inside a window (the second run's
    // window overlaps the first's, which the counters must not count twice).
    for _ in 0..2 {
        assert_eq!(s.cron().await, 200);
    }
    let resp = s
        .user(ADMIN)
        .request(reqwest::Method::GET, "/api/metrics/prometheus")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let ctype = resp.headers()["content-type"].to_str().unwrap().to_string();
    assert!(ctype.starts_with("text/plain; version=0.0.4"), "{ctype}");
    let text = resp.text().await.unwrap();
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string())))
        .expect("the text format parses");
    // The parser skips what it cannot read: every data line must be in a sample.
    let data_lines = text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .count();
    let read: usize = scrape
        .samples
        .iter()
        .map(|x| match &x.value {
            prometheus_parse::Value::Histogram(buckets) => buckets.len(),
            _ => 1,
        })
        .sum();
    assert_eq!(read, data_lines, "every line was read:\n{text}");
    for family in [
        "claude_pipeline_jobs",
        "claude_pipeline_dead_letters",
        "claude_pipeline_jobs_ended_total",
        "claude_pipeline_job_latency_seconds",
        "claude_pipeline_tokens_total",
        "claude_pipeline_cost_usd_total",
        "claude_pipeline_budget_use_ratio",
        "claude_pipeline_oldest_pending_seconds",
    ] {
        assert!(
            scrape.docs.contains_key(family),
            "{family} has HELP:\n{text}"
        );
    }
    let value = |x: &prometheus_parse::Sample| match x.value {
        prometheus_parse::Value::Counter(v)
        | prometheus_parse::Value::Gauge(v)
        | prometheus_parse::Value::Untyped(v) => v,
        _ => f64::NAN,
    };
    let sum = |name: &str, keep: &dyn Fn(&prometheus_parse::Sample) -> bool| -> f64 {
        scrape
            .samples
            .iter()
            .filter(|x| x.metric == name && keep(x))
            .map(value)
            .sum()
    };
    // Jobs by status, lane and path agree with the stack's own counts.
    let rows = s
        .d1_now(
            "SELECT status, lane, mode, n FROM job_counts WHERE status != 'dead_open' AND n > 0",
        )
        .await;
    for r in &rows {
        let (status, lane, mode) = (
            r["status"].as_str().unwrap(),
            r["lane"].as_str().unwrap(),
            r["mode"].as_str().unwrap(),
        );
        let got = sum("claude_pipeline_jobs", &|x| {
            x.labels.get("status") == Some(status)
                && x.labels.get("lane") == Some(lane)
                && x.labels.get("path") == Some(mode)
        });
        assert_eq!(got, r["n"].as_f64().unwrap(), "{r}");
    }
    // Every job that ended is counted once, by path, model and outcome.
    let ended = s
        .d1_now("SELECT COUNT(*) AS n FROM jobs WHERE completed_at IS NOT NULL")
        .await[0]["n"]
        .as_f64()
        .unwrap();
    assert_eq!(sum("claude_pipeline_jobs_ended_total", &|_| true), ended);
    let slow = sum("claude_pipeline_jobs_ended_total", &|x| {
        x.labels.get("path") == Some("sync") && x.labels.get("outcome") == Some("completed")
    });
    assert!(slow >= 3.0, "the slow sync jobs: {slow}");
    // The money counted is the money billed, to the micro-dollar.
    let (_, spenders) = s.user(ADMIN).get("/api/usage/spenders").await;
    let micros = (sum("claude_pipeline_cost_usd_total", &|_| true) * 1e6).round() as u64;
    assert_eq!(micros, spenders["totals"]["cost_micros"].as_u64().unwrap());
    // The sync path's latency histogram: cumulative, its +Inf bucket its count.
    let hist = scrape
        .samples
        .iter()
        .find(|x| {
            x.metric == "claude_pipeline_job_latency_seconds"
                && x.labels.get("path") == Some("sync")
        })
        .expect("a sync latency histogram");
    let prometheus_parse::Value::Histogram(buckets) = &hist.value else {
        panic!("{hist:?}")
    };
    assert!(
        buckets.windows(2).all(|w| w[0].count <= w[1].count),
        "{buckets:?}"
    );
    let inf = buckets.last().unwrap();
    assert!(inf.less_than.is_infinite());
    assert!(inf.count >= 3.0, "{buckets:?}");
    let slow_bucket = buckets.iter().find(|b| b.less_than == 2.5).unwrap();
    assert!(
        slow_bucket.count < inf.count,
        "the slow jobs took over 2.5 s: {buckets:?}"
    );
}

async fn every_log_line_about_a_job_is_one_json_object_with_the_same_fields(s: Arc<TestStack>) {
    let log = s.runtime_log(20_000);
    let lines: Vec<Value> = log
        .lines()
        .filter(|l| l.contains("\"event\":\"job."))
        .map(|l| {
            let json = &l[l.find('{').unwrap_or(0)..];
            serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {l}"))
        })
        .collect();
    let fields = [
        "event",
        "job_id",
        "user_id",
        "kind",
        "lane",
        "mode",
        "model",
        "outcome",
        "attempt",
        "input_tokens",
        "output_tokens",
        "cache_write_tokens",
        "cache_read_tokens",
        "cost_micros",
        "ms",
    ];
    for l in &lines {
        for f in fields {
            assert!(l.get(f).is_some(), "{f} missing from {l}");
        }
    }
    // The slow sync test's three calls: completed, with their tokens, cost and duration.
    let slow: Vec<&Value> = lines
        .iter()
        .filter(|l| l["user_id"] == "operate-sync" && l["event"] == "job.attempt")
        .collect();
    assert_eq!(slow.len(), 3, "{slow:?}");
    for l in slow {
        assert_eq!(l["outcome"], "completed", "{l}");
        assert_eq!(
            (l["kind"].as_str(), l["lane"].as_str(), l["mode"].as_str()),
            (Some("prompt"), Some("high"), Some("sync"))
        );
        assert!(l["output_tokens"].as_u64().unwrap() > 0, "{l}");
        assert!(l["cost_micros"].as_u64().unwrap() > 0, "{l}");
        assert!(
            l["ms"].as_i64().unwrap() >= 2_500,
            "the call took the simulator's 2.5 s: {l}"
        );
        let job = s
            .user("operate-sync")
            .job(l["job_id"].as_str().unwrap())
            .await;
        assert_eq!(
            job["cost_micros"], l["cost_micros"],
            "the line's cost is the job's"
        );
    }
}
