//! API suite: the Worker over HTTP on a real local stack (wrangler dev + anthropic-sim).

use std::sync::Arc;
use std::time::Duration;

use end2end::api::{assert_error, send_json};
use end2end::{eventually, tests, Suite, TestStack};
use reqwest::Method;
use serde_json::Value;

pub fn suite() -> Suite {
    end2end::suite(
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
            open_mode_refuses_a_write_a_web_page_could_send,
            open_mode_serves_loopback_hosts_only,
            answers_and_pages_carry_security_headers,
            hashed_assets_are_kept_a_year_and_pages_are_revalidated,
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
    assert_eq!(h["anthropic"]["files_api"], true);
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
    // Every page is its own shell (`app::shell`) under the same head and files, but for the
    // GETs its first draw makes (`<script id="first-gets">`, its own); a job's own page gets
    // the frame; a path no page has gets index.html, and the SPA says not found.
    let head = |h: &str| h[..h.find("<body").unwrap()].to_owned();
    let first_gets = |h: &str| {
        let open = r#"<script type="application/json" id="first-gets">"#;
        let at = h.find(open).expect("a first-gets plan in the head") + open.len();
        let len = h[at..].find("</script>").unwrap();
        (
            h[at..at + len].to_owned(),
            format!("{}{}", &h[..at], &h[at + len..]),
        )
    };
    let (_, index_rest) = first_gets(&head(&html));
    for (deep, shell, asks) in [
        ("/ui/jobs", "data-shell=\"/ui/jobs\"", "/jobs?limit=50"),
        (
            "/ui/dead-letters",
            "data-shell=\"/ui/dead-letters\"",
            "/api/dlq?status=dead_lettered&limit=50",
        ),
        ("/ui/jobs/some-id", "data-shell=\"\"", "/api/health"),
        (
            "/ui/no-such-page",
            "data-shell=\"/\"",
            "/api/feedback?limit=20",
        ),
    ] {
        let resp = s.anon().request(Method::GET, deep).send().await.unwrap();
        assert_eq!(resp.status().as_u16(), 200, "{deep}");
        let page = resp.text().await.unwrap();
        let (plan, rest) = first_gets(&head(&page));
        assert_eq!(rest, index_rest, "{deep}: the same head and files");
        let plan: serde_json::Value = serde_json::from_str(&plan).expect("the plan is JSON");
        let urls = plan["urls"].as_array().expect("the plan's urls");
        assert!(
            urls.iter().any(|u| u == asks),
            "{deep} should ask {asks}: {plan}"
        );
        assert!(page.contains(shell), "{deep} should carry {shell}");
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

/// A plain client, without the `X-Requested-With` the test client always sends: what a web page's
/// form or a "simple" `fetch` looks like to the Worker.
fn page_like() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

async fn open_mode_refuses_a_write_a_web_page_could_send(s: Arc<TestStack>) {
    let page = page_like();
    let poll = s.url("/api/batches/poll");
    // A form post: no JSON, no client header.
    let form = page
        .post(&poll)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("a=1");
    let (status, e) = send_json(form).await;
    assert_error(status, &e, 403, "forbidden");
    assert!(
        e["error"].as_str().unwrap().contains("x-requested-with"),
        "{e}"
    );
    // Another site's page, whatever it carries.
    let cross = page
        .post(s.url("/jobs"))
        .header("content-type", "application/json")
        .header("x-requested-with", "x")
        .header("origin", "https://evil.example")
        .body(r#"{"prompt":"spend my money"}"#);
    let (status, e) = send_json(cross).await;
    assert_error(status, &e, 403, "forbidden");
    let fetched = page
        .post(s.url("/jobs"))
        .header("content-type", "application/json")
        .header("sec-fetch-site", "cross-site")
        .body(r#"{"prompt":"spend my money"}"#);
    let (status, e) = send_json(fetched).await;
    assert_error(status, &e, 403, "forbidden");
    // Nothing was made.
    let (_, jobs) = s.anon().get("/jobs").await;
    assert!(
        jobs["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|j| j["status"] != "queued" || j["kind"] != "prompt"),
        "{jobs}"
    );
    // A client says so, and a JSON body from the same origin needs nothing more.
    let (status, _) = send_json(page.post(&poll).header("x-requested-with", "curl")).await;
    assert_eq!(status, 200);
    let same_origin = page
        .post(s.url("/api/batches/poll"))
        .header("content-type", "application/json")
        .header("origin", s.base_url.as_str())
        .header("sec-fetch-site", "same-origin")
        .body("{}");
    let (status, body) = send_json(same_origin).await;
    assert_eq!(status, 200, "{body}");
}

async fn open_mode_serves_loopback_hosts_only(s: Arc<TestStack>) {
    // A deployed Worker left in open mode: reached by a public name.
    let deployed = page_like()
        .get(s.url("/api/health"))
        .header("host", "claude-pipeline.example.workers.dev");
    let (status, e) = send_json(deployed).await;
    assert_error(status, &e, 503, "open_mode_not_local");
    assert!(
        e["error"].as_str().unwrap().contains("AUTH_MODE=keys"),
        "{e}"
    );
    let (status, _) = send_json(page_like().get(s.url("/api/health"))).await;
    assert_eq!(status, 200, "loopback is served");
}

/// The hashed names a page or script refers to: `/<stem>-<16 hex>.<ext>`, or `./…` in a
/// script at the root.
fn hashed_names(text: &str) -> Vec<String> {
    text.split(['"', '\'', ' ', '(', ')'])
        .filter_map(|w| w.strip_prefix("./").or_else(|| w.strip_prefix('/')))
        .filter(|w| {
            w.rsplit_once('.').is_some_and(|(stem, _)| {
                stem.rsplit_once('-')
                    .is_some_and(|(_, h)| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()))
            })
        })
        .map(|w| format!("/{w}"))
        .collect()
}

async fn hashed_assets_are_kept_a_year_and_pages_are_revalidated(s: Arc<TestStack>) {
    let client = page_like();
    let page = client.get(s.url("/")).send().await.unwrap();
    let cache = |h: &reqwest::header::HeaderMap| {
        h.get("cache-control")
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default()
    };
    let page_cache = cache(page.headers());
    assert!(!page_cache.contains("immutable"), "the shell: {page_cache}");
    let html = page.text().await.unwrap();
    // The Dashboard's shell loads the Dashboard's own bundle.
    let dashboard = client.get(s.url("/ui/dashboard")).send().await.unwrap();
    assert!(!cache(dashboard.headers()).contains("immutable"));
    let dashboard = dashboard.text().await.unwrap();
    let mut names = hashed_names(&html);
    names.extend(hashed_names(&dashboard));
    // The scripts name the rest: boot.js the bundle's JS and wasm, the Dashboard's JS the
    // loader of its split, the loader its chunk.
    let mut read = Vec::new();
    while let Some(js) = names
        .iter()
        .find(|n| n.ends_with(".js") && !read.contains(*n))
        .cloned()
    {
        let text = client
            .get(s.url(&js))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        names.extend(hashed_names(&text));
        read.push(js);
    }
    names.sort();
    names.dedup();
    let boots = names.iter().filter(|n| n.starts_with("/boot-"));
    assert_eq!(boots.count(), 2, "one boot.js per bundle: {names:?}");
    for stem in [
        "/app_bg-",
        "/app-",
        "/dashboard_bg-",
        "/dashboard-",
        "/dashboard_split-",
        "/dashboard_split_",
        "/boot-",
        "/style-",
    ] {
        assert!(
            names.iter().any(|n| n.starts_with(stem)),
            "{stem}: {names:?}"
        );
    }
    assert!(
        hashed_names(&dashboard)
            .iter()
            .all(|n| !n.starts_with("/app")),
        "the Dashboard's shell names none of the whole app's files"
    );
    for name in &names {
        let r = client.get(s.url(name)).send().await.unwrap();
        assert_eq!(r.status(), 200, "{name}");
        let c = cache(r.headers());
        assert!(
            c.contains("max-age=31536000") && c.contains("immutable") && !c.contains("max-age=0"),
            "{name}: {c}"
        );
    }
    // The pages, the frame a job's own page gets included: revalidated on every visit.
    for path in ["/ui/jobs", "/index.html", "/ui/jobs/0193a7b2-frame"] {
        let r = client.get(s.url(path)).send().await.unwrap();
        let c = cache(r.headers());
        assert!(!c.contains("immutable"), "{path}: {c}");
    }
}

async fn answers_and_pages_carry_security_headers(s: Arc<TestStack>) {
    let client = page_like();
    for path in ["/api/health", "/api/nope", "/jobs"] {
        let r = client.get(s.url(path)).send().await.unwrap();
        let h = r.headers();
        assert_eq!(h["x-content-type-options"], "nosniff", "{path}");
        assert_eq!(h["x-frame-options"], "DENY", "{path}");
        assert_eq!(h["referrer-policy"], "no-referrer", "{path}");
        let csp = h["content-security-policy"].to_str().unwrap();
        assert!(
            csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"),
            "{path}: {csp}"
        );
    }
    for path in ["/", "/ui/jobs", "/ui/dashboard"] {
        let r = client.get(s.url(path)).send().await.unwrap();
        assert_eq!(r.status(), 200, "{path}");
        let h = r.headers().clone();
        let csp = h["content-security-policy"].to_str().unwrap().to_string();
        assert!(
            csp.contains("script-src 'self' 'wasm-unsafe-eval'")
                && csp.contains("frame-ancestors 'none'"),
            "{path}: {csp}"
        );
        assert_eq!(h["x-content-type-options"], "nosniff", "{path}");
        let html = r.text().await.unwrap();
        assert!(
            !html.contains("<script type=\"module\">"),
            "no inline script for the policy to block: {html}"
        );
    }
}
