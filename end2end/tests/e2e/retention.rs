//! Retention and the usage rollup on a real stack. Jobs are made through the API (so their R2
//! objects, attempt logs, audit entries and idempotency records are real), then aged by moving
//! their timestamps back in D1; retention runs from the cron's code path (`POST
//! /api/retention/run`, a slice at a time) with objects kept 30 days, attempt logs 10, jobs 90
//! and a slice of 3 rows.

use std::sync::Arc;
use std::time::Duration;

use end2end::{tests, StackConfig, Suite, TestStack};
use pipeline::clock::{day_of, DAY_MS};
use reqwest::Method;
use serde_json::{json, Value};

pub fn suite() -> Suite {
    end2end::suite_with(
        "retention",
        StackConfig::vars(&[
            ("RETAIN_BLOBS_DAYS", "30"),
            ("RETAIN_ATTEMPTS_DAYS", "10"),
            ("RETENTION_SLICE", "3"),
            // Batch-mode jobs wait for a flush an hour away: they stay queued (live).
            ("BATCH_FLUSH_AGE_S", "3600"),
        ]),
        tests![
            expired_jobs_go_with_their_objects_live_jobs_stay_and_usage_still_equals_the_bill,
            objects_kept_shorter_than_jobs_go_first_and_the_result_answers_410,
            the_rollup_equals_a_scan_after_every_kind_of_write_and_a_rebuild_repairs_it,
            old_notes_of_batches_the_api_did_not_know_are_forgotten,
        ],
    )
}

const ADMIN: &str = "ret-admin";
const WAIT: Duration = Duration::from_secs(120);

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// Moves every timestamp of `user`'s jobs (and their logs) `days` back.
async fn age(s: &Arc<TestStack>, user: &str, days: i64) {
    let d = days * DAY_MS;
    let of_user = format!("SELECT id FROM jobs WHERE user_id = '{user}'");
    s.d1_now(&format!(
        "UPDATE job_attempts SET started_at = started_at - {d}, ended_at = ended_at - {d} \
         WHERE job_id IN ({of_user})"
    ))
    .await;
    s.d1_now(&format!(
        "UPDATE idempotency_keys SET created_at = created_at - {d} WHERE user_id = '{user}'"
    ))
    .await;
    s.d1_now(&format!(
        "UPDATE batches SET created_at = created_at - {d} WHERE user_id = '{user}'"
    ))
    .await;
    s.d1_now(&format!(
        "UPDATE jobs SET created_at = created_at - {d}, started_at = started_at - {d}, \
         completed_at = completed_at - {d}, updated_at = updated_at - {d} WHERE user_id = '{user}'"
    ))
    .await;
}

/// Usage of `user` over the days `[from, to]` back from today: (jobs, cost, input tokens).
async fn usage(s: &Arc<TestStack>, user: &str, from: i64, to: i64) -> (u64, u64, u64) {
    let now = now_ms();
    let body = s
        .user(ADMIN)
        .get_ok(&format!(
            "/api/usage?user={user}&from={}&to={}",
            day_of(now - from * DAY_MS),
            day_of(now - to * DAY_MS)
        ))
        .await;
    let t = &body["totals"];
    (
        t["jobs"].as_u64().unwrap(),
        t["cost_micros"].as_u64().unwrap(),
        t["input_tokens"].as_u64().unwrap(),
    )
}

/// Runs retention until a run removes nothing more; answers the runs' reports.
async fn retain_all(s: &Arc<TestStack>) -> Vec<Value> {
    let mut reports = Vec::new();
    for _ in 0..20 {
        let r = s.user(ADMIN).post_ok("/api/retention/run").await;
        let more = r["more"].as_bool().unwrap();
        reports.push(r);
        if !more {
            return reports;
        }
    }
    panic!("retention never finished: {reports:?}");
}

