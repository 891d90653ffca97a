//! Operate suite: what an operator runs the pipeline by. Per-path SLOs: the metrics row keeps
//! sync work and Message Batch work apart, so a batch job waiting its hour raises no sync
//! warning, a slow sync path does, and every warning names its path and its figure.
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
