//! Access suite, on a stack in keys mode (`AUTH_MODE=keys`, production's default): no key or a
//! bad or revoked key is a 401, users see and touch only their own work (someone else's id is a
//! 404), ops endpoints are admins' (403 for users), and keys are issued and revoked over HTTP and
//! from the command line.

use std::sync::Arc;
use std::time::Duration;

use end2end::api::{assert_error, send_json};
use end2end::browser::{
    check_text, check_visible, click, click_text, fill, find, screenshot, sign_in, Browser,
};
use end2end::{tests, StackConfig, Suite, TestStack};
use playwright_rs::expect;
use reqwest::Method;
use serde_json::{json, Value};

/// The stack's `METRICS_SCRAPE_TOKEN`.
const SCRAPE_TOKEN: &str = "scrape-me-4f1c";

pub fn suite() -> Suite {
    end2end::suite_with(
        "access",
        StackConfig::vars(&[
            ("AUTH_MODE", "keys"),
            ("METRICS_SCRAPE_TOKEN", SCRAPE_TOKEN),
        ]),
        tests![
            without_a_valid_key_every_route_is_a_401,
            a_command_line_admin_key_issues_and_revokes_keys_over_http,
            users_see_and_touch_only_their_own_work,
            ops_endpoints_are_for_admins_only,
            the_spa_signs_in_with_a_key_and_shows_admins_their_pages,
            each_role_sees_usage_and_an_admin_sees_charts_and_replays_a_dead_letter_in_the_spa,
        ],
    )
}

const ROUTES: &[(&str, &str)] = &[
    ("GET", "/api/health"),
    ("GET", "/jobs"),
    ("POST", "/jobs"),
    ("POST", "/feedback"),
    ("GET", "/api/feedback"),
    ("GET", "/batches"),
    ("GET", "/api/budget"),
    ("GET", "/api/keys"),
    ("POST", "/api/batches/poll"),
    ("GET", "/api/usage"),
    ("GET", "/api/usage.csv"),
    ("GET", "/api/metrics"),
    ("GET", "/api/usage/spenders"),
    ("GET", "/api/dlq"),
    ("POST", "/api/dlq/replay"),
];

async fn without_a_valid_key_every_route_is_a_401(s: Arc<TestStack>) {
    for key in [None, Some("cpk_not-a-key"), Some("")] {
        for (method, path) in ROUTES {
            let (status, body) = if *method == "GET" {
                s.key(key).get(path).await
            } else {
                s.key(key)
                    .post_json(path, &json!({"prompt": "x", "text": "x"}))
                    .await
            };
            assert_error(status, &body, 401, "unauthorized");
            let _ = body;
        }
    }
    // A malformed header is refused before any look-up; x-user-id means nothing in keys mode.
    let (status, body) = send_json(
        s.anon()
            .request(Method::GET, "/jobs")
            .header("authorization", "Basic YWxpY2U6c2VjcmV0")
            .header("x-user-id", "alice"),
    )
    .await;
    assert_error(status, &body, 401, "unauthorized");
}

