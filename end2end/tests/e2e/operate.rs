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
//! Pause and resume: a paused lane, model or user holds its work — queued, no retry spent,
//! nothing billed, on the sync path and out of Message Batches — and resuming drains it; the
//! DLQ alert pauses the lane of its dead letters.
//!
//! Time is moved in the data, not by sleeping: a batch job's creation is moved back an hour
//! (the stack's flush age is two, so the job stays accumulating), and the simulator is made
//! slower than the test profile's sync SLO (`SLO_SYNC_P95_S` = 2 s).

use std::sync::Arc;
use std::time::Duration;

use end2end::{tests, StackConfig, Suite, TestStack};
use serde_json::{json, Value};

const ADMIN: &str = "operate-admin";
const WAIT: Duration = Duration::from_secs(120);
const HOUR_MS: i64 = 3_600_000;
/// The stack's flush age: batch jobs accumulate for two hours (or until 20 wait).
const FLUSH_AGE_S: &str = "7200";

pub fn suite() -> Suite {
    end2end::suite_with(
        "operate",
        StackConfig::vars(&[
            ("BATCH_FLUSH_AGE_S", FLUSH_AGE_S),
            // Any dead letter raises the DLQ alert, and the alert pauses its lane.
            ("DLQ_ALERT_THRESHOLD", "0"),
            ("DLQ_ALERT_PAUSES", "on"),
        ]),
        tests![
            a_batch_job_waiting_an_hour_raises_no_sync_warning,
            a_slow_sync_path_warns_and_names_its_path,
            the_prometheus_scrape_parses_and_counts_every_ended_job_once,
            the_headroom_is_each_entry_points_highest_use_of_each_limit,
            every_log_line_about_a_job_is_one_json_object_with_the_same_fields,
            a_paused_lane_holds_its_work_without_a_retry_and_resuming_drains_it,
            a_paused_user_or_model_holds_only_its_own_work_on_both_paths,
            bad_pauses_are_400s_and_an_unknown_one_is_404,
            the_dashboard_pauses_and_resumes_a_lane_and_the_job_page_shows_it,
            the_dlq_alert_pauses_the_lane_of_its_dead_letters,
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

/// The highest `figure` of the stack's `use: <entry>` lines (every invocation logs one: the
/// stack runs with `D1_STATS = "on"`).
fn logged_max(s: &TestStack, entry: &str, figure: &str) -> Option<u64> {
    let needle = format!("use: {entry}");
    s.log_lines(&needle)
        .iter()
        .filter_map(|l| l.split_once(&needle))
        .filter_map(|(_, rest)| rest.split_once(": {").map(|(_, j)| format!("{{{j}")))
        .filter_map(|j| serde_json::from_str::<Value>(&j).ok())
        .filter_map(|v| v[figure].as_u64())
        .max()
}

/// The headroom row of `entry` and `figure` in a metrics report.
fn headroom_row<'a>(report: &'a Value, entry: &str, figure: &str) -> Option<&'a Value> {
    report["headroom"]
        .as_array()?
        .iter()
        .find(|p| p["entry"] == entry && p["figure"] == figure)
}

/// The headroom (`GET /api/metrics`, the scrape) holds each entry point's highest use of each
/// limit as the stack's own per-invocation lines count it, against the Paid plan's limits.
async fn the_headroom_is_each_entry_points_highest_use_of_each_limit(s: Arc<TestStack>) {
    assert_eq!(s.cron().await, 200);
    let s2 = s.clone();
    let (cron, fetch) = end2end::eventually("the headroom matches the logs", WAIT, move || {
        let s = s2.clone();
        async move {
            let (status, report) = s.user(ADMIN).get("/api/metrics?minutes=10").await;
            assert_eq!(status, 200, "{report}");
            let cron = headroom_row(&report, "cron", "d1_queries")?.clone();
            let fetch = headroom_row(&report, "fetch", "subrequests")?.clone();
            let same =
                |row: &Value, entry, figure| row["peak"].as_u64() == logged_max(&s, entry, figure);
            (same(&cron, "cron", "d1_queries") && same(&fetch, "fetch", "subrequests"))
                .then_some((cron, fetch))
        }
    })
    .await;
    // Paid plan: 1,000 D1 queries and 10,000 subrequests per invocation.
    assert_eq!(cron["limit"], 1_000, "{cron}");
    assert_eq!(fetch["limit"], 10_000, "{fetch}");
    let peak = cron["peak"].as_u64().unwrap();
    assert!(peak > 0, "a cron run reads D1: {cron}");
    let pct = cron["share_pct"].as_f64().unwrap();
    assert!((pct - peak as f64 / 10.0).abs() < 0.01, "{cron}");
    // The scrape shows the same peak as a ratio, and the limit.
    let text = s
        .user(ADMIN)
        .request(reqwest::Method::GET, "/api/metrics/prometheus")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string())))
        .expect("the text format parses");
    let sample = |name: &str| {
        scrape
            .samples
            .iter()
            .find(|x| {
                x.metric == name
                    && x.labels.get("entry") == Some("cron")
                    && x.labels.get("figure") == Some("d1_queries")
            })
            .map(|x| match x.value {
                prometheus_parse::Value::Gauge(v) => v,
                ref other => panic!("{name} is not a gauge: {other:?}"),
            })
    };
    assert_eq!(sample("claude_pipeline_envelope_limit"), Some(1_000.0));
    let ratio = sample("claude_pipeline_envelope_peak_ratio").expect("{text}");
    assert!(ratio >= peak as f64 / 1_000.0, "{ratio} against {cron}");
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

