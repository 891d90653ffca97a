//! API suite: the Worker over HTTP on a real local stack (wrangler dev + anthropic-sim).

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use end2end::api::{assert_error, send_json};
use end2end::{eventually, run_suite, tests, TestStack};
use reqwest::Method;
use serde_json::Value;

fn main() -> ExitCode {
    run_suite(
        "api",
        tests![
            health_touches_every_binding_and_reports_them_ok,
            the_high_lane_consumer_handles_the_health_ping,
            the_cron_trigger_runs_the_scheduled_handler,
            the_durable_object_keeps_its_state_between_requests,
            open_mode_lets_x_user_id_name_the_caller,
            a_malformed_x_user_id_is_a_400_naming_the_header,
            an_unknown_bearer_key_is_a_401_even_in_open_mode,
            unknown_api_paths_are_a_json_404,
            a_wrong_method_is_a_json_405,
            the_spa_and_its_assets_are_served_with_deep_link_fallback,
        ],
    )
}

fn check<'a>(health: &'a Value, name: &str) -> &'a Value {
    health["checks"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("no {name} check in {health}"))
}

async fn health_touches_every_binding_and_reports_them_ok(s: Arc<TestStack>) {
    let (status, h) = s.anon().get("/api/health").await;
    assert_eq!(status, 200, "{h}");
    assert_eq!(h["ok"], true);
    for name in ["d1", "r2", "durable_object", "queue_high"] {
        assert_eq!(check(&h, name)["ok"], true, "{name}: {h}");
    }
    assert!(check(&h, "d1")["detail"]
        .as_str()
        .unwrap()
        .contains("jobs stored"));
    assert!(check(&h, "r2")["detail"]
        .as_str()
        .unwrap()
        .contains("read back"));
    assert_eq!(h["auth_mode"], "open");
    assert_eq!(h["anthropic"]["kind"], "simulator");
    assert_eq!(h["anthropic"]["base_url"], s.sim_url.as_str());
    assert_eq!(h["anthropic"]["key_configured"], true);
}

async fn the_high_lane_consumer_handles_the_health_ping(s: Arc<TestStack>) {
    let (_, h) = s.anon().get("/api/health").await;
    let sent = h["now"].as_i64().unwrap();
    let consumed = eventually("the ping is consumed", Duration::from_secs(30), || async {
        let (_, h) = s.anon().get("/api/health").await;
        h["queue_last_consumed_at"]
            .as_i64()
            .filter(|t| *t >= sent - 5_000)
    })
    .await;
    assert!(consumed > 0);
}

async fn the_cron_trigger_runs_the_scheduled_handler(s: Arc<TestStack>) {
    let (_, before) = s.anon().get("/api/health").await;
    let asked_at = before["now"].as_i64().unwrap();
    assert_eq!(s.cron().await, 200);
    let (_, after) = s.anon().get("/api/health").await;
    let ran = after["cron_last_run_at"].as_i64().expect("cron heartbeat");
    assert!(ran >= asked_at, "cron ran at {ran}, asked at {asked_at}");
}

async fn the_durable_object_keeps_its_state_between_requests(s: Arc<TestStack>) {
    let pings = |h: &Value| -> u64 {
        let detail = check(h, "durable_object")["detail"]
            .as_str()
            .unwrap()
            .to_owned();
        let json = detail.split_once(": ").map(|(_, j)| j).unwrap_or_default();
        serde_json::from_str::<Value>(json).unwrap()["pings"]
            .as_u64()
            .unwrap()
    };
    let (_, a) = s.anon().get("/api/health").await;
    let (_, b) = s.anon().get("/api/health").await;
    assert_eq!(pings(&b), pings(&a) + 1);
}

async fn open_mode_lets_x_user_id_name_the_caller(s: Arc<TestStack>) {
    let (status, h) = s.user("alice").get("/api/health").await;
    assert_eq!(status, 200);
    assert_eq!(h["user_id"], "alice");
    let (_, anon) = s.anon().get("/api/health").await;
    assert_eq!(anon["user_id"], "anonymous");
}

async fn a_malformed_x_user_id_is_a_400_naming_the_header(s: Arc<TestStack>) {
    let (status, body) = s.user("../root").get("/api/health").await;
    assert_error(status, &body, 400, "invalid_user_id");
    assert_eq!(body["field"], "x-user-id");
}

async fn an_unknown_bearer_key_is_a_401_even_in_open_mode(s: Arc<TestStack>) {
    let (status, body) = s.key(Some("cp_nope")).get("/api/health").await;
    assert_error(status, &body, 401, "unauthorized");
    let (status, body) = send_json(
        s.anon()
            .request(Method::GET, "/api/health")
            .header("authorization", "Basic Zm9vOmJhcg=="),
    )
    .await;
    assert_error(status, &body, 401, "unauthorized");
}

async fn unknown_api_paths_are_a_json_404(s: Arc<TestStack>) {
    let (status, body) = s.anon().get("/api/does-not-exist").await;
    assert_error(status, &body, 404, "not_found");
}

async fn a_wrong_method_is_a_json_405(s: Arc<TestStack>) {
    let (status, body) = s.anon().delete("/api/health").await;
    assert_error(status, &body, 405, "method_not_allowed");
}

async fn the_spa_and_its_assets_are_served_with_deep_link_fallback(s: Arc<TestStack>) {
    let index = s.anon().request(Method::GET, "/").send().await.unwrap();
    assert_eq!(index.status().as_u16(), 200);
    let html = index.text().await.unwrap();
    assert!(html.contains("<title>claude-pipeline</title>"), "{html}");
    for deep in ["/ui/jobs", "/ui/jobs/some-id", "/ui/dead-letters"] {
        let resp = s.anon().request(Method::GET, deep).send().await.unwrap();
        assert_eq!(resp.status().as_u16(), 200, "{deep}");
        assert_eq!(
            resp.text().await.unwrap(),
            html,
            "{deep} should serve index.html"
        );
    }
    // Every hashed asset index.html names is served with its type.
    for (ext, ctype) in [
        (".js", "javascript"),
        (".wasm", "application/wasm"),
        (".css", "text/css"),
    ] {
        let name = html
            .split('"')
            .find(|p| p.starts_with('/') && p.ends_with(ext))
            .unwrap_or_else(|| panic!("no {ext} in index.html"));
        let resp = s.anon().request(Method::GET, name).send().await.unwrap();
        assert_eq!(resp.status().as_u16(), 200, "{name}");
        let got = resp.headers()["content-type"].to_str().unwrap().to_owned();
        assert!(got.contains(ctype), "{name}: {got}");
    }
}
