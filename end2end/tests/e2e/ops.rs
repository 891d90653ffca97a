//! Ops suite (open mode, where every caller may use the ops endpoints): the DLQ alert once per
//! crossing, the cron's metrics row, usage that agrees with the jobs to the micro-dollar and its
//! CSV, daily caps (429 before anything is paid) and the soft threshold's alert, DLQ triage —
//! replay, edit-then-replay, bulk replay, discard, 409s — and the query plans of every list and
//! aggregate of the ops side.
//!
//! One file on purpose, though over 400 lines: a suite is one stack and one module (run by name
//! by `cargo xtask test`), and its scenarios share that stack.

/// The store's query text, as the Worker runs it.
#[path = "../../../worker/src/store/sql.rs"]
mod store_sql;

use std::sync::Arc;
use std::time::Duration;

use end2end::api::{assert_error, content_type};
use end2end::{eventually, tests, StackConfig, Suite, TestStack};
use reqwest::Method;
use serde_json::{json, Value};

/// The DLQ alert fires when more than this many jobs are dead-lettered.
const THRESHOLD: u64 = 1;

pub fn suite() -> Suite {
    end2end::suite_with(
        "ops",
        StackConfig::vars(&[("DLQ_ALERT_THRESHOLD", &THRESHOLD.to_string())]),
        tests![
            the_dlq_alert_fires_once_per_crossing,
            a_dead_letter_is_replayed_to_completion_and_keeps_its_history,
            edit_then_replay_changes_the_model_and_max_tokens,
            a_bulk_replay_takes_what_matches_and_discard_takes_a_job_off_the_list,
            the_cron_writes_a_metrics_row_with_latencies_lanes_and_models,
            usage_agrees_with_the_jobs_to_the_micro_dollar_and_exports_csv,
            the_spenders_view_ranks_every_user_and_agrees_with_their_usage,
            usage_by_tag_agrees_with_the_tagged_jobs_listed_to_the_micro_dollar,
            malformed_tags_are_refused_and_store_nothing,
            a_tag_cap_refuses_the_job_that_would_cross_it_and_stores_nothing,
            a_daily_cap_refuses_new_jobs_and_the_soft_threshold_alerts_once,
            every_ops_list_and_aggregate_is_served_by_an_index,
        ],
    )
}

const ADMIN: &str = "ops-anna";

/// How long a job of this suite may take to reach the status a test waits for.
const WAIT: Duration = Duration::from_secs(120);

/// A high-lane prompt job that the simulator overloads on all six deliveries (the first and
/// max_retries = 5): it ends dead-lettered, and its seventh call — a replay's — succeeds.
async fn dead_letter(s: &Arc<TestStack>, user: &str, prompt: &str) -> String {
    let id = poison(s, user, prompt).await;
    s.user(user).job_reaches(&id, "dead_lettered", WAIT).await;
    id
}

/// A job of `user` that six overloads in a row send to the DLQ (once its retries are spent).
async fn poison(s: &Arc<TestStack>, user: &str, prompt: &str) -> String {
    s.user(user).submit_job(&json!({"prompt": format!("{prompt} [[sim:529x6]]"), "priority": "high", "max_tokens": 40, "output_config": {"effort": "low"}}))
    .await
}

async fn dlq(s: &Arc<TestStack>, query: &str) -> Value {
    let (status, list) = s.user(ADMIN).get(&format!("/api/dlq{query}")).await;
    assert_eq!(status, 200, "{list}");
    list
}

fn item<'a>(list: &'a Value, id: &str) -> Option<&'a Value> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["id"] == id)
}

async fn the_dlq_alert_fires_once_per_crossing(s: Arc<TestStack>) {
    let user = "alert-user";
    let first = dead_letter(&s, user, "First dead letter").await;
    assert_eq!(s.cron().await, 200);
    assert!(
        s.webhooks_of("dlq.threshold").is_empty(),
        "1 is not above 1"
    );
    let second = dead_letter(&s, user, "Second dead letter").await;
    assert_eq!(s.cron().await, 200);
    assert_eq!(s.cron().await, 200);
    let fired = s.webhooks_of("dlq.threshold");
    assert_eq!(fired.len(), 1, "one crossing, one call: {fired:?}");
    assert_eq!(fired[0]["deadLettered"], 2);
    assert_eq!(fired[0]["threshold"], THRESHOLD);
    assert!(fired[0]["text"].as_str().unwrap().contains("2 jobs"));
    // Back to the threshold (one discarded), then above again: a second call.
    let (status, body) = s
        .user(ADMIN)
        .post(&format!("/api/dlq/{first}/discard"))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(s.cron().await, 200);
    assert_eq!(s.webhooks_of("dlq.threshold").len(), 1);
    let third = dead_letter(&s, user, "Third dead letter").await;
    assert_eq!(s.cron().await, 200);
    assert_eq!(s.webhooks_of("dlq.threshold").len(), 2, "crossed again");
    // Leave the suite with no open dead letters.
    for id in [&second, &third] {
        assert_eq!(
            s.user(ADMIN)
                .post(&format!("/api/dlq/{id}/discard"))
                .await
                .0,
            200
        );
    }
    assert_eq!(s.cron().await, 200);
    assert_eq!(dlq(&s, "").await["dead_lettered"], 0);
}

