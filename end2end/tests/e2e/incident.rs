//! Incident suite (issue 36, part 4): an admin acts on thousands of jobs by filter through
//! `POST /api/ops/bulk` — a dry run that counts first, then bounded slices (500 cancels or
//! expiries, 100 replays per request, each request a handful of D1 statements whatever the
//! backlog), an audit entry per request, and jobs outside the filter untouched.
//!
//! The backlogs are written straight into D1 (thousands of jobs through the API would be a load
//! test); their ids are shaped as the Worker issues them.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use end2end::batches::FIXTURE_ID_SQL;
use end2end::{tests, Client, Suite, TestStack};
use serde_json::{json, Value};

pub fn suite() -> Suite {
    end2end::suite_timed(
        "incident",
        end2end::StackConfig::vars(&[("DLQ_REPLAY_PER_S", "50")]),
        Duration::from_secs(240),
        tests![
            a_bulk_cancel_counts_first_then_acts_in_bounded_slices,
            dead_letters_replay_by_filter_a_slice_at_a_time,
            pause_and_expire_by_filter_and_what_is_refused,
        ],
    )
}

const NIGHTLY_TAG: u32 = 0xb01c;
const OTHER_TAG: u32 = 0xb01d;
const DEAD_TAG: u32 = 0xb01e;

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// `n` feedback jobs of `user` written into D1 with `status` and `extra` columns (`(name, SQL
/// value)`), batch-mode on the bulk lane unless `extra` names `lane` and `mode`; ids of
/// fixture `tag`.
async fn insert(
    s: &Arc<TestStack>,
    (tag, n): (u32, u64),
    user: &str,
    status: &str,
    extra: &[(&str, String)],
) {
    let mut extra = extra.to_vec();
    if !extra.iter().any(|(k, _)| *k == "lane") {
        extra.push(("lane", "'bulk'".into()));
        extra.push(("mode", "'batch'".into()));
    }
    let now = now_ms();
    let (names, values): (Vec<&str>, Vec<String>) =
        extra.iter().map(|(k, v)| (*k, v.clone())).unzip();
    let names = names.iter().map(|n| format!(", {n}")).collect::<String>();
    let values = values.iter().map(|v| format!(", {v}")).collect::<String>();
    s.d1_now(&format!(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < {n}) \
         INSERT INTO jobs (id, user_id, kind, status, model, input_text, attempts, \
         created_at, updated_at{names}) \
         SELECT printf('{FIXTURE_ID_SQL}', {tag}, i), '{user}', 'feedback', '{status}', \
         'claude-haiku-4-5', 'The export button does nothing ' || i, 0, {now} + i, \
         {now}{values} FROM n"
    ))
    .await;
}

async fn bulk(admin: &Client, body: Value) -> (u16, Value, u64) {
    let resp = admin
        .json_request(reqwest::Method::POST, "/api/ops/bulk", &body)
        .send()
        .await
        .expect("bulk");
    let status = resp.status().as_u16();
    let statements = resp
        .headers()
        .get("x-d1-statements")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let body: Value = resp.json().await.unwrap_or(Value::Null);
    (status, body, statements)
}

fn count(s: &TestStack, where_: &str) -> u64 {
    s.d1_count(&format!("SELECT COUNT(*) AS n FROM jobs WHERE {where_}"))
}

async fn a_bulk_cancel_counts_first_then_acts_in_bounded_slices(s: Arc<TestStack>) {
    let tags = |t: &str| ("tags", format!("'[\"{t}\"]'"));
    insert(
        &s,
        (NIGHTLY_TAG, 3_000),
        "nightly",
        "queued",
        &[tags("run=nightly")],
    )
    .await;
    insert(
        &s,
        (OTHER_TAG, 400),
        "nightly",
        "queued",
        &[tags("run=daily")],
    )
    .await;
    let admin = s.user("incident-admin");
    let filter = json!({"tag": "run=nightly", "user": "nightly"});
    let (status, dry, _) = bulk(&admin, json!({"action": "cancel", "filter": filter})).await;
    assert_eq!(status, 200, "{dry}");
    assert_eq!(
        (dry["dry_run"].as_bool(), dry["matched"].as_u64()),
        (Some(true), Some(3_000))
    );
    assert_eq!(dry["acted"], 0);
    assert_eq!(
        count(&s, "user_id = 'nightly' AND status = 'canceled'"),
        0,
        "a dry run acts on nothing"
    );
    let mut calls = 0;
    let mut acted = 0;
    loop {
        let body = json!({"action": "cancel", "filter": filter, "dry_run": false,
                          "reason": "the nightly run is not needed"});
        let (status, r, statements) = bulk(&admin, body).await;
        assert_eq!(status, 200, "{r}");
        let n = r["acted"].as_u64().unwrap();
        assert!(n <= 500, "a slice is at most 500: {r}");
        assert!(
            statements <= 6,
            "a slice is a few D1 statements, whatever the backlog: {statements}"
        );
        acted += n;
        calls += 1;
        if r["remaining"] == 0 {
            break;
        }
        assert!(calls < 10, "{r}");
    }
    assert_eq!((acted, calls), (3_000, 6));
    assert_eq!(
        count(&s, "user_id = 'nightly' AND status = 'canceled' AND error = 'the nightly run is not needed'"),
        3_000
    );
    assert_eq!(
        count(&s, "user_id = 'nightly' AND status = 'queued'"),
        400,
        "outside the filter"
    );
    let audit = admin.get_ok("/api/ops/bulk").await;
    let items = audit["items"].as_array().unwrap();
    assert_eq!(items.len(), 7, "one entry per request: {audit}");
    assert_eq!(items[6]["dry_run"], true);
    assert_eq!(items[0]["actor"], "incident-admin");
    // The rest, so nothing of this test is left to run.
    let (_, r, _) = bulk(
        &admin,
        json!({"action": "cancel", "filter": {"user": "nightly"}, "dry_run": false}),
    )
    .await;
    assert_eq!(r["acted"], 400, "{r}");
}

