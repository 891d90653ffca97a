//! Outage suite (issue 36): the Anthropic API goes down mid-run with a Bedrock and a Vertex AI
//! route configured (both served by the simulator, with their own auth and prices).
//!
//! - Sync jobs keep completing on the other routes: none lost, none paid twice, each priced at
//!   its route's price (Bedrock on its global profile at the list price; Vertex on a region at
//!   10% more) — the Worker's cost of each job equals what the simulator billed it.
//! - The primary's breaker opens after its streak of overloads, and after the cool-down one
//!   probe finds it back and closes it: the jobs go to the Anthropic API again.
//! - Batch-mode jobs wait for the primary (no other route has the Message Batches API) and
//!   finish when it is back.
//! - A route that refuses our credentials (a rotated AWS secret: a SigV4 signature that no
//!   longer matches; an expired Vertex token) is a configuration error: an ALERT, its breaker
//!   opened at once, a handful of calls rather than a storm, and no job failed for it.
//!
//! Every other suite runs with the Anthropic API alone (no `ROUTES`): the behaviour without
//! other routes is theirs to keep.

use std::sync::Arc;
use std::time::Duration;

use end2end::{eventually, pdfs, tests, Client, StackConfig, Suite, TestStack};
use serde_json::{json, Value};

/// The breaker's policy of this suite: three failures open it, three seconds of cool-down.
const COOL_DOWN_S: u64 = 3;

pub fn suite() -> Suite {
    end2end::suite_timed(
        "outage",
        StackConfig {
            knobs: sim::Knobs {
                retry_after_s: 1,
                ..sim::Knobs::default()
            },
            ..StackConfig::vars(&[])
        }
        .with_routes(),
        Duration::from_secs(240),
        tests![
            sync_jobs_complete_on_the_other_routes_while_the_primary_is_down,
            the_dashboard_shows_the_routes_and_the_dead_letters_page_acts_in_bulk,
            batch_jobs_wait_for_the_primary_and_finish_when_it_is_back,
            refused_credentials_are_a_configuration_error_not_a_storm,
        ],
    )
}

trait WithRoutes {
    fn with_routes(self) -> Self;
}

impl WithRoutes for StackConfig {
    /// Bedrock (global profile) and Vertex AI (a region) at the simulator, with the AWS keys
    /// and the service account it accepts.
    fn with_routes(mut self) -> StackConfig {
        let sim = "{sim}";
        for (k, v) in [
            ("ROUTES", "anthropic,bedrock,vertex"),
            ("BEDROCK_REGION", "us-east-1"),
            ("BEDROCK_BASE_URL", sim),
            ("VERTEX_PROJECT", "acme-prod"),
            ("VERTEX_LOCATION", "us-east5"),
            ("VERTEX_BASE_URL", sim),
            ("AWS_ACCESS_KEY_ID", sim::config::SIM_AWS_ACCESS_KEY_ID),
            (
                "AWS_SECRET_ACCESS_KEY",
                sim::config::SIM_AWS_SECRET_ACCESS_KEY,
            ),
            // Tokens minted from a service account's key, as production does.
            (
                "VERTEX_SERVICE_ACCOUNT",
                &sim::config::sim_service_account_json(sim),
            ),
            ("BREAKER_FAILURES", "3"),
            ("BREAKER_COOL_DOWN_S", "3"),
        ] {
            self.vars.push((k.into(), v.to_string()));
        }
        self
    }
}

const WAIT: Duration = Duration::from_secs(150);

fn down(s: &TestStack, route: &str, status: u16) {
    let outage = sim::config::Outage { status, slow_ms: 0 };
    s.sim.lock().knobs.outages.insert(route.into(), outage);
}

fn up(s: &TestStack, route: &str) {
    s.sim.lock().knobs.outages.remove(route);
}

fn prompt(tag: &str, i: usize) -> Value {
    json!({
        "prompt": format!("{tag} {i}: name one risk of the migration."),
        "model": "claude-sonnet-5-5",
        "output_config": {"effort": "low"},
    })
}

