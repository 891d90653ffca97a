//! Reconciliation suite (issue 20, part 3): the Worker, given an Admin API key, compares its own
//! cost per UTC day and model with the organization's cost report — served by the simulator
//! from its own billing — and flags the lines that differ.
//!
//! - on honest runs (sync and batch jobs on two models) every line agrees to the micro-dollar;
//! - when the simulator bills one model at 150 % of the list price (the provider's price moved,
//!   our table did not), that model's line is flagged, the others are not, and an alert reaches
//!   the webhook;
//! - without the key, or with a malformed range, the endpoints refuse with the right status.

use std::sync::Arc;
use std::time::Duration;

use end2end::{tests, Client, StackConfig, Suite, TestStack};
use serde_json::{json, Value};

const ADMIN_KEY: &str = "sk-ant-admin01-sim-reconciliation";

pub fn suite() -> Suite {
    let knobs = sim::Knobs {
        batch_ms: 1_000,
        itpm: 2_000_000,
        otpm: 400_000,
        ..sim::Knobs::default()
    };
    end2end::suite_with(
        "reconciliation",
        StackConfig {
            knobs,
            // The long Haiku prompts must not wait for the token budget.
            ..StackConfig::vars(&[
                ("ANTHROPIC_ADMIN_KEY", ADMIN_KEY),
                ("BUDGET_ITPM", "2000000"),
                ("BUDGET_OTPM", "400000"),
            ])
        },
        tests![
            honest_runs_reconcile_to_zero_difference,
            a_mispriced_model_is_flagged_and_alerted,
            bad_ranges_are_refused,
        ],
    )
}

const WAIT: Duration = Duration::from_secs(120);
const HAIKU: &str = "claude-haiku-4-5";
const SONNET: &str = "claude-sonnet-5-5";

async fn run_jobs(u: &Client, bodies: &[Value]) -> Vec<Value> {
    let mut ids = Vec::new();
    for b in bodies {
        ids.push(u.submit_job(b).await);
    }
    u.all_reach(&ids, "completed", WAIT).await;
    let mut jobs = Vec::new();
    for id in &ids {
        jobs.push(u.job(id).await);
    }
    jobs
}

/// Eight jobs: both models, both modes. The Haiku ones carry a long report (about 15,000 input
/// tokens), so that a 50 % price error on them is well past the one-cent threshold.
fn workload(tag: &str) -> Vec<Value> {
    let report = "The rollout moved three services to the new queue. ".repeat(1_200);
    let mut bodies = Vec::new();
    for (i, model) in [SONNET, HAIKU, SONNET, HAIKU].iter().enumerate() {
        let mode = if i % 2 == 0 { "sync" } else { "batch" };
        let body = if *model == HAIKU { report.as_str() } else { "" };
        // Sonnet 5.5 thinks by default, little at low effort; Haiku 4.5 has no effort setting.
        let config = if *model == HAIKU {
            json!(null)
        } else {
            json!({"effort": "low"})
        };
        bodies.push(json!({
            "prompt": format!("{tag} {i}: list three risks of the rollout plan.\n{body}"),
            "model": model,
            "mode": mode,
            "output_config": config,
        }));
        bodies.push(json!({
            "prompt": format!("{tag} {i}: one line on the budget.\n{body}"),
            "model": model,
            "mode": if mode == "sync" { "batch" } else { "sync" },
            "output_config": config,
        }));
    }
    bodies
}

fn line<'a>(r: &'a Value, model: &str) -> &'a Value {
    r["lines"]
        .as_array()
        .unwrap()
        .iter()
        // An alias's line names the snapshot that answered.
        .find(|l| l["model"].as_str().unwrap().starts_with(model))
        .unwrap_or_else(|| panic!("no line for {model}: {r}"))
}