async fn expired_jobs_go_with_their_objects_live_jobs_stay_and_usage_still_equals_the_bill(
    s: Arc<TestStack>,
) {
    let user = "ret-old";
    let client = s.user(user);
    let mut finished = Vec::new();
    for i in 0..4 {
        let (status, ack) = client
            .json_request(
                Method::POST,
                "/jobs",
                &json!({"prompt": format!("An old job {i}"), "priority": "high", "max_tokens": 200, "output_config": {"effort": "low"}}),
            )
            .header("idempotency-key", format!("ret-old-{i}"))
            .send()
            .await
            .map(|r| (r.status().as_u16(), r))
            .expect("request");
        assert_eq!(status, 202);
        let ack: Value = ack.json().await.unwrap();
        finished.push(ack["jobId"].as_str().unwrap().to_string());
    }
    let failed = client
        .submit_job(&json!({"prompt": "Refused [[sim:400]]", "priority": "high", "max_tokens": 200, "output_config": {"effort": "low"}}))
        .await;
    let upload = client
        .submit_upload(
            &[
                ("a.pdf".into(), end2end::pdfs::make("Old A", 1)),
                ("b.pdf".into(), end2end::pdfs::make("Old B", 2)),
            ],
            &[("mode", "sync")],
        )
        .await;
    for id in &finished {
        client.job_reaches(id, "completed", WAIT).await;
    }
    client.job_reaches(&failed, "failed", WAIT).await;
    let files = client.upload_finished(&upload, WAIT).await;
    for f in files["files"].as_array().unwrap() {
        finished.push(f["job_id"].as_str().unwrap().to_string());
    }
    finished.push(failed);
    // A job that is still waiting, as old as the rest: retention must never take it.
    let live = client
        .submit_job(&json!({"prompt": "Still waiting", "priority": "bulk", "mode": "batch", "max_tokens": 200, "output_config": {"effort": "low"}}))
        .await;
    let billed: u64 = client
        .all_jobs()
        .await
        .iter()
        .map(|j| j["cost_micros"].as_u64().unwrap_or(0))
        .sum();
    assert!(billed > 0);
    let objects_before = s.r2_objects();
    let files_before = s.sim_files();
    let before = usage(&s, user, 0, 0).await;
    assert_eq!(before.0, finished.len() as u64 + 1);
    assert_eq!(before.1, billed, "the rollup is what the jobs cost");

    age(&s, user, 120).await;
    s.d1_now("INSERT INTO metrics (at, body) VALUES (1000, '{}')")
        .await;
    let aged = usage(&s, user, 125, 115).await;
    assert_eq!(aged, before, "aging moved the usage to its new days");
    assert_eq!(usage(&s, user, 5, 0).await.0, 0);

    let reports = retain_all(&s).await;
    assert!(
        reports.len() >= 3,
        "a slice of 3 takes several runs: {reports:?}"
    );
    let sum = |k: &str| reports.iter().map(|r| r[k].as_u64().unwrap()).sum::<u64>();
    assert_eq!(sum("jobs"), finished.len() as u64, "{reports:?}");
    assert!(sum("attempts") >= finished.len() as u64, "{reports:?}");
    assert!(sum("idempotency") >= 4, "{reports:?}");
    assert!(sum("metrics") >= 1, "{reports:?}");
    assert_eq!(sum("uploads"), 1, "{reports:?}");
    // 4 prompts + 4 answers, 2 PDFs + 2 answers, the failed job's request.
    assert_eq!(sum("blobs"), 13, "{reports:?}");
    // The two PDFs went from the provider's Files API with them.
    assert_eq!(sum("files"), 2, "{reports:?}");
    let files_after = s.sim_files();
    assert_eq!(
        files_after.deleted - files_before.deleted,
        2,
        "{files_after:?}"
    );
    assert_eq!(
        files_before.stored - files_after.stored,
        2,
        "{files_after:?}"
    );

    for id in &finished {
        let (status, _) = client.get(&format!("/jobs/{id}")).await;
        assert_eq!(status, 404, "{id} is gone");
    }
    assert_eq!(
        client.job(&live).await["status"],
        "queued",
        "live jobs stay"
    );
    let left = |table: &str| {
        s.d1_count(&format!(
            "SELECT COUNT(*) AS n FROM {table} WHERE job_id IN ({})",
            finished
                .iter()
                .map(|i| format!("'{i}'"))
                .collect::<Vec<_>>()
                .join(",")
        ))
    };
    assert_eq!(left("job_attempts"), 0);
    assert_eq!(left("job_audit"), 0);
    assert_eq!(
        s.d1_count(&format!(
            "SELECT COUNT(*) AS n FROM idempotency_keys WHERE user_id = '{user}'"
        )),
        0
    );
    assert_eq!(
        s.d1_count("SELECT COUNT(*) AS n FROM metrics WHERE at = 1000"),
        0
    );
    assert!(
        s.r2_objects() + 13 <= objects_before,
        "the objects went: {} of {objects_before} left",
        s.r2_objects()
    );
    // What was billed stays billed: the rollup outlives the jobs.
    assert_eq!(usage(&s, user, 125, 115).await, before);
    let view = s.user(ADMIN).get_ok("/api/retention").await;
    assert_eq!(view["jobs_days"], 90);
    assert_eq!(view["blobs_days"], 30);
    assert!(
        view["last_run"].as_str().unwrap().starts_with("removed "),
        "{view}"
    );
    // The consistency check refuses days whose jobs retention may have taken.
    let (status, body) = s
        .user(ADMIN)
        .get(&format!(
            "/api/usage/rollups?from={}&to={}",
            day_of(now_ms() - 120 * DAY_MS),
            day_of(now_ms() - 100 * DAY_MS)
        ))
        .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("invalid_range")),
        "{body}"
    );
}

