//! Webhooks suite (keys mode): completion webhooks against a receiver in this process. Each
//! delivery is verified with an independent implementation of the Standard Webhooks scheme
//! (the `standardwebhooks` crate of the specification's authors) under the key's secret, shown
//! once when the key was made; a receiver that fails gets retries with backoff until it
//! answers; an admin's re-send is the same message (id and body); bad callback URLs are 400s
//! that store nothing; and the job page shows the attempts and re-sends in Chromium.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use end2end::api::assert_error;
use end2end::{eventually, tests, StackConfig, Suite, TestStack};
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(120);

pub fn suite() -> Suite {
    end2end::suite_with(
        "webhooks",
        StackConfig::vars(&[("AUTH_MODE", "keys")]),
        tests![
            a_job_posts_its_final_view_signed_with_its_keys_secret,
            a_failing_receiver_gets_retries_until_it_answers,
            an_admin_resend_is_the_same_message,
            bad_callback_urls_are_400s_and_store_nothing,
            the_job_page_shows_the_attempts_and_an_admin_resends,
        ],
    )
}

/// One request the receiver got.
#[derive(Debug, Clone)]
struct Got {
    path: String,
    headers: HeaderMap,
    body: Bytes,
}

#[derive(Default)]
struct Inbox {
    got: Vec<Got>,
    /// Answers still to fail, per path.
    failures: std::collections::HashMap<String, u32>,
}

type Shared = Arc<Mutex<Inbox>>;

/// The receiver: records every POST to `/hook/{name}`, answers 500 while the name has failures
/// left, then 204.
async fn receiver() -> (String, Shared) {
    let inbox: Shared = Arc::default();
    let app = axum::Router::new()
        .route(
            "/hook/{name}",
            post(
                |State(inbox): State<Shared>,
                 Path(name): Path<String>,
                 headers: HeaderMap,
                 body: Bytes| async move {
                    let mut i = inbox.lock().unwrap();
                    i.got.push(Got {
                        path: name.clone(),
                        headers,
                        body,
                    });
                    match i.failures.get_mut(&name) {
                        Some(n) if *n > 0 => {
                            *n -= 1;
                            StatusCode::INTERNAL_SERVER_ERROR
                        }
                        _ => StatusCode::NO_CONTENT,
                    }
                },
            ),
        )
        .with_state(inbox.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, inbox)
}

fn received(inbox: &Shared, name: &str) -> Vec<Got> {
    inbox
        .lock()
        .unwrap()
        .got
        .iter()
        .filter(|g| g.path == name)
        .cloned()
        .collect()
}

/// A key made over HTTP by an admin (the secret is shown once): (key, webhook secret).
async fn key_with_callback(
    s: &Arc<TestStack>,
    user: &str,
    admin: bool,
    callback: Option<&str>,
) -> (String, String) {
    let root = s.issue_key("hooks-root", true).await;
    let role = if admin { "admin" } else { "user" };
    let (status, created) = s
        .key(Some(&root))
        .post_json(
            "/api/keys",
            &json!({"user_id": user, "role": role, "callback_url": callback}),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let secret = created["webhook_secret"].as_str().unwrap().to_string();
    assert!(secret.starts_with("whsec_"), "{created}");
    assert_eq!(created["callback_url"].as_str(), callback);
    let (_, list) = s.key(Some(&root)).get("/api/keys").await;
    assert!(
        !list.to_string().contains(&secret),
        "the secret is shown once, never listed"
    );
    (created["key"].as_str().unwrap().to_string(), secret)
}

/// Verifies a delivery with the specification's own library; answers its JSON.
fn verify(secret: &str, g: &Got) -> Value {
    let wh = standardwebhooks::Webhook::new(secret).expect("a whsec_ secret");
    wh.verify(&g.body, &g.headers)
        .unwrap_or_else(|e| panic!("the signature verifies: {e:?} {:?}", g.headers));
    serde_json::from_slice(&g.body).unwrap()
}

fn header<'a>(g: &'a Got, name: &str) -> &'a str {
    g.headers[name].to_str().unwrap()
}

/// Runs the cron until `n` requests reached `name`.
async fn until_received(s: &Arc<TestStack>, inbox: &Shared, name: &str, n: usize) -> Vec<Got> {
    eventually(&format!("{n} deliveries to {name}"), WAIT, || async {
        s.cron().await;
        let got = received(inbox, name);
        (got.len() >= n).then_some(got)
    })
    .await
}