async fn a_dead_letter_is_replayed_to_completion_and_keeps_its_history(s: Arc<TestStack>) {
    let user = "replay-user";
    let id = dead_letter(&s, user, "Summarise the outage report").await;
    assert_eq!(s.billed(&id), 0);
    // Listed with its class, attempts, error history and a preview of its input.
    let list = dlq(&s, "?error_class=overloaded&user=replay-user").await;
    let it = item(&list, &id).unwrap_or_else(|| panic!("{id} not listed: {list}"));
    assert_eq!(it["status"], "dead_lettered");
    assert_eq!(it["error_class"], "overloaded");
    assert_eq!(it["attempts"], 6);
    assert_eq!(it["attempt_log"].as_array().unwrap().len(), 6, "{it}");
    assert!(it["preview"]
        .as_str()
        .unwrap()
        .starts_with("Summarise the outage report"));
    assert!(item(&dlq(&s, "?error_class=timeout").await, &id).is_none());
    assert!(item(&dlq(&s, "?user=somebody-else").await, &id).is_none());
    // Replay: a new job through the producer path, which completes and is billed once.
    let (status, ack) = s.user(ADMIN).post(&format!("/api/dlq/{id}/replay")).await;
    assert_eq!(status, 202, "{ack}");
    let new = ack["replayed"][0]["job_id"].as_str().unwrap().to_string();
    assert_ne!(new, id);
    assert_eq!(ack["replayed"][0]["poll_url"], format!("/jobs/{new}"));
    let done = s.user(user).job_reaches(&new, "completed", WAIT).await;
    assert_eq!(done["attempts"], 1, "a fresh retry budget: {done}");
    assert_eq!(s.billed(&new), 1);
    assert_eq!(s.billed(&id), 0);
    // The original keeps its history, points at its replay and says who did it.
    let original = s.user(user).job(&id).await;
    assert_eq!(original["status"], "dead_lettered");
    assert_eq!(original["attempt_log"].as_array().unwrap().len(), 6);
    let it = dlq(&s, "?user=replay-user").await;
    let it = item(&it, &id).unwrap().clone();
    assert_eq!(it["replayed_to"], new.as_str());
    let audit = &it["audit"][0];
    assert_eq!(
        (audit["actor"].as_str(), audit["action"].as_str()),
        (Some(ADMIN), Some("replay"))
    );
    assert!(audit["at"].is_i64());
    // A second replay of it, or a replay of the completed one: 409; unknown ids: 404.
    let (status, body) = s.user(ADMIN).post(&format!("/api/dlq/{id}/replay")).await;
    assert_error(status, &body, 409, "already_replayed");
    let (status, body) = s.user(ADMIN).post(&format!("/api/dlq/{new}/replay")).await;
    assert_error(status, &body, 409, "completed");
    let (status, body) = s.user(ADMIN).post("/api/dlq/nope/replay").await;
    assert_error(status, &body, 404, "not_found");
    // Bad filters are 400s naming the field.
    for (query, field) in [
        ("?status=completed", "status"),
        ("?error_class=bogus", "error_class"),
        ("?from=yesterday", "from"),
        ("?cursor=%%%", "cursor"),
    ] {
        let (status, body) = s.user(ADMIN).get(&format!("/api/dlq{query}")).await;
        assert_eq!(status, 400, "{query}: {body}");
        if field != "cursor" {
            assert_eq!(body["field"], field, "{body}");
        }
    }
}

async fn edit_then_replay_changes_the_model_and_max_tokens(s: Arc<TestStack>) {
    let user = "edit-user";
    let id = dead_letter(&s, user, "Translate the release notes").await;
    // Edits are checked: unknown fields and bad values are 400s, and nothing is created.
    for bad in [
        json!({"temperature": 1}),
        json!({"max_tokens": 0}),
        json!({"model": "not a model"}),
    ] {
        let (status, body) = s
            .user(ADMIN)
            .post_json(&format!("/api/dlq/{id}/replay"), &bad)
            .await;
        assert_eq!(status, 400, "{body}");
    }
    let (status, ack) = s
        .user(ADMIN)
        .post_json(
            &format!("/api/dlq/{id}/replay"),
            &json!({"model": "claude-haiku-5-5", "max_tokens": 64}),
        )
        .await;
    assert_eq!(status, 202, "{ack}");
    let new = ack["replayed"][0]["job_id"].as_str().unwrap().to_string();
    let done = s.user(user).job_reaches(&new, "completed", WAIT).await;
    assert_eq!(done["model"], "claude-haiku-5-5", "{done}");
    assert!(done["output_tokens"].as_u64().unwrap() <= 64, "{done}");
    let it = dlq(&s, "?user=edit-user").await;
    let detail = item(&it, &id).unwrap()["audit"][0]["detail"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        detail.contains("claude-haiku-5-5") && detail.contains("64"),
        "{detail}"
    );
}