async fn dead_letters_replay_by_filter_a_slice_at_a_time(s: Arc<TestStack>) {
    let now = now_ms();
    let ended = |class: &str| {
        vec![
            ("error_class", format!("'{class}'")),
            (
                "error",
                "'retries exhausted after 6 attempts; the last: Anthropic API 529: Overloaded'"
                    .to_string(),
            ),
            ("completed_at", now.to_string()),
            // Replays run as their originals did: sync, on the high lane.
            ("lane", "'high'".to_string()),
            ("mode", "'sync'".to_string()),
        ]
    };
    insert(
        &s,
        (DEAD_TAG, 250),
        "outage-victim",
        "dead_lettered",
        &ended("overloaded"),
    )
    .await;
    insert(
        &s,
        (DEAD_TAG + 1, 20),
        "outage-victim",
        "dead_lettered",
        &ended("invalid_request"),
    )
    .await;
    let admin = s.user("incident-admin");
    let filter = json!({"user": "outage-victim", "error_class": "overloaded"});
    let (_, dry, _) = bulk(&admin, json!({"action": "replay", "filter": filter})).await;
    assert_eq!(dry["matched"], 250, "{dry}");
    let mut replayed = std::collections::HashSet::new();
    for expected in [100, 100, 50] {
        let (status, r, _) = bulk(
            &admin,
            json!({"action": "replay", "filter": filter, "dry_run": false}),
        )
        .await;
        assert_eq!(status, 200, "{r}");
        assert_eq!(r["acted"], expected, "{r}");
        for id in r["replayed"].as_array().unwrap() {
            assert!(
                replayed.insert(id.as_str().unwrap().to_owned()),
                "replayed once"
            );
        }
    }
    assert_eq!(replayed.len(), 250);
    let (_, r, _) = bulk(&admin, json!({"action": "replay", "filter": filter})).await;
    assert_eq!(r["matched"], 0, "nothing left to replay: {r}");
    assert_eq!(
        count(&s, "user_id = 'outage-victim' AND replayed_to IS NOT NULL"),
        250
    );
    assert_eq!(
        count(
            &s,
            "user_id = 'outage-victim' AND error_class = 'invalid_request' AND replayed_to IS NULL"
        ),
        20,
        "outside the filter"
    );
    // The replays run: a few of them complete.
    let u = s.user("outage-victim");
    let sample: Vec<String> = replayed.iter().take(5).cloned().collect();
    for id in &sample {
        u.feedback_reaches(id, "completed", Duration::from_secs(120), false)
            .await;
    }
}

async fn pause_and_expire_by_filter_and_what_is_refused(s: Arc<TestStack>) {
    let admin = s.user("incident-admin");
    let (status, r, _) = bulk(
        &admin,
        json!({"action": "pause", "filter": {"lane": "bulk"}, "dry_run": false}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    let pauses = admin.get_ok("/api/pauses").await;
    assert!(
        pauses["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["scope"] == "lane" && p["value"] == "bulk"),
        "{pauses}"
    );
    let (status, _) = admin.delete("/api/pauses/lane/bulk").await;
    assert_eq!(status, 200);
    insert(&s, (DEAD_TAG + 2, 30), "stale", "queued", &[]).await;
    let cutoff = now_ms() + 60_000;
    let filter = json!({"user": "stale", "created_to": cutoff});
    let (_, r, _) = bulk(
        &admin,
        json!({"action": "expire", "filter": filter, "dry_run": false}),
    )
    .await;
    assert_eq!(
        (r["matched"].as_u64(), r["acted"].as_u64()),
        (Some(30), Some(30)),
        "{r}"
    );
    assert_eq!(count(&s, "user_id = 'stale' AND status = 'expired'"), 30);
    for (body, field) in [
        (
            json!({"action": "pause", "filter": {"lane": "bulk", "user": "ann"}}),
            "filter",
        ),
        (json!({"action": "cancel", "filter": {}}), "filter"),
        (
            json!({"action": "cancel", "filter": {"status": ["completed"]}}),
            "filter.status",
        ),
        (json!({"action": "erase", "filter": {"user": "ann"}}), ""),
    ] {
        let (status, e, _) = bulk(&admin, body.clone()).await;
        assert_eq!(status, 400, "{body}: {e}");
        if !field.is_empty() {
            assert_eq!(e["field"], field, "{e}");
        }
    }
}