/// Waits until the job is held back by a pause (queued, `held_at` set).
async fn held(s: &Arc<TestStack>, user: &str, id: &str) -> Value {
    end2end::eventually(&format!("{id} is held"), WAIT, || async {
        let job = s.user(user).job(id).await;
        job["held_at"].is_i64().then_some(job)
    })
    .await
}

async fn pause(s: &Arc<TestStack>, body: Value) -> Value {
    let (status, p) = s.user(ADMIN).put_json("/api/pauses", &body).await;
    assert_eq!(status, 200, "{p}");
    p
}

async fn resume(s: &Arc<TestStack>, scope: &str, value: &str) -> Value {
    let (status, r) = s
        .user(ADMIN)
        .delete(&format!("/api/pauses/{scope}/{value}"))
        .await;
    assert_eq!(status, 200, "{r}");
    r
}

async fn a_paused_lane_holds_its_work_without_a_retry_and_resuming_drains_it(s: Arc<TestStack>) {
    let p = pause(
        &s,
        json!({"scope": "lane", "value": "high", "reason": "maintenance"}),
    )
    .await;
    assert_eq!(
        (p["scope"].as_str(), p["value"].as_str()),
        (Some("lane"), Some("high"))
    );
    assert_eq!(p["paused_by"], ADMIN);
    assert_eq!(p["reason"], "maintenance");
    let (_, list) = s.user(ADMIN).get("/api/pauses").await;
    assert_eq!(list["items"].as_array().unwrap().len(), 1, "{list}");

    let user = "operate-pause";
    let mut ids = Vec::new();
    for i in 0..2 {
        ids.push(
            s.user(user)
                .submit_job(&json!({"prompt": format!("Wait for me {i}"), "priority": "high", "max_tokens": 20, "output_config": {"effort": "low"}}))
                .await,
        );
    }
    for id in &ids {
        let job = held(&s, user, id).await;
        assert_eq!(job["status"], "queued", "{job}");
        assert_eq!(job["attempts"], 0, "no retry spent: {job}");
        assert_eq!(s.billed(id), 0);
    }
    // The cron does not take a held job back as stuck, nor run it.
    assert_eq!(s.cron().await, 200);
    assert_eq!(s.user(user).job(&ids[0]).await["status"], "queued");
    let (_, text) = s.user(ADMIN).get_text("/api/metrics/prometheus").await;
    assert!(
        text.contains("claude_pipeline_paused{scope=\"lane\",value=\"high\"} 1"),
        "{text}"
    );

    let r = resume(&s, "lane", "high").await;
    assert_eq!(r["resumed"]["value"], "high");
    assert_eq!(r["released"], 2, "{r}");
    for id in &ids {
        let job = s.user(user).job_reaches(id, "completed", WAIT).await;
        assert_eq!(job["attempts"], 1, "one call, as if never paused: {job}");
        assert_eq!(job["held_at"], Value::Null);
    }
    let (_, list) = s.user(ADMIN).get("/api/pauses").await;
    assert_eq!(list["items"], json!([]));
}