async fn a_bulk_replay_takes_what_matches_and_discard_takes_a_job_off_the_list(s: Arc<TestStack>) {
    let user = "bulk-user";
    // All four sent at once: their retries run side by side.
    let mut ids = Vec::new();
    for i in 0..3 {
        ids.push(poison(&s, user, &format!("Bulk dead letter {i}")).await);
    }
    let other = poison(&s, "bystander", "Not part of the filter").await;
    for id in &ids {
        s.user(user).job_reaches(id, "dead_lettered", WAIT).await;
    }
    s.user("bystander")
        .job_reaches(&other, "dead_lettered", WAIT)
        .await;
    let (status, ack) = s
        .user(ADMIN)
        .post_json("/api/dlq/replay", &json!({"user": user}))
        .await;
    assert_eq!(status, 202, "{ack}");
    assert_eq!(ack["more"], false);
    let replayed = ack["replayed"].as_array().unwrap();
    let mut originals: Vec<&str> = replayed
        .iter()
        .map(|r| r["original"].as_str().unwrap())
        .collect();
    originals.sort();
    let mut want: Vec<&str> = ids.iter().map(String::as_str).collect();
    want.sort();
    assert_eq!(originals, want, "exactly the filter's jobs");
    for r in replayed {
        s.user(user)
            .job_reaches(r["job_id"].as_str().unwrap(), "completed", WAIT)
            .await;
    }
    // Nothing left to replay for that filter.
    let (status, ack) = s
        .user(ADMIN)
        .post_json("/api/dlq/replay", &json!({"user": user}))
        .await;
    assert_eq!(
        (status, ack["replayed"].as_array().unwrap().len()),
        (202, 0)
    );
    let (status, body) = s
        .user(ADMIN)
        .post_json("/api/dlq/replay", &json!({"status": "completed"}))
        .await;
    assert_error(status, &body, 400, "invalid_status");
    // Discard: off the list (and the count), with an audit entry; a completed job cannot be.
    let before = dlq(&s, "").await["dead_lettered"].as_u64().unwrap();
    let (status, body) = s
        .user(ADMIN)
        .post(&format!("/api/dlq/{other}/discard"))
        .await;
    assert_eq!(status, 200, "{body}");
    let after = dlq(&s, "").await;
    assert!(item(&after, &other).is_none());
    assert_eq!(after["dead_lettered"].as_u64().unwrap(), before - 1);
    let done = ack_job(&s).await;
    let (status, body) = s
        .user(ADMIN)
        .post(&format!("/api/dlq/{done}/discard"))
        .await;
    assert_error(status, &body, 409, "not_dead");
}

/// A job that completes.
async fn ack_job(s: &Arc<TestStack>) -> String {
    let id = s.user("bulk-user").submit_job(&json!({"prompt": "A plain job", "priority": "high", "max_tokens": 20, "output_config": {"effort": "low"}}))
    .await;
    s.user("bulk-user")
        .job_reaches(&id, "completed", WAIT)
        .await;
    id
}

async fn the_cron_writes_a_metrics_row_with_latencies_lanes_and_models(s: Arc<TestStack>) {
    let user = "metrics-user";
    let mut ids = Vec::new();
    for i in 0..4 {
        ids.push(
            s.user(user).submit_job(&json!({"prompt": format!("Metrics job {i}"), "priority": "high", "max_tokens": 30, "output_config": {"effort": "low"}}))
            .await,
        );
    }
    let mut cost = 0;
    for id in &ids {
        cost += s.user(user).job_reaches(id, "completed", WAIT).await["cost_micros"]
            .as_u64()
            .unwrap();
    }
    assert_eq!(s.cron().await, 200);
    let (status, report) = s.user(ADMIN).get("/api/metrics?minutes=60").await;
    assert_eq!(status, 200, "{report}");
    let latest = &report["latest"];
    assert!(latest["completed"].as_u64().unwrap() >= 4, "{latest}");
    for key in ["p50", "p95", "p99"] {
        assert!(
            latest["end_to_end_ms"][key].as_i64().unwrap() > 0,
            "{latest}"
        );
        assert!(latest["run_ms"][key].as_i64().is_some(), "{latest}");
    }
    assert!(latest["end_to_end_ms"]["p50"].as_i64() <= latest["end_to_end_ms"]["p99"].as_i64());
    let lanes = latest["lanes"].as_array().unwrap();
    assert_eq!(lanes.len(), 2);
    assert_eq!(lanes[0]["lane"], "high");
    let models = latest["models"].as_array().unwrap();
    let model_cost: u64 = models
        .iter()
        .map(|m| m["cost_micros"].as_u64().unwrap())
        .sum();
    assert!(model_cost >= cost, "the window holds at least these jobs");
    assert!(latest["throughput_per_min"].as_f64().unwrap() > 0.0);
    assert!(latest["budget"].as_array().is_some());
    assert!(
        report["series"].as_array().unwrap().len() >= 2,
        "one row per cron run"
    );
    assert_eq!(report["dlq_alert_threshold"], THRESHOLD);
    // Bad parameters are 400s.
    let (status, body) = s.user(ADMIN).get("/api/metrics?minutes=0").await;
    assert_error(status, &body, 400, "invalid_minutes");
}

