//! Browser suite: the SPA in Chromium, served by the Worker of a real local stack.

use std::process::ExitCode;
use std::sync::Arc;

use end2end::browser::{check_text, check_visible, click_text, find, screenshot, Browser};
use end2end::{run_suite, tests, TestStack};

fn main() -> ExitCode {
    run_suite(
        "browser",
        tests![
            the_spa_shows_the_health_the_worker_reports,
            navigation_reaches_every_page_of_the_layout,
            a_deep_link_loads_its_page_and_an_unknown_one_says_not_found,
        ],
    )
}

async fn the_spa_shows_the_health_the_worker_reports(s: Arc<TestStack>) {
    let browser = Browser::launch(&s, "health").await;
    let page = browser.open(&s.url("/")).await;
    check_visible(&page, "page-submit").await;
    check_text(&page, "status-badge", "all systems ok").await;
    check_text(&page, "demo-banner", "demo mode — no authentication").await;
    screenshot(&page, &s, "submit").await;

    click_text(&page, "nav", "Dashboard").await;
    check_visible(&page, "page-dashboard").await;
    check_text(&page, "health-overall", "Worker ok").await;
    for binding in ["d1", "r2", "durable_object", "queue_high"] {
        check_text(&page, &format!("check-{binding}"), "ok").await;
    }
    check_text(
        &page,
        "anthropic-target",
        &format!("simulator at {}", s.sim_url),
    )
    .await;
    check_text(&page, "whoami", "anonymous (admin)").await;
    screenshot(&page, &s, "dashboard").await;
    browser.close().await;
}

async fn navigation_reaches_every_page_of_the_layout(s: Arc<TestStack>) {
    let browser = Browser::launch(&s, "nav").await;
    let page = browser.open(&s.url("/")).await;
    check_visible(&page, "page-submit").await;
    for (link, testid, path) in [
        ("Jobs", "page-jobs", "/ui/jobs"),
        ("Upload", "page-upload", "/ui/upload"),
        ("Usage", "page-usage", "/ui/usage"),
        ("Dashboard", "page-dashboard", "/ui/dashboard"),
        ("Dead letters", "page-dead-letters", "/ui/dead-letters"),
        ("Submit", "page-submit", "/"),
    ] {
        click_text(&page, "nav", link).await;
        check_visible(&page, testid).await;
        assert!(
            page.url().ends_with(path),
            "{link} should lead to {path}, got {}",
            page.url()
        );
    }
    browser.close().await;
}

async fn a_deep_link_loads_its_page_and_an_unknown_one_says_not_found(s: Arc<TestStack>) {
    let browser = Browser::launch(&s, "deep").await;
    let page = browser.open(&s.url("/ui/usage")).await;
    check_visible(&page, "page-usage").await;
    check_text(&page, "status-badge", "all systems ok").await;
    let page = browser.open(&s.url("/ui/no-such-page")).await;
    check_visible(&page, "page-not-found").await;
    assert_eq!(find(&page, "page-usage").count().await.unwrap(), 0);
    browser.close().await;
}