async fn a_command_line_admin_key_issues_and_revokes_keys_over_http(s: Arc<TestStack>) {
    let admin = s.create_key("root", true);
    let (status, me) = s.key(Some(&admin)).get("/api/health").await;
    assert_eq!(status, 200, "{me}");
    assert_eq!(
        (me["user_id"].as_str(), me["role"].as_str()),
        (Some("root"), Some("admin"))
    );
    // Issue a user key over HTTP: shown once, works at once.
    let (status, created) = s
        .key(Some(&admin))
        .post_json("/api/keys", &json!({"user_id": "carol"}))
        .await;
    assert_eq!(status, 201, "{created}");
    let key = created["key"].as_str().unwrap().to_string();
    assert!(key.starts_with("cpk_"));
    let (status, me) = s.key(Some(&key)).get("/api/health").await;
    assert_eq!((status, me["user_id"].as_str()), (200, Some("carol")));
    assert_eq!(me["role"], "user");
    // A user learns the service is up, not how it is wired; an admin gets the details.
    assert_eq!(me["ok"], true);
    for detail in ["checks", "anthropic", "cron_last_run_at"] {
        assert!(
            me.get(detail).is_none_or(Value::is_null),
            "{detail} is for admins: {me}"
        );
    }
    let (_, full) = s.key(Some(&admin)).get("/api/health").await;
    assert!(
        full["checks"].as_array().is_some_and(|c| c.len() >= 4),
        "{full}"
    );
    // The list shows it without the key.
    let (_, list) = s.key(Some(&admin)).get("/api/keys").await;
    let text = list.to_string();
    assert!(text.contains("carol") && !text.contains(&key), "{list}");
    // Bad requests are 400s.
    let (status, body) = s
        .key(Some(&admin))
        .post_json("/api/keys", &json!({"user_id": "a b"}))
        .await;
    assert_error(status, &body, 400, "invalid_field");
    // Revoked: 401 from then on.
    let id = created["id"].as_str().unwrap();
    let (status, revoked) = s.key(Some(&admin)).delete(&format!("/api/keys/{id}")).await;
    assert_eq!(status, 200, "{revoked}");
    assert!(revoked["revoked_at"].is_i64());
    let (status, body) = s.key(Some(&key)).get("/jobs").await;
    assert_error(status, &body, 401, "unauthorized");
    let (status, body) = s.key(Some(&admin)).delete("/api/keys/key_nope").await;
    assert_error(status, &body, 404, "not_found");
}

async fn users_see_and_touch_only_their_own_work(s: Arc<TestStack>) {
    let ann = s.issue_key("ann", false).await;
    let ben = s.issue_key("ben", false).await;
    let (status, ack) = s
        .key(Some(&ann))
        .post_json("/jobs", &json!({"prompt": "Ann's job", "priority": "bulk"}))
        .await;
    assert_eq!(status, 202, "{ack}");
    let job = ack["jobId"].as_str().unwrap().to_string();
    let (status, fb) = s
        .key(Some(&ann))
        .post_json("/feedback", &json!({"text": "Ann's feedback"}))
        .await;
    assert_eq!(status, 202, "{fb}");
    let feedback = fb["id"].as_str().unwrap().to_string();
    // Ann sees hers.
    assert_eq!(s.key(Some(&ann)).get(&format!("/jobs/{job}")).await.0, 200);
    assert_eq!(
        s.key(Some(&ann))
            .get(&format!("/api/feedback/{feedback}"))
            .await
            .0,
        200
    );
    // Ben gets 404s — not 403s — for every one of them, and empty lists.
    for path in [
        format!("/jobs/{job}"),
        format!("/jobs/{job}/result"),
        format!("/api/feedback/{feedback}"),
    ] {
        let (status, body) = s.key(Some(&ben)).get(&path).await;
        assert_error(status, &body, 404, "not_found");
    }
    let (status, body) = s
        .key(Some(&ben))
        .post_json(&format!("/jobs/{job}/cancel"), &json!({}))
        .await;
    assert_error(status, &body, 404, "not_found");
    let (_, list) = s.key(Some(&ben)).get("/jobs").await;
    assert_eq!(list["items"], json!([]));
    // Ann can cancel her own.
    let (status, j) = s
        .key(Some(&ann))
        .post_json(&format!("/jobs/{job}/cancel"), &json!({}))
        .await;
    assert_eq!(
        (status, j["status"].as_str()),
        (200, Some("canceled")),
        "{j}"
    );
}