/// Tagged prompt jobs (sync and batch) and a tagged feedback: each tag's cost, tokens and jobs
/// in `GET /api/usage/tags` equal the sums over `GET /jobs?tag=`, a job with two tags counts
/// under each, and the CSV carries the same dollars.
async fn usage_by_tag_agrees_with_the_tagged_jobs_listed_to_the_micro_dollar(s: Arc<TestStack>) {
    let user = "tag-user";
    let c = s.user(user);
    let job = |prompt: &str, priority: &str, tags: Value| {
        json!({"prompt": prompt, "priority": priority, "max_tokens": 50,
               "output_config": {"effort": "low"}, "tags": tags})
    };
    let mut sync = vec![
        c.submit_job(&job(
            "Tagged one",
            "high",
            json!(["team=search", "customer=acme"]),
        ))
        .await,
        c.submit_job(&job("Tagged two", "high", json!(["team=search"])))
            .await,
        c.submit_job(&job("Tagged three", "high", json!(["team=ads"])))
            .await,
        c.submit_job(&job("Untagged", "high", Value::Null)).await,
    ];
    sync.push(
        c.submit_feedback(&json!({"text": "Search is slow today.", "tags": ["team=search"]}))
            .await,
    );
    let batch = c
        .submit_job(&job(
            "Tagged batch",
            "bulk",
            json!(["customer=acme", "team=ads"]),
        ))
        .await;
    for id in &sync {
        c.job_reaches(id, "completed", WAIT).await;
    }
    eventually("the batch job completes", WAIT, || async {
        let _ = s.user(ADMIN).post("/api/batches/flush").await;
        let _ = s.user(ADMIN).post("/api/batches/poll").await;
        (c.job(&batch).await["status"] == "completed").then_some(())
    })
    .await;
    assert_eq!(
        c.job(&sync[0]).await["tags"],
        json!(["customer=acme", "team=search"]),
        "stored sorted"
    );
    let r = c.get_ok("/api/usage/tags?user=tag-user").await;
    assert_eq!(r["user_id"], user, "{r}");
    let tags = r["tags"].as_array().unwrap();
    assert_eq!(tags.len(), 3, "{r}");
    for (tag, expected_jobs) in [("team=search", 3), ("team=ads", 2), ("customer=acme", 2)] {
        let (status, list) = c
            .get(&format!("/jobs?tag={}&limit=100", tag.replace('=', "%3D")))
            .await;
        assert_eq!(status, 200, "{list}");
        let listed = list["items"].as_array().unwrap();
        assert_eq!(listed.len(), expected_jobs, "{tag}: {list}");
        assert!(listed
            .iter()
            .all(|j| j["tags"].as_array().unwrap().iter().any(|t| t == tag)));
        let row = tags
            .iter()
            .find(|t| t["tag"] == tag)
            .unwrap_or_else(|| panic!("{tag}: {r}"));
        assert_eq!(
            row["jobs"].as_u64().unwrap(),
            expected_jobs as u64,
            "{tag}: {r}"
        );
        for key in [
            "cost_micros",
            "input_tokens",
            "output_tokens",
            "cache_read_tokens",
        ] {
            let sum: u64 = listed.iter().map(|j| j[key].as_u64().unwrap()).sum();
            assert_eq!(row[key].as_u64().unwrap(), sum, "{tag} {key}: {r}");
        }
        assert!(row["cost_micros"].as_u64().unwrap() > 0, "{tag}: {r}");
        let by_model: u64 = row["models"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["cost_micros"].as_u64().unwrap())
            .sum();
        assert_eq!(by_model, row["cost_micros"].as_u64().unwrap(), "{tag}: {r}");
    }
    // Dearest first.
    let costs: Vec<u64> = tags
        .iter()
        .map(|t| t["cost_micros"].as_u64().unwrap())
        .collect();
    assert!(costs.windows(2).all(|w| w[0] >= w[1]), "{r}");
    // Every user's tags (an admin without ?user=) include this user's.
    let all = s.user(ADMIN).get_ok("/api/usage/tags").await;
    assert_eq!(all["user_id"], Value::Null, "{all}");
    let search = |rep: &Value| {
        rep["tags"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["tag"] == "team=search")
            .unwrap()["cost_micros"]
            .as_u64()
            .unwrap()
    };
    assert!(search(&all) >= search(&r), "{all}");
    // The CSV: a line per tag and model, summing to the same dollars.
    let (ctype, csv) = c.get_text("/api/usage/tags.csv?user=tag-user").await;
    assert!(ctype.starts_with("text/csv"), "{ctype}");
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().starts_with("rank,tag,model,jobs,"));
    let dollars: f64 = lines
        .filter(|l| l.split(',').nth(1) == Some("team=search"))
        .map(|l| l.split(',').nth(8).unwrap().parse::<f64>().unwrap())
        .sum();
    let micros = search(&r) as f64 / 1e6;
    assert!(
        (dollars - micros).abs() < 1e-9,
        "{dollars} vs {micros}: {csv}"
    );
}