async fn submit(u: &Client, tag: &str, n: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..n {
        ids.push(u.submit_job(&prompt(tag, i)).await);
    }
    ids
}

/// `(route, cost_micros)` of a job as its row keeps them (`None`: the Anthropic API).
fn row(s: &TestStack, id: &str) -> (Option<String>, u64) {
    let rows = s.d1(&format!(
        "SELECT route, cost_micros FROM jobs WHERE id = '{id}'"
    ));
    let r = &rows[0];
    (
        r["route"].as_str().map(str::to_owned),
        r["cost_micros"].as_u64().unwrap_or(0),
    )
}

/// Every job of `ids` ended on a route besides the Anthropic API (which one depends on the
/// breakers earlier tests left half-open), billed once, at what the simulator billed it.
fn ended_elsewhere(s: &TestStack, ids: &[String]) {
    for id in ids {
        let route = row(s, id).0;
        assert!(
            matches!(route.as_deref(), Some("bedrock" | "vertex")),
            "job {id}: {route:?}"
        );
        ended_on(s, std::slice::from_ref(id), route.as_deref());
    }
}

/// Every job of `ids` ended on `route`, billed once, at what the simulator billed it.
fn ended_on(s: &TestStack, ids: &[String], route: Option<&str>) {
    for id in ids {
        let (on, cost) = row(s, id);
        assert_eq!(on.as_deref(), route, "job {id}");
        assert_eq!(s.billed(id), 1, "job {id} paid once");
        assert!(cost > 0, "job {id}");
        assert_eq!(
            cost,
            s.sim_cost(id),
            "job {id}: our cost is the route's bill"
        );
    }
}

async fn sync_jobs_complete_on_the_other_routes_while_the_primary_is_down(s: Arc<TestStack>) {
    let u = s.user("outage-sync");
    down(&s, "anthropic", 529);
    let ids = submit(&u, "Primary down", 8).await;
    // A PDF too: it cannot be uploaded to the Files API nor counted, so it goes inline, its
    // tokens reserved at the worst case, its body hashed for the signature in JS memory.
    let inline_before = s.sim_files().base64_documents;
    let upload = u
        .submit_upload(
            &[("a.pdf".into(), pdfs::make("Alpha", 2))],
            &[("mode", "sync")],
        )
        .await;
    u.all_reach(&ids, "completed", WAIT).await;
    ended_on(&s, &ids, Some("bedrock"));
    // The job says where it was answered, and so does each call of its log.
    let view = u.job(&ids[7]).await;
    assert_eq!(view["provider"], "bedrock", "{view}");
    let log = view["attempt_log"].as_array().unwrap();
    assert_eq!(log.last().unwrap()["provider"], "bedrock", "{view}");
    let b = u.upload_finished(&upload, WAIT).await;
    assert_eq!(b["counts"]["completed"], 1, "{b}");
    let pdf_job = b["files"][0]["job_id"].as_str().unwrap().to_owned();
    ended_on(&s, &[pdf_job], Some("bedrock"));
    assert!(
        s.sim_files().base64_documents > inline_before,
        "the PDF went inline"
    );
    assert!(
        !s.log_lines("ALERT breaker anthropic/").is_empty(),
        "the primary's breaker opened"
    );
    let failed_on_primary = s.sim_calls("anthropic outage 529");
    assert!(failed_on_primary >= 3, "{failed_on_primary}");
    // Bedrock goes down too: Vertex AI serves, on a region at 10% over the list price.
    down(&s, "bedrock", 503);
    let more = submit(&u, "Both down", 4).await;
    u.all_reach(&more, "completed", WAIT).await;
    ended_on(&s, &more, Some("vertex"));
    let vertex = s.sim.lock().stats.clouds["vertex"].clone();
    assert!(vertex.messages >= 4);
    // Its token was minted from the service account's key (a JWT signed with Web Crypto, checked
    // by the simulator's token endpoint) — by each call that found none, when several came at
    // once — and kept: the next call mints nothing.
    let minted = s.sim_calls("token 200");
    assert!(minted >= 1, "{minted}");
    assert_eq!(s.sim_calls("token 400"), 0);
    let again = submit(&u, "Vertex again", 1).await;
    u.all_reach(&again, "completed", WAIT).await;
    ended_on(&s, &again, Some("vertex"));
    assert_eq!(s.sim_calls("token 200"), minted, "the token is kept");
    // The primary is back: after the cool-down a probe closes its breaker, and jobs go there.
    up(&s, "anthropic");
    up(&s, "bedrock");
    eventually(
        "a job completes on the Anthropic API again",
        WAIT,
        || async {
            tokio::time::sleep(Duration::from_secs(COOL_DOWN_S)).await;
            let id = u.submit_job(&prompt("Back", 0)).await;
            u.job_reaches(&id, "completed", WAIT).await;
            (row(&s, &id).0.is_none()).then_some(())
        },
    )
    .await;
    assert!(!s.log_lines(": Closed").is_empty(), "the breaker closed");
    let jobs = u.all_jobs().await;
    assert!(jobs.iter().all(|j| j["status"] == "completed"), "none lost");
}