async fn a_job_posts_its_final_view_signed_with_its_keys_secret(s: Arc<TestStack>) {
    let (url, inbox) = receiver().await;
    let callback = format!("{url}/hook/ann");
    let (key, secret) = key_with_callback(&s, "hooks-ann", false, Some(&callback)).await;
    let ann = s.key(Some(&key));
    // No callback_url in the body: the key's default.
    let id = ann.submit_job(&json!({"prompt": "Tell me when done", "priority": "high", "max_tokens": 20, "output_config": {"effort": "low"}})).await;
    ann.job_reaches(&id, "completed", WAIT).await;
    let got = until_received(&s, &inbox, "ann", 1).await;
    assert_eq!(got.len(), 1, "one delivery");
    let body = verify(&secret, &got[0]);
    assert_eq!(header(&got[0], "webhook-id"), format!("msg_{id}"));
    assert_eq!(body["type"], "job.ended");
    assert_eq!(body["data"]["id"], id.as_str());
    assert_eq!(body["data"]["status"], "completed");
    assert!(body["data"]["cost_micros"].as_u64().unwrap() > 0, "{body}");
    // Under another secret, or with the body changed, it does not verify.
    let other = standardwebhooks::Webhook::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
    assert!(other.verify(&got[0].body, &got[0].headers).is_err());
    let wh = standardwebhooks::Webhook::new(&secret).unwrap();
    let mut tampered = got[0].body.to_vec();
    tampered.push(b' ');
    assert!(wh.verify(&tampered, &got[0].headers).is_err());
    // The job page's view of it.
    let job = ann.job(&id).await;
    let w = &job["webhook"];
    assert_eq!(w["state"], "delivered", "{job}");
    assert_eq!(w["url"], callback.as_str());
    assert_eq!(w["attempts"][0]["status"], 204);
    // Later cron runs send nothing more.
    s.cron().await;
    assert_eq!(received(&inbox, "ann").len(), 1);
}