/// A malformed tag is a 400 naming `tags`, on both producers, and nothing is stored; a
/// malformed `?tag=` filter is a 400 too.
async fn a_tag_cap_refuses_the_job_that_would_cross_it_and_stores_nothing(s: Arc<TestStack>) {
    let admin = s.user(ADMIN);
    let c = s.user("tag-capped");
    let cap = |micros: Value| json!({"tag": "team=capped", "daily_cap_micros": micros});
    let (status, body) = admin
        .put_json("/api/usage/tags/budget", &cap(json!(1)))
        .await;
    assert_eq!(status, 200, "{body}");
    let job = |tags: Value| json!({"prompt": "Summarize the plan.", "tags": tags});
    let refused = |status: u16, body: &Value| {
        assert_error(status, body, 429, "tag_budget_exceeded");
        assert_eq!(body["field"], "tags", "{body}");
        assert!(
            body["error"].as_str().unwrap().contains("team=capped"),
            "{body}"
        );
    };
    let (status, body) = c
        .post_json("/jobs", &job(json!(["team=capped", "x=1"])))
        .await;
    refused(status, &body);
    let (status, body) = c
        .post_json(
            "/feedback",
            &json!({"text": "Slow export.", "tags": ["team=capped"]}),
        )
        .await;
    refused(status, &body);
    assert!(
        s.d1("SELECT id FROM jobs WHERE user_id = 'tag-capped'")
            .is_empty(),
        "no row"
    );
    // Other tags, and no tag, are not held by it.
    c.submit_job(&job(json!(["team=free"]))).await;
    c.submit_job(&job(json!(null))).await;
    // A cap with room takes the job, and its reservation counts against the tag.
    admin
        .put_json("/api/usage/tags/budget", &cap(json!(1_000_000_000)))
        .await;
    c.submit_job(&job(json!(["team=capped"]))).await;
    let budgets = c.get_ok("/api/usage/tags/budgets").await;
    let row = budgets
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["tag"] == "team=capped")
        .cloned()
        .unwrap_or_else(|| panic!("{budgets}"));
    let committed = row["committed_micros"].as_u64().unwrap();
    assert!(committed > 0, "{row}");
    // Capped at what is committed: the next one does not fit.
    admin
        .put_json("/api/usage/tags/budget", &cap(json!(committed)))
        .await;
    let (status, body) = c.post_json("/jobs", &job(json!(["team=capped"]))).await;
    refused(status, &body);
    // Removed: it fits again.
    admin
        .put_json("/api/usage/tags/budget", &cap(json!(null)))
        .await;
    c.submit_job(&job(json!(["team=capped"]))).await;
    let (status, body) = admin
        .put_json(
            "/api/usage/tags/budget",
            &json!({"tag": "capped", "daily_cap_micros": 1}),
        )
        .await;
    assert_error(status, &body, 400, "invalid_field");
}

async fn malformed_tags_are_refused_and_store_nothing(s: Arc<TestStack>) {
    let user = "bad-tagger";
    let c = s.user(user);
    for tags in [
        json!("team=search"),
        json!(["team"]),
        json!(["Team=x"]),
        json!(["team=a", "team=b"]),
        json!(["a=1", "b=1", "c=1", "d=1", "e=1", "f=1", "g=1", "h=1", "i=1"]),
        json!([7]),
    ] {
        let (status, body) = c
            .post_json("/jobs", &json!({"prompt": "Hi", "tags": tags}))
            .await;
        assert_error(status, &body, 400, "invalid_field");
        assert_eq!(body["field"], "tags", "{body}");
        let (status, body) = c
            .post_json("/feedback", &json!({"text": "Hi", "tags": tags}))
            .await;
        assert_error(status, &body, 400, "invalid_field");
        assert_eq!(body["field"], "tags", "{body}");
    }
    assert!(
        s.d1("SELECT id FROM jobs WHERE user_id = 'bad-tagger'")
            .is_empty(),
        "no row"
    );
    let (status, body) = c.get("/jobs?tag=nokey").await;
    assert_error(status, &body, 400, "invalid_filter");
    assert_eq!(body["field"], "tag", "{body}");
}