async fn ops_endpoints_are_for_admins_only(s: Arc<TestStack>) {
    let user = s.issue_key("dora", false).await;
    let admin = s.issue_key("ops", true).await;
    for (method, path) in [
        ("GET", "/api/budget"),
        ("GET", "/api/keys"),
        ("POST", "/api/keys"),
        ("POST", "/api/batches/poll"),
        ("POST", "/api/batches/flush"),
        ("GET", "/api/metrics"),
        ("GET", "/api/dlq"),
        ("GET", "/api/usage?user=someone-else"),
        ("GET", "/api/usage/spenders"),
        ("GET", "/api/pauses"),
        ("POST", "/api/dlq/replay"),
        ("GET", "/api/usage/rollups"),
        ("POST", "/api/usage/rollups/rebuild"),
        ("GET", "/api/retention"),
        ("POST", "/api/retention/run"),
    ] {
        let (status, body) = if method == "GET" {
            s.key(Some(&user)).get(path).await
        } else {
            s.key(Some(&user))
                .post_json(path, &json!({"user_id": "x"}))
                .await
        };
        assert_error(status, &body, 403, "forbidden");
        let (status, body) = if method == "GET" {
            s.key(Some(&admin)).get(path).await
        } else if path == "/api/keys" {
            s.key(Some(&admin))
                .post_json(path, &json!({"user_id": "x"}))
                .await
        } else {
            s.key(Some(&admin)).post_json(path, &json!({})).await
        };
        assert!(
            (200..=202).contains(&status),
            "{path} as admin: {status} {body}"
        );
    }
    let (_, me) = s.key(Some(&user)).get("/api/health").await;
    assert_eq!(me["role"], "user");
    // The CSVs of the ops side too (they answer text, not JSON, to admins).
    for path in ["/api/usage/spenders.csv", "/api/metrics/prometheus"] {
        let (status, body) = s.key(Some(&user)).get(path).await;
        assert_error(status, &body, 403, "forbidden");
        let (ctype, _) = s.key(Some(&admin)).get_text(path).await;
        assert!(ctype.starts_with("text/"), "{path} as admin: {ctype}");
    }
    // Pausing and resuming are admins' too.
    let (status, body) = s
        .key(Some(&user))
        .put_json("/api/pauses", &json!({"scope": "lane", "value": "bulk"}))
        .await;
    assert_error(status, &body, 403, "forbidden");
    let (status, body) = s.key(Some(&user)).delete("/api/pauses/lane/bulk").await;
    assert_error(status, &body, 403, "forbidden");
    // A scraper's token opens the Prometheus endpoint, and nothing else.
    let (ctype, text) = s
        .key(Some(SCRAPE_TOKEN))
        .get_text("/api/metrics/prometheus")
        .await;
    assert!(ctype.starts_with("text/plain; version=0.0.4"), "{ctype}");
    assert!(text.contains("# TYPE claude_pipeline_jobs gauge"), "{text}");
    let (status, body) = s.key(Some(SCRAPE_TOKEN)).get("/api/metrics").await;
    assert_error(status, &body, 401, "unauthorized");
    let (status, body) = s
        .key(Some("not-the-token"))
        .get("/api/metrics/prometheus")
        .await;
    assert_error(status, &body, 401, "unauthorized");
    // Per-job triage and budgets: 403 for users whatever the id; admins get past the check.
    for path in [
        "/api/dlq/0123456789abcdef/replay",
        "/api/dlq/0123456789abcdef/discard",
    ] {
        let (status, body) = s.key(Some(&user)).post_json(path, &json!({})).await;
        assert_error(status, &body, 403, "forbidden");
        let (status, body) = s.key(Some(&admin)).post_json(path, &json!({})).await;
        assert_error(status, &body, 404, "not_found");
    }
    let put_budget = |key: &str| {
        let client = s.key(Some(key));
        async move {
            client
                .put_json(
                    "/api/usage/budget",
                    &json!({"user_id": "dora", "daily_cap_micros": 5}),
                )
                .await
        }
    };
    let (status, body) = put_budget(&user).await;
    assert_error(status, &body, 403, "forbidden");
    let (status, body) = put_budget(&admin).await;
    assert_eq!(status, 200, "{body}");
    // A user's own usage is theirs (the cap just set is shown); naming themselves is fine.
    let (status, usage) = s.key(Some(&user)).get("/api/usage?user=dora").await;
    assert_eq!(
        (status, usage["user_id"].as_str()),
        (200, Some("dora")),
        "{usage}"
    );
    assert_eq!(usage["budget"]["daily_cap_micros"], 5);
    let (status, usage) = s.key(Some(&admin)).get("/api/usage?user=dora").await;
    assert_eq!((status, usage["user_id"].as_str()), (200, Some("dora")));
}