async fn objects_kept_shorter_than_jobs_go_first_and_the_result_answers_410(s: Arc<TestStack>) {
    let user = "ret-mid";
    let client = s.user(user);
    let id = client
        .submit_job(&json!({"prompt": "A month-old answer", "priority": "high", "max_tokens": 200, "output_config": {"effort": "low"}}))
        .await;
    client.job_reaches(&id, "completed", WAIT).await;
    let (status, _) = client.get_text(&format!("/jobs/{id}/result")).await;
    assert!(status.starts_with("text/"), "{status}");
    age(&s, user, 40).await;
    retain_all(&s).await;
    let job = client.job(&id).await;
    assert_eq!(job["status"], "completed", "the job stays 90 days");
    let (status, body) = client.get(&format!("/jobs/{id}/result")).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (410, Some("result_expired")),
        "{body}"
    );
    assert_eq!(
        s.d1_count(&format!(
            "SELECT COUNT(*) AS n FROM job_attempts WHERE job_id = '{id}'"
        )),
        0,
        "attempt logs are kept 10 days"
    );
    assert_eq!(usage(&s, user, 45, 35).await.0, 1);
}

async fn the_rollup_equals_a_scan_after_every_kind_of_write_and_a_rebuild_repairs_it(
    s: Arc<TestStack>,
) {
    let user = "ret-roll";
    let client = s.user(user);
    let done = client
        .submit_job(&json!({"prompt": "Counted", "priority": "high", "max_tokens": 200, "output_config": {"effort": "low"}, "tags": ["team=roll", "env=test"]}))
        .await;
    let failed = client
        .submit_job(&json!({"prompt": "Refused [[sim:400]]", "priority": "high", "max_tokens": 200, "output_config": {"effort": "low"}, "tags": ["team=roll"]}))
        .await;
    let canceled = client
        .submit_job(
            &json!({"prompt": "Never run", "priority": "bulk", "mode": "batch", "max_tokens": 200, "output_config": {"effort": "low"}}),
        )
        .await;
    client.job_reaches(&done, "completed", WAIT).await;
    client.job_reaches(&failed, "failed", WAIT).await;
    let (status, _) = client.cancel(&canceled).await;
    assert_eq!(status, 200);
    let (status, replay) = s
        .user(ADMIN)
        .post(&format!("/api/dlq/{failed}/replay"))
        .await;
    assert!(status == 200 || status == 202, "{status} {replay}");
    // The replay runs from the lane: its second refusal is counted when it has ended.
    let again = replay["replayed"][0]["job_id"]
        .as_str()
        .expect("the replay's job id");
    client.job_reaches(again, "failed", WAIT).await;
    let check = s.user(ADMIN).get_ok("/api/usage/rollups").await;
    assert_eq!(check["consistent"], true, "{check}");
    assert!(check["jobs"].as_i64().unwrap() >= 4, "{check}");
    let usage_rows = s.d1(&format!(
        "SELECT SUM(failures) AS failures, SUM(jobs) AS jobs FROM usage_days WHERE user_id = '{user}'"
    ));
    assert_eq!(usage_rows[0]["jobs"], 4, "{usage_rows:?}");
    // The replay of a refused request is refused again: two failures.
    assert_eq!(usage_rows[0]["failures"], 2, "{usage_rows:?}");
    // The tag rollup too: team=roll has the done job, the refused one and its replay (which
    // kept the tag), env=test the done job only.
    let tag_rows = s.d1(&format!(
        "SELECT tag, SUM(jobs) AS jobs, SUM(failures) AS failures FROM usage_tag_days \
         WHERE user_id = '{user}' GROUP BY tag ORDER BY tag"
    ));
    assert_eq!(tag_rows.len(), 2, "{tag_rows:?}");
    assert_eq!(
        (tag_rows[0]["tag"].as_str(), tag_rows[0]["jobs"].as_i64()),
        (Some("env=test"), Some(1))
    );
    assert_eq!(
        (
            tag_rows[1]["tag"].as_str(),
            tag_rows[1]["jobs"].as_i64(),
            tag_rows[1]["failures"].as_i64()
        ),
        (Some("team=roll"), Some(3), Some(2)),
        "{tag_rows:?}"
    );

    // A damaged rollup is found, named, and rebuilt from the jobs.
    s.d1_now(&format!(
        "UPDATE usage_days SET cost_micros = cost_micros + 7 WHERE user_id = '{user}'"
    ))
    .await;
    let check = s.user(ADMIN).get_ok("/api/usage/rollups").await;
    assert_eq!(check["consistent"], false, "{check}");
    let diff = &check["differences"][0];
    assert_eq!(diff["rollup"]["user_id"], user, "{check}");
    assert_eq!(
        diff["rollup"]["cost_micros"].as_i64().unwrap()
            - diff["scan"]["cost_micros"].as_i64().unwrap(),
        7
    );
    let rebuilt = s.user(ADMIN).post_ok("/api/usage/rollups/rebuild").await;
    assert!(rebuilt["groups"].as_u64().unwrap() >= 1, "{rebuilt}");
    let check = s.user(ADMIN).get_ok("/api/usage/rollups").await;
    assert_eq!(check["consistent"], true, "{check}");

    // The same for the tag rollup.
    s.d1_now(&format!(
        "UPDATE usage_tag_days SET cost_micros = cost_micros + 5 WHERE user_id = '{user}' AND tag = 'env=test'"
    ))
    .await;
    let check = s.user(ADMIN).get_ok("/api/usage/rollups").await;
    assert_eq!(check["consistent"], false, "{check}");
    assert_eq!(check["different_groups"], 1, "{check}");
    let diff = &check["differences"][0];
    assert_eq!(diff["rollup"]["tag"], "env=test", "{check}");
    assert_eq!(
        diff["rollup"]["cost_micros"].as_i64().unwrap()
            - diff["scan"]["cost_micros"].as_i64().unwrap(),
        5
    );
    s.user(ADMIN).post_ok("/api/usage/rollups/rebuild").await;
    let check = s.user(ADMIN).get_ok("/api/usage/rollups").await;
    assert_eq!(check["consistent"], true, "{check}");
}

async fn old_notes_of_batches_the_api_did_not_know_are_forgotten(s: Arc<TestStack>) {
    let now = now_ms();
    s.d1_now(&format!(
        "INSERT INTO heartbeats (name, at, detail) VALUES \
         ('batch_missing:msgbatch_old', {}, '404'), ('batch_missing:msgbatch_new', {now}, '404')",
        now - 3 * DAY_MS
    ))
    .await;
    retain_all(&s).await;
    let left = s
        .d1_now("SELECT name FROM heartbeats WHERE name LIKE 'batch_missing:%' ORDER BY name")
        .await;
    let names: Vec<&str> = left.iter().filter_map(|r| r["name"].as_str()).collect();
    assert_eq!(names, vec!["batch_missing:msgbatch_new"], "{left:?}");
}