async fn usage_agrees_with_the_jobs_to_the_micro_dollar_and_exports_csv(s: Arc<TestStack>) {
    let user = "usage-user";
    let mut sync = Vec::new();
    for i in 0..3 {
        sync.push(
            s.user(user).submit_job(&json!({"prompt": format!("Usage sync {i}"), "priority": "high", "max_tokens": 50, "output_config": {"effort": "low"}}))
            .await,
        );
    }
    let mut batch = Vec::new();
    for i in 0..2 {
        batch.push(
            s.user(user).submit_job(&json!({"prompt": format!("Usage batch {i}"), "priority": "bulk", "max_tokens": 50, "output_config": {"effort": "low"}}))
            .await,
        );
    }
    for id in &sync {
        s.user(user).job_reaches(id, "completed", WAIT).await;
    }
    eventually(
        "the batch jobs complete",
        Duration::from_secs(120),
        || async {
            let _ = s.user(ADMIN).post("/api/batches/flush").await;
            let _ = s.user(ADMIN).post("/api/batches/poll").await;
            let mut all = true;
            for id in &batch {
                all &= s.user(user).job(id).await["status"] == "completed";
            }
            all.then_some(())
        },
    )
    .await;
    let jobs = s.user(user).all_jobs().await;
    let sum = |f: &dyn Fn(&Value) -> bool, key: &str| -> u64 {
        jobs.iter()
            .filter(|j| f(j))
            .map(|j| j[key].as_u64().unwrap())
            .sum()
    };
    let (status, r) = s.user(user).get("/api/usage").await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["user_id"], user);
    let t = &r["totals"];
    assert_eq!(t["jobs"].as_u64().unwrap(), jobs.len() as u64);
    for key in [
        "cost_micros",
        "input_tokens",
        "output_tokens",
        "cache_write_tokens",
        "cache_read_tokens",
    ] {
        assert_eq!(t[key].as_u64().unwrap(), sum(&|_| true, key), "{key}: {r}");
    }
    assert!(t["cost_micros"].as_u64().unwrap() > 0);
    let batch_cost = sum(&|j| j["mode"] == "batch", "cost_micros");
    assert!(batch_cost > 0);
    assert_eq!(r["savings"]["batch_micros"].as_u64().unwrap(), batch_cost);
    // The last 30 days (today included) by default, today's bar holding everything.
    let days = r["days"].as_array().unwrap();
    assert_eq!(days.len(), 30);
    assert_eq!(days.last().unwrap()["cost_micros"], t["cost_micros"]);
    assert_eq!(days.last().unwrap()["day"], r["to"]);
    // CSV: a header and one line per day and model, summing to the same dollars.
    let resp = s
        .user(user)
        .request(Method::GET, "/api/usage.csv")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert!(content_type(&resp).starts_with("text/csv"));
    assert!(resp.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .contains("usage-usage-user-"));
    let csv = resp.text().await.unwrap();
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().starts_with("day,model,jobs,"));
    let micros: u64 = lines
        .map(|l| {
            let dollars = l.rsplit(',').next().unwrap();
            let (whole, frac) = dollars.split_once('.').unwrap();
            whole.parse::<u64>().unwrap() * 1_000_000 + frac.parse::<u64>().unwrap()
        })
        .sum();
    assert_eq!(micros, t["cost_micros"].as_u64().unwrap());
    // Another user's usage is theirs; bad ranges are 400s.
    let (_, other) = s.user(user).get("/api/usage?user=nobody-here").await;
    assert_eq!(
        other["totals"]["jobs"], 0,
        "open mode: everyone is an admin"
    );
    for query in [
        "?from=2026-02-30",
        "?from=2026-11-29&to=2026-11-01",
        "?from=2000-01-01",
    ] {
        let (status, body) = s.user(user).get(&format!("/api/usage{query}")).await;
        assert_eq!(status, 400, "{query}: {body}");
    }
}

/// Runs after the usage test, so at least its user and the DLQ tests' users have spent.
async fn the_spenders_view_ranks_every_user_and_agrees_with_their_usage(s: Arc<TestStack>) {
    let (status, r) = s.user(ADMIN).get("/api/usage/spenders").await;
    assert_eq!(status, 200, "{r}");
    let users = r["users"].as_array().unwrap();
    assert!(users.len() >= 2, "{r}");
    assert_eq!(r["others"], 0);
    let mut total = 0;
    for (i, u) in users.iter().enumerate() {
        assert_eq!(u["rank"], i + 1);
        let name = u["user_id"].as_str().unwrap();
        let (_, usage) = s.user(ADMIN).get(&format!("/api/usage?user={name}")).await;
        for key in ["jobs", "cost_micros", "input_tokens", "output_tokens"] {
            assert_eq!(u[key], usage["totals"][key], "{name} {key}: {u} vs {usage}");
        }
        let by_model: u64 = u["models"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["cost_micros"].as_u64().unwrap())
            .sum();
        assert_eq!(by_model, u["cost_micros"].as_u64().unwrap(), "{u}");
        total += u["cost_micros"].as_u64().unwrap();
    }
    for w in users.windows(2) {
        assert!(
            w[0]["cost_micros"].as_u64() >= w[1]["cost_micros"].as_u64(),
            "top first"
        );
    }
    assert_eq!(r["totals"]["cost_micros"].as_u64().unwrap(), total);
    let usage_user = users.iter().find(|u| u["user_id"] == "usage-user").unwrap();
    assert!(usage_user["cost_micros"].as_u64().unwrap() > 0);

    // The limit keeps the top; the CSV holds the same money, one line per user and model.
    let (_, top) = s.user(ADMIN).get("/api/usage/spenders?limit=1").await;
    assert_eq!(top["users"].as_array().unwrap().len(), 1);
    assert_eq!(top["users"][0]["user_id"], users[0]["user_id"]);
    assert_eq!(top["others"].as_u64().unwrap(), users.len() as u64 - 1);
    let resp = s
        .user(ADMIN)
        .request(Method::GET, "/api/usage/spenders.csv")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert!(content_type(&resp).starts_with("text/csv"));
    let csv = resp.text().await.unwrap();
    let mut lines = csv.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("rank,user_id,model,jobs,"));
    let micros: u64 = lines
        .map(|l| {
            let dollars = l.split(',').nth(8).unwrap();
            let (whole, frac) = dollars.split_once('.').unwrap();
            whole.parse::<u64>().unwrap() * 1_000_000 + frac.parse::<u64>().unwrap()
        })
        .sum();
    assert_eq!(micros, total);
    for query in ["?limit=0", "?limit=many", "?from=2026-02-30"] {
        let (status, body) = s
            .user(ADMIN)
            .get(&format!("/api/usage/spenders{query}"))
            .await;
        assert_eq!(status, 400, "{query}: {body}");
    }
}

