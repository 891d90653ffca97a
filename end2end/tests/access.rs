//! Access suite, on a stack in keys mode (`AUTH_MODE=keys`, production's default): no key or a
//! bad or revoked key is a 401, users see and touch only their own work (someone else's id is a
//! 404), ops endpoints are admins' (403 for users), and keys are issued and revoked over HTTP and
//! from the command line.

use std::process::ExitCode;
use std::sync::Arc;

use end2end::api::{assert_error, client, send_json};
use end2end::browser::{check_text, check_visible, click, fill, find, screenshot, Browser};
use end2end::{run_suite_with, tests, TestStack};
use serde_json::{json, Value};

fn main() -> ExitCode {
    run_suite_with(
        "access",
        sim::Knobs::default(),
        vec![("AUTH_MODE".into(), "keys".into())],
        tests![
            without_a_valid_key_every_route_is_a_401,
            a_command_line_admin_key_issues_and_revokes_keys_over_http,
            users_see_and_touch_only_their_own_work,
            ops_endpoints_are_for_admins_only,
            the_spa_signs_in_with_a_key_and_shows_admins_their_pages,
        ],
    )
}

fn with_key(rb: reqwest::RequestBuilder, key: &str) -> reqwest::RequestBuilder {
    rb.header("authorization", format!("Bearer {key}"))
}

async fn get(s: &TestStack, path: &str, key: Option<&str>) -> (u16, Value) {
    let rb = client().get(s.url(path));
    send_json(match key {
        Some(k) => with_key(rb, k),
        None => rb,
    })
    .await
}

async fn post(s: &TestStack, path: &str, key: Option<&str>, body: Value) -> (u16, Value) {
    let rb = client()
        .post(s.url(path))
        .header("content-type", "application/json")
        .body(body.to_string());
    send_json(match key {
        Some(k) => with_key(rb, k),
        None => rb,
    })
    .await
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
];

async fn without_a_valid_key_every_route_is_a_401(s: Arc<TestStack>) {
    for key in [None, Some("cpk_not-a-key"), Some("")] {
        for (method, path) in ROUTES {
            let (status, body) = if *method == "GET" {
                get(&s, path, key).await
            } else {
                post(&s, path, key, json!({"prompt": "x", "text": "x"})).await
            };
            assert_error(status, &body, 401, "unauthorized");
            let _ = body;
        }
    }
    // A malformed header is refused before any look-up; x-user-id means nothing in keys mode.
    let (status, body) = send_json(
        client()
            .get(s.url("/jobs"))
            .header("authorization", "Basic YWxpY2U6c2VjcmV0")
            .header("x-user-id", "alice"),
    )
    .await;
    assert_error(status, &body, 401, "unauthorized");
}

async fn a_command_line_admin_key_issues_and_revokes_keys_over_http(s: Arc<TestStack>) {
    let admin = s.create_key("root", true);
    let (status, me) = get(&s, "/api/health", Some(&admin)).await;
    assert_eq!(status, 200, "{me}");
    assert_eq!(
        (me["user_id"].as_str(), me["role"].as_str()),
        (Some("root"), Some("admin"))
    );
    // Issue a user key over HTTP: shown once, works at once.
    let (status, created) = post(&s, "/api/keys", Some(&admin), json!({"user_id": "carol"})).await;
    assert_eq!(status, 201, "{created}");
    let key = created["key"].as_str().unwrap().to_string();
    assert!(key.starts_with("cpk_"));
    let (status, me) = get(&s, "/api/health", Some(&key)).await;
    assert_eq!((status, me["user_id"].as_str()), (200, Some("carol")));
    assert_eq!(me["role"], "user");
    // The list shows it without the key.
    let (_, list) = get(&s, "/api/keys", Some(&admin)).await;
    let text = list.to_string();
    assert!(text.contains("carol") && !text.contains(&key), "{list}");
    // Bad requests are 400s.
    let (status, body) = post(&s, "/api/keys", Some(&admin), json!({"user_id": "a b"})).await;
    assert_error(status, &body, 400, "invalid_field");
    // Revoked: 401 from then on.
    let id = created["id"].as_str().unwrap();
    let (status, revoked) = send_json(with_key(
        client().delete(s.url(&format!("/api/keys/{id}"))),
        &admin,
    ))
    .await;
    assert_eq!(status, 200, "{revoked}");
    assert!(revoked["revoked_at"].is_i64());
    let (status, body) = get(&s, "/jobs", Some(&key)).await;
    assert_error(status, &body, 401, "unauthorized");
    let (status, body) = send_json(with_key(
        client().delete(s.url("/api/keys/key_nope")),
        &admin,
    ))
    .await;
    assert_error(status, &body, 404, "not_found");
}