async fn a_paused_user_or_model_holds_only_its_own_work_on_both_paths(s: Arc<TestStack>) {
    let (flood, other) = ("operate-flood", "operate-other");
    // A batch job of the user accumulates before the pause; the pause takes it back from the
    // accumulation, so no Message Batch sends it.
    let early = s.user(flood).submit_job(&json!({"prompt": "Early batch work", "priority": "bulk", "max_tokens": 20, "output_config": {"effort": "low"}})).await;
    end2end::eventually("the batch job accumulates", WAIT, || async {
        let rows = s
            .d1_now(&format!(
                "SELECT accumulated_at FROM jobs WHERE id = '{early}'"
            ))
            .await;
        rows[0]["accumulated_at"].is_i64().then_some(())
    })
    .await;
    pause(&s, json!({"scope": "user", "value": flood})).await;
    pause(
        &s,
        json!({"scope": "model", "value": "claude-haiku-5-5", "reason": "melting down"}),
    )
    .await;
    held(&s, flood, &early).await;
    let late = s.user(flood).submit_job(&json!({"prompt": "Flood", "priority": "high", "max_tokens": 20, "output_config": {"effort": "low"}})).await;
    let haiku = s
        .user(other)
        .submit_job(
            &json!({"prompt": "Small model", "priority": "high", "model": "claude-haiku-5-5"}),
        )
        .await;
    let free = s.user(other).submit_job(&json!({"prompt": "Not paused", "priority": "high", "max_tokens": 20, "output_config": {"effort": "low"}})).await;
    s.user(other).job_reaches(&free, "completed", WAIT).await;
    held(&s, flood, &late).await;
    held(&s, other, &haiku).await;
    let (_, flushed) = s.user(ADMIN).post("/api/batches/flush").await;
    assert_eq!(
        s.user(flood).job(&early).await["status"],
        "queued",
        "not flushed: {flushed}"
    );
    for id in [&early, &late, &haiku] {
        assert_eq!(s.billed(id), 0);
    }

    resume(&s, "model", "claude-haiku-5-5").await;
    s.user(other).job_reaches(&haiku, "completed", WAIT).await;
    assert_eq!(
        s.user(flood).job(&late).await["status"],
        "queued",
        "the user is still paused"
    );
    resume(&s, "user", flood).await;
    s.user(flood).job_reaches(&late, "completed", WAIT).await;
    // The batch job accumulates again and goes in the next Message Batch.
    end2end::eventually("the early batch job completes", WAIT, || async {
        let _ = s.user(ADMIN).post("/api/batches/flush").await;
        let _ = s.user(ADMIN).post("/api/batches/poll").await;
        let job = s.user(flood).job(&early).await;
        (job["status"] == "completed").then_some(job)
    })
    .await;
}