async fn a_daily_cap_refuses_new_jobs_and_the_soft_threshold_alerts_once(s: Arc<TestStack>) {
    let user = "capped-user";
    let first = s.user(user).submit_job(&json!({"prompt": "Spend a little", "priority": "high", "max_tokens": 30, "output_config": {"effort": "low"}}))
    .await;
    let spent = s.user(user).job_reaches(&first, "completed", WAIT).await["cost_micros"]
        .as_u64()
        .unwrap();
    assert!(spent > 0);
    let set = |cap: Value, soft: Value| {
        let admin = s.user(ADMIN);
        async move {
            let (status, body) = admin
                .put_json(
                    "/api/usage/budget",
                    &json!({"user_id": user, "daily_cap_micros": cap, "soft_micros": soft}),
                )
                .await;
            assert_eq!(status, 200, "{body}");
        }
    };
    // Under the cap: accepted; the soft threshold (already reached) alerts once.
    set(json!(spent + 1_000_000), json!(1)).await;
    for _ in 0..2 {
        let id = s.user(user).submit_job(&json!({"prompt": "Still fine", "max_tokens": 5, "output_config": {"effort": "low"}, "priority": "bulk"}))
        .await;
        let (status, _) = s.user(user).post(&format!("/jobs/{id}/cancel")).await;
        assert_eq!(status, 200);
    }
    let soft = s.webhooks_of("usage.soft_threshold");
    assert_eq!(soft.len(), 1, "once per user and day: {soft:?}");
    assert_eq!(soft[0]["userId"], user);
    // At the cap: every producer answers 429 before anything is stored or paid.
    set(json!(spent), Value::Null).await;
    let before = s.user(user).all_jobs().await.len();
    let objects = s.r2_objects();
    let calls = s.sim_calls_where(|_| true);
    let (status, body) = s
        .user(user)
        .post_json("/jobs", &json!({"prompt": "Over budget"}))
        .await;
    assert_error(status, &body, 429, "budget_exceeded");
    assert!(
        body["error"].as_str().unwrap().contains("daily budget"),
        "{body}"
    );
    let (status, body) = s
        .user(user)
        .post_json("/feedback", &json!({"text": "Over budget"}))
        .await;
    assert_error(status, &body, 429, "budget_exceeded");
    let (status, body) = s
        .user(user)
        .post_json("/api/claude", &json!({"prompt": "Over budget"}))
        .await;
    assert_error(status, &body, 429, "budget_exceeded");
    let (status, body) = s
        .user(user)
        .upload(
            &[("a.pdf".into(), end2end::pdfs::make("Over budget", 1))],
            &[],
        )
        .await;
    assert_error(status, &body, 429, "budget_exceeded");
    assert_eq!(s.user(user).all_jobs().await.len(), before, "no row");
    assert_eq!(s.r2_objects(), objects, "no object");
    assert_eq!(s.sim_calls_where(|_| true), calls, "no call");
    // The usage report shows the budget; others are not affected; removing it lifts it.
    let (_, r) = s.user(user).get("/api/usage").await;
    assert_eq!(r["budget"]["daily_cap_micros"].as_u64(), Some(spent));
    assert!(r["budget"]["spent_today_micros"].as_u64().unwrap() >= spent);
    s.user("uncapped-user")
        .submit_job(&json!({"prompt": "Fine", "priority": "bulk"}))
        .await;
    set(Value::Null, Value::Null).await;
    s.user(user)
        .submit_job(&json!({"prompt": "Fine again", "priority": "bulk"}))
        .await;
    // Bad settings are 400s.
    let (status, body) = s
        .user(ADMIN)
        .put_json(
            "/api/usage/budget",
            &json!({"user_id": user, "daily_cap_micros": -5}),
        )
        .await;
    assert_error(status, &body, 400, "invalid_amount");
}