async fn the_spa_signs_in_with_a_key_and_shows_admins_their_pages(s: Arc<TestStack>) {
    let user = s.issue_key("erin", false).await;
    let admin = s.issue_key("frank", true).await;
    let browser = Browser::launch(&s, "sign-in").await;
    let page = browser.open(&s.url("/")).await;
    // No key yet: the Worker refuses, the SPA offers the way in.
    click(&page, "sign-in-link").await;
    check_visible(&page, "page-sign-in").await;
    fill(&page, "api-key", "cpk_wrong").await;
    click(&page, "sign-in").await;
    check_text(&page, "sign-in-error", "unknown or revoked API key").await;
    // A user: signed in, no ops pages in the navigation.
    fill(&page, "api-key", &user).await;
    click(&page, "sign-in").await;
    check_text(&page, "signed-in", "erin (user)").await;
    assert_eq!(
        find(&page, "nav")
            .locator("text=Dashboard")
            .count()
            .await
            .unwrap(),
        0,
        "users do not see the ops pages"
    );
    screenshot(&page, &s, "signed-in-user").await;
    // Signing out forgets the key; an admin sees the ops pages.
    click(&page, "sign-out").await;
    check_visible(&page, "page-sign-in").await;
    fill(&page, "api-key", &admin).await;
    click(&page, "sign-in").await;
    check_text(&page, "signed-in", "frank (admin)").await;
    check_text(&page, "nav", "Dashboard").await;
    browser.close().await;
}