async fn honest_runs_reconcile_to_zero_difference(s: Arc<TestStack>) {
    let u = s.user("recon-honest");
    let jobs = run_jobs(&u, &workload("Honest")).await;
    let ours: u64 = jobs
        .iter()
        .map(|j| j["cost_micros"].as_u64().unwrap())
        .sum();
    assert!(ours > 0);
    let admin = s.user("recon-admin");
    let (status, r) = admin.post("/api/reconciliation/run").await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["flagged"], 0, "{r}");
    for model in [SONNET, HAIKU] {
        let l = line(&r, model);
        assert_eq!(l["diff_micros"], 0, "{l}");
        assert_eq!(l["flagged"], false);
        assert!(l["billed_micros"].as_u64().unwrap() > 0, "{l}");
    }
    assert_eq!(r["ours_micros"], r["billed_micros"], "{r}");
    // Everything of this stack so far is this user's: the bill is their jobs' cost.
    assert_eq!(r["ours_micros"], ours, "{r}");
    assert_eq!(r["other_micros"], 0);
    // Kept for the Dashboard.
    let last = admin.get_ok("/api/reconciliation").await;
    assert_eq!(last["checked_at"], r["checked_at"]);
    assert_eq!(last["lines"], r["lines"]);
    // The report was read with the Admin API key, once per page, speaking the same version as
    // every other call.
    assert!(s.sim_calls("cost_report 200") >= 1);
    let versions = s.sim_versions();
    assert_eq!(
        versions.keys().collect::<Vec<_>>(),
        [pipeline::anthropic::API_VERSION],
        "{versions:?}"
    );
}

async fn a_mispriced_model_is_flagged_and_alerted(s: Arc<TestStack>) {
    s.sim.lock().knobs.misprice = Some((HAIKU.into(), 1500));
    let u = s.user("recon-mispriced");
    let jobs = run_jobs(&u, &workload("Mispriced")).await;
    s.sim.lock().knobs.misprice = None;
    let haiku_ours: u64 = jobs
        .iter()
        .filter(|j| j["model"].as_str().unwrap().starts_with(HAIKU))
        .map(|j| j["cost_micros"].as_u64().unwrap())
        .sum();
    let admin = s.user("recon-admin");
    let r = admin.post_ok("/api/reconciliation/run").await;
    assert_eq!(r["flagged"], 1, "{r}");
    let haiku = line(&r, HAIKU);
    assert_eq!(haiku["flagged"], true, "{haiku}");
    // What the simulator billed over our figures: half of this run's Haiku cost.
    let diff = haiku["diff_micros"].as_i64().unwrap();
    assert!(
        (diff - haiku_ours as i64 / 2).abs() <= jobs.len() as i64,
        "diff {diff} for {haiku_ours} of ours: {haiku}"
    );
    assert_eq!(line(&r, SONNET)["flagged"], false);
    let alerts = s.webhooks_of("reconciliation.flagged");
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    assert!(alerts[0]["model"].as_str().unwrap().starts_with(HAIKU));
    assert!(alerts[0]["text"].as_str().unwrap().contains("billed"));
    // Run again: the same line is not alerted twice.
    admin.post_ok("/api/reconciliation/run").await;
    assert_eq!(s.webhooks_of("reconciliation.flagged").len(), 1);
    // The Dashboard shows it.
    use end2end::browser::{check_text, screenshot, Browser};
    let browser = Browser::launch(&s, "reconciliation").await;
    let page = browser.open(&s.url("/ui/dashboard")).await;
    check_text(
        &page,
        "recon-summary",
        "1 day and model lines differ from the bill",
    )
    .await;
    let flagged = page.locator(format!(
        "[data-testid=recon-row][data-model^={HAIKU}][data-flagged=true]"
    ));
    playwright_rs::expect(flagged)
        .with_timeout(end2end::browser::CHECK_TIMEOUT)
        .to_be_visible()
        .await
        .expect("the flagged Haiku line is shown");
    screenshot(&page, &s, "dashboard-reconciliation").await;
    browser.close().await;
}

async fn bad_ranges_are_refused(s: Arc<TestStack>) {
    let admin = s.user("recon-admin");
    for q in [
        "?from=yesterday",
        "?from=2026-01-01&to=2026-03-01",
        "?from=2026-12-02&to=2026-12-01",
    ] {
        let (status, body) = admin.post(&format!("/api/reconciliation/run{q}")).await;
        assert_eq!(status, 400, "{q}: {body}");
    }
}