async fn the_dashboard_shows_the_routes_and_the_dead_letters_page_acts_in_bulk(s: Arc<TestStack>) {
    use end2end::browser::{check_text, check_visible, click, fill, screenshot, Browser};
    let u = s.user("outage-ui");
    down(&s, "anthropic", 529);
    let ids = submit(&u, "Dashboard", 4).await;
    u.all_reach(&ids, "completed", WAIT).await;
    let browser = Browser::launch(&s, "outage-dashboard").await;
    let page = browser.open(&s.url("/ui/dashboard")).await;
    check_visible(&page, "routes").await;
    check_text(&page, "status-line", "Anthropic API: breaker").await;
    check_text(&page, "routes", "Amazon Bedrock").await;
    check_text(&page, "routes", "Google Vertex AI (regional, +10%)").await;
    screenshot(&page, &s, "dashboard-routes").await;
    up(&s, "anthropic");
    // Five queued jobs of one user, canceled from the Dead letters page's bulk panel.
    let now = sim::now_ms();
    s.d1_now(&format!(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < 5) \
         INSERT INTO jobs (id, user_id, kind, status, lane, mode, model, input_text, attempts, \
         created_at, updated_at) SELECT printf('{}', 47806, i), 'drill', 'feedback', 'queued', \
         'bulk', 'batch', 'claude-haiku-4-5', 'Drill ' || i, 0, {now}, {now} FROM n",
        end2end::batches::FIXTURE_ID_SQL
    ))
    .await;
    let dlq = browser.open(&s.url("/ui/dead-letters")).await;
    click(&dlq, "bulk-panel").await;
    dlq.get_by_test_id("bulk-action")
        .select_option("cancel", None)
        .await
        .expect("choose cancel");
    fill(&dlq, "bulk-user", "drill").await;
    click(&dlq, "bulk-count").await;
    check_text(&dlq, "bulk-result", "5 jobs match.").await;
    click(&dlq, "bulk-act").await;
    check_text(&dlq, "bulk-result", "5 canceled; 0 still match.").await;
    screenshot(&dlq, &s, "dead-letters-bulk").await;
    assert_eq!(
        s.d1_count(
            "SELECT COUNT(*) AS n FROM jobs WHERE user_id = 'drill' AND status = 'canceled'"
        ),
        5
    );
    browser.close().await;
}