async fn bad_pauses_are_400s_and_an_unknown_one_is_404(s: Arc<TestStack>) {
    for (body, field) in [
        (json!({"scope": "queue", "value": "high"}), "scope"),
        (json!({"scope": "lane", "value": "urgent"}), "value"),
        (json!({"scope": "model", "value": "gpt-4o"}), "value"),
        (json!({"scope": "user", "value": "has space"}), "value"),
        (
            json!({"scope": "user", "value": "ann", "until": 5}),
            "until",
        ),
    ] {
        let (status, e) = s.user(ADMIN).put_json("/api/pauses", &body).await;
        assert_eq!(status, 400, "{body}: {e}");
        assert_eq!(e["field"], field, "{body}: {e}");
    }
    let (_, list) = s.user(ADMIN).get("/api/pauses").await;
    assert_eq!(list["items"], json!([]), "nothing stored");
    let (status, e) = s.user(ADMIN).delete("/api/pauses/lane/bulk").await;
    assert_eq!(status, 404, "{e}");
    let (status, e) = s.user(ADMIN).delete("/api/pauses/queue/bulk").await;
    assert_eq!(status, 400, "{e}");
}

async fn the_dlq_alert_pauses_the_lane_of_its_dead_letters(s: Arc<TestStack>) {
    let user = "operate-dead";
    let id = s.user(user).submit_job(&json!({"prompt": "Always overloaded [[sim:529x6]]", "priority": "high", "max_tokens": 20, "output_config": {"effort": "low"}})).await;
    s.user(user).job_reaches(&id, "dead_lettered", WAIT).await;
    assert_eq!(s.cron().await, 200);
    let (_, list) = s.user(ADMIN).get("/api/pauses").await;
    let items = list["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{list}");
    assert_eq!(
        (items[0]["scope"].as_str(), items[0]["value"].as_str()),
        (Some("lane"), Some("high"))
    );
    assert_eq!(items[0]["paused_by"], "alert");
    assert!(
        items[0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("DLQ alert: 1 dead letter (threshold 0)"),
        "{list}"
    );
    resume(&s, "lane", "high").await;
}

async fn the_dashboard_pauses_and_resumes_a_lane_and_the_job_page_shows_it(s: Arc<TestStack>) {
    use end2end::browser::{check_text, check_visible, click, fill, screenshot, Browser};
    let browser = Browser::launch(&s, "operate-pauses").await;
    let page = browser.open(&s.url("/ui/dashboard")).await;
    check_visible(&page, "pauses-none").await;
    fill(&page, "pause-value", "bulk").await;
    fill(&page, "pause-reason", "browser drill").await;
    click(&page, "pause-submit").await;
    let row = page.locator("[data-testid=pause-row][data-scope=lane][data-value=bulk]");
    playwright_rs::expect(row.clone())
        .with_timeout(end2end::browser::CHECK_TIMEOUT)
        .to_contain_text("browser drill")
        .await
        .expect("the pause is listed with its reason");
    screenshot(&page, &s, "dashboard-pauses").await;
    // The controls are the last section; their effect is in the status line at the top, with
    // a link to them, on the next refresh.
    check_visible(&page, "dashboard-nav").await;
    check_text(&page, "status-line", "lane bulk paused by").await;
    check_text(&page, "status-line", "browser drill").await;
    let _: serde_json::Value = page
        .evaluate("() => { window.scrollTo(0, 0); return null; }", None::<&()>)
        .await
        .expect("scroll to the top");
    screenshot(&page, &s, "dashboard-status").await;

    // The SPA in open mode is the anonymous user.
    let user = "anonymous";
    let id = s.user(user).submit_job(&json!({"prompt": "Bulk but sync", "priority": "bulk", "mode": "sync", "max_tokens": 20, "output_config": {"effort": "low"}})).await;
    held(&s, user, &id).await;
    let job_page = browser.open(&s.url(&format!("/ui/jobs/{id}"))).await;
    check_visible(&job_page, "detail-paused").await;
    screenshot(&job_page, &s, "job-paused").await;

    row.get_by_test_id("pause-resume")
        .click(None)
        .await
        .expect("click resume");
    check_visible(&page, "pauses-none").await;
    s.user(user).job_reaches(&id, "completed", WAIT).await;
    browser.close().await;
}