async fn each_role_sees_usage_and_an_admin_sees_charts_and_replays_a_dead_letter_in_the_spa(
    s: Arc<TestStack>,
) {
    let user = s.issue_key("gina", false).await;
    let admin = s.issue_key("hank", true).await;
    // Gina's work: a job that completes, and one the simulator overloads six times (dead letter).
    let (_, ack) = s.key(Some(&user)).post_json("/jobs", &json!({"prompt": "Gina's weekly report", "priority": "high", "max_tokens": 40, "output_config": {"effort": "low"}, "tags": ["team=reports"]}))
    .await;
    let done = ack["jobId"].as_str().unwrap().to_string();
    let (_, ack) = s.key(Some(&user)).post_json("/jobs", &json!({"prompt": "Gina's flaky job [[sim:529x6]]", "priority": "high", "max_tokens": 40, "output_config": {"effort": "low"}}))
    .await;
    let dead = ack["jobId"].as_str().unwrap().to_string();
    let gina = s.key(Some(&user));
    gina.job_reaches(&done, "completed", Duration::from_secs(120))
        .await;
    gina.job_reaches(&dead, "dead_lettered", Duration::from_secs(120))
        .await;
    let (_, usage) = s.key(Some(&user)).get("/api/usage").await;
    let cost = format!(
        "${}",
        pipeline::money::UsdMicros::new(usage["totals"]["cost_micros"].as_u64().unwrap()).dollars()
    );
    // Two cron runs: the metrics series has points to draw.
    for _ in 0..2 {
        s.cron().await;
    }

    let browser = Browser::launch(&s, "ops-pages").await;
    let page = browser.open(&s.url("/")).await;
    // The user: their usage, with the chart (one bar per day) and the same total as the API.
    sign_in(&page, &user).await;
    click_text(&page, "nav", "Usage").await;
    check_visible(&page, "usage-chart").await;
    check_text(&page, "usage-total-cost", &cost).await;
    check_text(&page, "usage-total-jobs", "2").await;
    assert_eq!(find(&page, "usage-bar").count().await.unwrap(), 30);
    assert_eq!(
        find(&page, "usage-user").count().await.unwrap(),
        0,
        "users cannot pick another user"
    );
    screenshot(&page, &s, "usage-user").await;
    click(&page, "sign-out").await;

    // The admin: the dashboard's charts, then the dead letter replayed to completion.
    sign_in(&page, &admin).await;
    click_text(&page, "nav", "Dashboard").await;
    for chart in [
        "chart-latency",
        "chart-batch-latency",
        "chart-throughput",
        "chart-tokens",
        "chart-failures",
    ] {
        check_visible(&page, chart).await;
    }
    let lines = find(&page, "chart-latency")
        .locator("polyline")
        .count()
        .await
        .unwrap();
    assert!(lines >= 3, "p50, p95 and p99 are drawn ({lines})");
    // The two paths, each judged by its own SLOs.
    check_visible(&page, "path-sync").await;
    check_visible(&page, "path-batch").await;
    expect(find(&page, "path-sync").locator("[data-metric=p95_end_to_end_ms]"))
        .to_contain_text("p95 SLO 2.0 s")
        .await
        .expect("the sync panel shows its p95 against the test profile's SLO");
    expect(find(&page, "path-batch").locator("[data-metric=oldest_accumulating_ms]"))
        .to_contain_text("flush at 3.0 s")
        .await
        .expect("the batch panel shows the flush age");
    check_text(&page, "kpi-dead-letters", "1").await;
    screenshot(&page, &s, "dashboard-admin").await;
    click_text(&page, "nav", "Dead letters").await;
    let item = page.locator(format!("[data-testid=dlq-item][data-id='{dead}']"));
    expect(item.clone())
        .with_timeout(end2end::browser::CHECK_TIMEOUT)
        .to_be_visible()
        .await
        .unwrap_or_else(|e| panic!("the dead letter {dead} is listed: {e}"));
    expect(item.clone())
        .to_contain_text("overloaded")
        .await
        .expect("its error class is shown");
    screenshot(&page, &s, "dead-letters-admin").await;
    item.get_by_test_id("dlq-replay")
        .click(None)
        .await
        .expect("click replay");
    check_visible(&page, "dlq-replayed").await;
    // The row follows its replay (the page refreshes while it runs) to the end.
    expect(item.get_by_test_id("dlq-replay-status"))
        .with_timeout(Duration::from_secs(60))
        .to_contain_text("completed")
        .await
        .unwrap_or_else(|e| panic!("the replay of {dead} completes: {e}"));
    screenshot(&page, &s, "replayed-dead-letter").await;
    // Gina sees the replay among her jobs, completed.
    let (_, jobs) = s.key(Some(&user)).get("/jobs").await;
    let replay = jobs["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["id"] != done.as_str() && j["id"] != dead.as_str())
        .cloned()
        .expect("the replay is Gina's job");
    assert_eq!(replay["status"], "completed", "{replay}");
    // Who spends what: Gina among the spenders at what her own usage says; her name opens it.
    let (_, usage) = s.key(Some(&user)).get("/api/usage").await;
    let spent = format!(
        "${}",
        pipeline::money::UsdMicros::new(usage["totals"]["cost_micros"].as_u64().unwrap()).dollars()
    );
    click_text(&page, "nav", "Usage").await;
    let row = page.locator("[data-testid=spender-row][data-user=gina]");
    expect(row.clone())
        .with_timeout(end2end::browser::CHECK_TIMEOUT)
        .to_contain_text(spent.as_str())
        .await
        .unwrap_or_else(|e| panic!("Gina is among the spenders at {spent}: {e}"));
    screenshot(&page, &s, "spenders-admin").await;
    // Cost by tag, every user's (an admin): the tag of Gina's report at what the API says.
    let (_, tags) = s.key(Some(&admin)).get("/api/usage/tags").await;
    let tagged = tags["tags"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tag"] == "team=reports")
        .unwrap_or_else(|| panic!("team=reports in {tags}"));
    let tag_cost = format!(
        "${}",
        pipeline::money::UsdMicros::new(tagged["cost_micros"].as_u64().unwrap()).dollars()
    );
    expect(page.locator("[data-testid=tag-row][data-tag='team=reports']"))
        .with_timeout(end2end::browser::CHECK_TIMEOUT)
        .to_contain_text(tag_cost.as_str())
        .await
        .unwrap_or_else(|e| panic!("the tag row shows {tag_cost}: {e}"));
    check_text(&page, "tags-whose", "Every user").await;
    screenshot(&page, &s, "tags-admin").await;
    row.get_by_test_id("spender-user")
        .click(None)
        .await
        .expect("click Gina's name");
    check_text(&page, "usage-total-cost", &spent).await;
    browser.close().await;
}