async fn batch_jobs_wait_for_the_primary_and_finish_when_it_is_back(s: Arc<TestStack>) {
    let u = s.user("outage-batch");
    down(&s, "anthropic", 529);
    // A job with a deadline a batch could meet goes to one; when its batch cannot even be made,
    // the router moves it to sync at its rescue time — and sync fails over.
    let deadline = u
        .submit_job(
            &json!({"prompt": "Summarize the outage for the status page.", "deadline_s": 40}),
        )
        .await;
    let mut ids = Vec::new();
    for i in 0..3 {
        let mut body = prompt("Batch while down", i);
        body["mode"] = json!("batch");
        ids.push(u.submit_job(&body).await);
    }
    for _ in 0..3 {
        s.cron().await;
        s.anon().post_ok("/api/batches/flush").await;
    }
    for id in &ids {
        let job = u.job(id).await;
        assert_eq!(job["status"], "queued", "a batch-mode job waits: {job}");
        assert_eq!(s.billed(id), 0);
    }
    let rescued = eventually("the deadline job is rescued to sync", WAIT, || async {
        s.cron().await;
        let job = u.job(&deadline).await;
        (job["status"] == "completed").then_some(job)
    })
    .await;
    assert_eq!(rescued["mode"], "sync", "{rescued}");
    assert_eq!(rescued["deadline_met"], true, "{rescued}");
    ended_elsewhere(&s, &[deadline]);
    up(&s, "anthropic");
    u.all_reach(&ids, "completed", WAIT).await;
    for id in &ids {
        assert_eq!(row(&s, id).0, None, "batches are the Anthropic API's");
        assert_eq!(s.billed(id), 1);
    }
}

async fn refused_credentials_are_a_configuration_error_not_a_storm(s: Arc<TestStack>) {
    let u = s.user("outage-creds");
    down(&s, "anthropic", 529);
    // Earlier tests may have left Bedrock's breaker for the model open or probing: jobs until a
    // probe's answer has closed it, so that the next calls go to Bedrock first.
    eventually(
        "Bedrock's breaker for the model is closed",
        WAIT,
        || async {
            let warm = submit(&u, "Warm-up", 1).await;
            u.all_reach(&warm, "completed", WAIT).await;
            let routes = u.get_ok("/api/routes").await;
            let open = routes["routes"][1]["breakers"]
                .as_array()
                .unwrap()
                .iter()
                .any(|b| b["model"] == "claude-sonnet-5-5" && b["phase"] != "closed");
            (!open).then_some(())
        },
    )
    .await;
    // AWS now holds another secret for the Worker's key: its signatures no longer match.
    s.sim.lock().knobs.aws_secret_access_key = Some("rotated-secret".into());
    let ids = submit(&u, "Bedrock refused", 4).await;
    u.all_reach(&ids, "completed", WAIT).await;
    ended_on(&s, &ids, Some("vertex"));
    // The breaker opened at the first refusal: the calls already in flight, then a probe per
    // cool-down, where five retries of four jobs would be twenty.
    let refused = s.sim_calls("bedrock 403");
    assert!(
        (1..=6).contains(&refused),
        "a few calls, not a storm: {refused}"
    );
    assert!(!s
        .log_lines("Amazon Bedrock refused our credentials (configuration error)")
        .is_empty());
    // The Vertex token expires too: every route is shut; jobs wait, none fails.
    s.sim.lock().knobs.vertex_token_expires_at = Some(sim::now_ms());
    let waiting = submit(&u, "All shut", 2).await;
    tokio::time::sleep(Duration::from_secs(4 * COOL_DOWN_S)).await;
    for id in &waiting {
        let job = u.job(id).await;
        assert!(
            ["queued", "running"].contains(&job["status"].as_str().unwrap()),
            "waits: {job}"
        );
    }
    // The calls in flight when the token expired, then a probe per cool-down and model.
    let vertex_refused = s.sim_calls("vertex 401");
    assert!(
        vertex_refused <= 12,
        "probes, not a storm: {vertex_refused}"
    );
    assert!(!s
        .log_lines("Google Vertex AI refused our credentials (configuration error)")
        .is_empty());
    up(&s, "anthropic");
    u.all_reach(&waiting, "completed", WAIT).await;
    ended_on(&s, &waiting, None);
    s.sim.lock().knobs.aws_secret_access_key = None;
    s.sim.lock().knobs.vertex_token_expires_at = None;
}