/// `EXPLAIN QUERY PLAN` of each query, with its parameters as literals: no full scan of `jobs`
/// (a partial index holds only the rows it is for, so a walk over one is fine).
async fn every_ops_list_and_aggregate_is_served_by_an_index(s: Arc<TestStack>) {
    use pipeline::ops::dlq::DlqFilter;
    use store_sql as sql;
    use store_sql::SqlValue;
    let literal = |q: &str, params: &[SqlValue]| {
        let mut q = q.to_string();
        for (i, p) in params.iter().enumerate().rev() {
            let v = match p {
                SqlValue::Text(t) => format!("'{}'", t.replace('\'', "''")),
                SqlValue::Int(n) => n.to_string(),
            };
            q = q.replace(&format!("?{}", i + 1), &v);
        }
        q
    };
    let text = |t: &str| SqlValue::Text(t.into());
    let int = SqlValue::Int;
    let mut queries = vec![
        (
            "usage",
            literal(sql::USAGE, &[text("ann"), int(0), int(30_000)]),
        ),
        ("spent", literal(sql::SPENT, &[text("ann"), int(0)])),
        ("spenders", literal(sql::SPENDERS, &[int(0), int(30)])),
        ("jobs by model", literal(sql::JOBS_BY_MODEL, &[int(0)])),
        (
            "tag usage, every user",
            sql::TAG_USAGE
                .replace("?3", "NULL")
                .replace("?1", "0")
                .replace("?2", "30"),
        ),
        (
            "tag usage, one user",
            literal(sql::TAG_USAGE, &[int(0), int(30), text("ann")]),
        ),
        ("rollout", literal(sql::ROLLOUT, &[int(0), int(1 << 50)])),
        ("ended", literal(sql::ENDED, &[int(1 << 50), int(100)])),
        ("pending", sql::pending()),
        ("dead now", sql::DEAD_NOW.to_string()),
        ("user queued", literal(sql::USER_QUEUED, &[text("ann")])),
        ("unclassified", sql::unclassified()),
        ("metrics", literal(sql::METRICS_SERIES, &[int(0), int(60)])),
        (
            "jobs list",
            sql::jobs_list("id")
                .replace("?2", "NULL")
                .replace("?3", "NULL")
                .replace("?4", "NULL")
                .replace("?1", "'ann'")
                .replace("?5", "4503599627370496")
                .replace("?6", "''")
                .replace("?7", "51")
                .replace("?8", "NULL"),
        ),
        (
            "jobs list, one status and kind",
            sql::jobs_list("id")
                .replace("?2", "'completed'")
                .replace("?3", "NULL")
                .replace("?4", "'feedback'")
                .replace("?1", "'ann'")
                .replace("?5", "4503599627370496")
                .replace("?6", "''")
                .replace("?7", "51")
                .replace("?8", "NULL"),
        ),
        (
            "uploads list",
            literal(
                &sql::uploads_list(),
                &[text("ann"), int(1 << 52), text(""), int(51)],
            ),
        ),
    ];
    let filters = [
        DlqFilter::default(),
        DlqFilter {
            status: Some("all".into()),
            error_class: Some("overloaded".into()),
            user: Some("ann".into()),
            model: Some("claude-sonnet-5-5".into()),
            from: Some(0),
            to: Some(1 << 50),
        },
    ];
    for f in &filters {
        let (q, p) = sql::dlq_list(f, "id, completed_at", None, 50);
        queries.push(("dlq list", literal(&q, &p)));
        let (q, p) = sql::dlq_replay(f, "id, completed_at", 100);
        queries.push(("dlq bulk replay", literal(&q, &p)));
    }
    // The bulk incident tools' filters (issue 36): their count and their slice.
    {
        use pipeline::ops::bulk::BulkFilter;
        use pipeline::status::{Lane, Status};
        let bulk = [
            BulkFilter {
                status: vec![Status::Queued],
                tag: Some("run=nightly".into()),
                ..BulkFilter::default()
            },
            BulkFilter {
                status: vec![Status::DeadLettered, Status::Failed],
                user: Some("ann".into()),
                error_class: Some(pipeline::outcome::ErrorClass::Overloaded),
                ..BulkFilter::default()
            },
            BulkFilter {
                status: vec![Status::Queued],
                lane: Some(Lane::Bulk),
                created_from: Some(0),
                created_to: Some(1 << 50),
                ..BulkFilter::default()
            },
        ];
        for f in &bulk {
            let (w, p) = sql::bulk_where(f);
            let count = format!("SELECT COUNT(*) FROM jobs WHERE {w}");
            queries.push(("bulk count", literal(&count, &p)));
            let slice = format!("SELECT id FROM jobs WHERE {w} ORDER BY created_at, id LIMIT 500");
            queries.push(("bulk slice", literal(&slice, &p)));
        }
    }
    queries.push(("route calls", literal(sql::ROUTE_CALLS, &[int(0)])));
    queries.push(("route spend", literal(sql::ROUTE_SPEND, &[int(0)])));
    // The rollup's consistency check scans a range of days on purpose (an admin's command,
    // at most 31 days): it is tested by the retention suite, not here.
    let _ = (
        sql::USAGE_SCAN,
        sql::USAGE_ROWS,
        sql::TAG_SCAN,
        sql::TAG_ROWS,
        sql::ROLLUP_SUMS,
    );
    let partial = [
        "idx_jobs_unclassified",
        "idx_jobs_dead_open",
        "idx_jobs_waiting",
        "idx_jobs_calls",
    ];
    let explain: Vec<String> = queries
        .iter()
        .map(|(_, q)| format!("EXPLAIN QUERY PLAN {q}"))
        .collect();
    let plans = s.d1_each(&explain).await;
    for ((name, q), plan) in queries.into_iter().zip(plans) {
        let details: Vec<String> = plan
            .iter()
            .map(|r| r["detail"].as_str().unwrap_or_default().to_string())
            .collect();
        println!("plan of {name}: {details:?}");
        assert!(
            details.iter().any(|d| d.contains(" USING ")),
            "{name}: no index in the plan {details:?} of {q}"
        );
        for d in &details {
            let full_scan = d.starts_with("SCAN jobs") && !partial.iter().any(|p| d.contains(p));
            assert!(!full_scan, "{name} scans jobs: {details:?}\n{q}");
        }
    }
}