async fn a_failing_receiver_gets_retries_until_it_answers(s: Arc<TestStack>) {
    let (url, inbox) = receiver().await;
    inbox.lock().unwrap().failures.insert("flaky".into(), 2);
    let (key, secret) = key_with_callback(&s, "hooks-bob", false, None).await;
    let bob = s.key(Some(&key));
    // Feedback this time, naming its own callback_url; and a job that fails also reports.
    let callback = format!("{url}/hook/flaky");
    let (status, ack) = bob
        .post_json(
            "/feedback",
            &json!({"text": "The export button does nothing.", "callback_url": callback}),
        )
        .await;
    assert_eq!(status, 202, "{ack}");
    let id = ack["id"].as_str().unwrap().to_string();
    let got = until_received(&s, &inbox, "flaky", 3).await;
    assert_eq!(got.len(), 3, "two failures, then the delivery");
    for g in &got {
        verify(&secret, g);
        assert_eq!(
            header(g, "webhook-id"),
            format!("msg_{id}"),
            "one id for every attempt"
        );
        assert_eq!(g.body, got[0].body, "the same body on every attempt");
    }
    let ts: Vec<i64> = got
        .iter()
        .map(|g| header(g, "webhook-timestamp").parse().unwrap())
        .collect();
    assert!(ts.windows(2).all(|w| w[0] <= w[1]), "{ts:?}");
    let view = bob.feedback(&id).await;
    assert_eq!(view["status"], "completed", "{view}");
    let job = bob.job(&id).await;
    let statuses: Vec<Value> = job["webhook"]["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["status"].clone())
        .collect();
    assert_eq!(statuses, [json!(500), json!(500), json!(204)], "{job}");
    assert_eq!(job["webhook"]["state"], "delivered");

    // A job that fails reports too.
    let failing = bob.submit_job(&json!({"prompt": "Refused [[sim:400]]", "priority": "high", "max_tokens": 20, "callback_url": format!("{url}/hook/failed"), "output_config": {"effort": "low"}})).await;
    bob.job_reaches(&failing, "failed", WAIT).await;
    let got = until_received(&s, &inbox, "failed", 1).await;
    assert_eq!(verify(&secret, &got[0])["data"]["status"], "failed");
}

async fn an_admin_resend_is_the_same_message(s: Arc<TestStack>) {
    let (url, inbox) = receiver().await;
    let (key, secret) =
        key_with_callback(&s, "hooks-cy", false, Some(&format!("{url}/hook/cy"))).await;
    let cy = s.key(Some(&key));
    let id = cy.submit_job(&json!({"prompt": "Send it twice", "priority": "high", "max_tokens": 20, "output_config": {"effort": "low"}})).await;
    cy.job_reaches(&id, "completed", WAIT).await;
    let first = until_received(&s, &inbox, "cy", 1).await;
    // A user may not re-send; an admin may.
    let (status, body) = cy.post(&format!("/api/webhooks/{id}/resend")).await;
    assert_error(status, &body, 403, "forbidden");
    let admin = s.issue_key("hooks-admin", true).await;
    let (status, view) = s
        .key(Some(&admin))
        .post(&format!("/api/webhooks/{id}/resend"))
        .await;
    assert_eq!(status, 200, "{view}");
    let got = received(&inbox, "cy");
    assert_eq!(got.len(), 2, "the re-send arrived");
    verify(&secret, &got[1]);
    assert_eq!(
        header(&got[1], "webhook-id"),
        header(&first[0], "webhook-id")
    );
    assert_eq!(got[1].body, first[0].body, "a re-send is the same message");
    let attempts = view["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2, "{view}");
    assert_eq!(attempts[1]["resend"], true);
    let (status, body) = s
        .key(Some(&admin))
        .post("/api/webhooks/00000000-0000-4000-8000-000000000000/resend")
        .await;
    assert_eq!(status, 404, "{body}");
}

async fn bad_callback_urls_are_400s_and_store_nothing(s: Arc<TestStack>) {
    let (key, _) = key_with_callback(&s, "hooks-dee", false, None).await;
    let dee = s.key(Some(&key));
    for bad in [
        json!("http://hooks.example.com/x"),
        json!("https://10.0.0.1/x"),
        json!("https://169.254.169.254/latest"),
        json!("https://intranet/x"),
        json!("ftp://hooks.example.com/x"),
        json!("not a url"),
        json!(5),
    ] {
        let (status, e) = dee
            .post_json("/jobs", &json!({"prompt": "x", "callback_url": bad}))
            .await;
        assert_eq!(status, 400, "{bad}: {e}");
        assert_eq!(e["field"], "callback_url", "{bad}: {e}");
        let (status, e) = dee
            .post_json("/feedback", &json!({"text": "x", "callback_url": bad}))
            .await;
        assert_eq!(status, 400, "{bad}: {e}");
    }
    let (_, list) = dee.get("/jobs").await;
    assert_eq!(list["items"], json!([]), "nothing stored");
    let root = s.issue_key("hooks-root2", true).await;
    let (status, e) = s
        .key(Some(&root))
        .post_json(
            "/api/keys",
            &json!({"user_id": "x", "callback_url": "http://example.com"}),
        )
        .await;
    assert_eq!(status, 400, "{e}");
}

async fn the_job_page_shows_the_attempts_and_an_admin_resends(s: Arc<TestStack>) {
    use end2end::browser::{check_visible, click, screenshot, sign_in, Browser};
    let (url, inbox) = receiver().await;
    inbox.lock().unwrap().failures.insert("page".into(), 1);
    let (key, _) =
        key_with_callback(&s, "hooks-eve", true, Some(&format!("{url}/hook/page"))).await;
    let id = s.key(Some(&key)).submit_job(&json!({"prompt": "Shown on its page", "priority": "high", "max_tokens": 20, "output_config": {"effort": "low"}})).await;
    s.key(Some(&key)).job_reaches(&id, "completed", WAIT).await;
    until_received(&s, &inbox, "page", 2).await;
    let browser = Browser::launch(&s, "webhooks-page").await;
    let page = browser.open(&s.url("/")).await;
    sign_in(&page, &key).await;
    page.goto(&s.url(&format!("/ui/jobs/{id}")), None)
        .await
        .expect("navigate to the job");
    check_visible(&page, "webhook-attempts").await;
    let state = page.locator("[data-testid=webhook-state][data-state=delivered]");
    playwright_rs::expect(state)
        .with_timeout(end2end::browser::CHECK_TIMEOUT)
        .to_be_visible()
        .await
        .expect("the delivery is shown delivered");
    screenshot(&page, &s, "job-webhook").await;
    click(&page, "webhook-resend").await;
    eventually("the re-send arrives", WAIT, || async {
        (received(&inbox, "page").len() >= 3).then_some(())
    })
    .await;
    let rows = page.locator("[data-testid=webhook-attempt]");
    eventually("the page lists three attempts", WAIT, || async {
        (rows.count().await.unwrap_or(0) >= 3).then_some(())
    })
    .await;
    browser.close().await;
}