async fn users_see_and_touch_only_their_own_work(s: Arc<TestStack>) {
    let ann = s.create_key("ann", false);
    let ben = s.create_key("ben", false);
    let (status, ack) = post(
        &s,
        "/jobs",
        Some(&ann),
        json!({"prompt": "Ann's job", "priority": "bulk"}),
    )
    .await;
    assert_eq!(status, 202, "{ack}");
    let job = ack["jobId"].as_str().unwrap().to_string();
    let (status, fb) = post(
        &s,
        "/feedback",
        Some(&ann),
        json!({"text": "Ann's feedback"}),
    )
    .await;
    assert_eq!(status, 202, "{fb}");
    let feedback = fb["id"].as_str().unwrap().to_string();
    // Ann sees hers.
    assert_eq!(get(&s, &format!("/jobs/{job}"), Some(&ann)).await.0, 200);
    assert_eq!(
        get(&s, &format!("/api/feedback/{feedback}"), Some(&ann))
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
        let (status, body) = get(&s, &path, Some(&ben)).await;
        assert_error(status, &body, 404, "not_found");
    }
    let (status, body) = post(&s, &format!("/jobs/{job}/cancel"), Some(&ben), json!({})).await;
    assert_error(status, &body, 404, "not_found");
    let (_, list) = get(&s, "/jobs", Some(&ben)).await;
    assert_eq!(list["items"], json!([]));
    // Ann can cancel her own.
    let (status, j) = post(&s, &format!("/jobs/{job}/cancel"), Some(&ann), json!({})).await;
    assert_eq!(
        (status, j["status"].as_str()),
        (200, Some("canceled")),
        "{j}"
    );
}

async fn ops_endpoints_are_for_admins_only(s: Arc<TestStack>) {
    let user = s.create_key("dora", false);
    let admin = s.create_key("ops", true);
    for (method, path) in [
        ("GET", "/api/budget"),
        ("GET", "/api/keys"),
        ("POST", "/api/keys"),
        ("POST", "/api/batches/poll"),
        ("POST", "/api/batches/flush"),
    ] {
        let (status, body) = if method == "GET" {
            get(&s, path, Some(&user)).await
        } else {
            post(&s, path, Some(&user), json!({"user_id": "x"})).await
        };
        assert_error(status, &body, 403, "forbidden");
        let (status, body) = if method == "GET" {
            get(&s, path, Some(&admin)).await
        } else if path == "/api/keys" {
            post(&s, path, Some(&admin), json!({"user_id": "x"})).await
        } else {
            post(&s, path, Some(&admin), json!({})).await
        };
        assert!(
            status == 200 || status == 201,
            "{path} as admin: {status} {body}"
        );
    }
    let (_, me) = get(&s, "/api/health", Some(&user)).await;
    assert_eq!(me["role"], "user");
}

async fn the_spa_signs_in_with_a_key_and_shows_admins_their_pages(s: Arc<TestStack>) {
    let user = s.create_key("erin", false);
    let admin = s.create_key("frank", true);
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
