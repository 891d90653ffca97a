//! Browser suite: the SPA in Chromium, served by the Worker of a real local stack.

use std::sync::Arc;

use std::time::Duration;

use end2end::browser::{
    check_text, check_visible, click, click_text, drop_files, fill, find, press, screenshot,
    text_of, Browser,
};
use end2end::{tests, Suite, TestStack};
use playwright_rs::expect;

pub fn suite() -> Suite {
    end2end::suite(
        "browser",
        tests![
            the_spa_shows_the_health_the_worker_reports,
            navigation_reaches_every_page_of_the_layout,
            landing_on_the_dashboard_loads_its_own_bundle_and_its_links_the_whole_app,
            a_dashboard_whose_panels_cannot_come_keeps_its_first_screen_and_says_so,
            a_deep_link_loads_its_page_and_an_unknown_one_says_not_found,
            feedback_submitted_in_both_modes_completes_with_frozen_elapsed_times,
            a_prompt_job_is_followed_from_the_form_to_its_result_and_a_queued_one_is_canceled,
            three_pdfs_dropped_on_the_zone_are_uploaded_and_summarized,
            each_page_is_html_before_any_script_and_keeps_what_was_typed_before_the_wasm,
            no_page_scrolls_sideways_at_a_phone_width,
            a_pages_first_data_is_asked_with_the_html_and_only_once,
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
    check_text(&page, "anthropic-files", "by file_id (Files API)").await;
    // No Admin API key in this stack: the reconciliation panel says so, as a note.
    check_text(&page, "recon-note", "ANTHROPIC_ADMIN_KEY").await;
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

/// The wasm bundles a page has loaded: the stems of its `*_bg-*.wasm` files.
async fn bundles_loaded(page: &playwright_rs::protocol::Page) -> Vec<String> {
    page.evaluate(
        "() => performance.getEntriesByType('resource').map(r => new URL(r.name).pathname) \
           .filter(p => /_bg-[0-9a-f]{16}\\.wasm$/.test(p)).map(p => p.split('_bg-')[0].slice(1))",
        None::<&()>,
    )
    .await
    .expect("evaluate")
}

/// The split chunks a page has loaded: the stems of its `*_split_*-*.wasm` files.
async fn chunks_loaded(page: &playwright_rs::protocol::Page) -> Vec<String> {
    page.evaluate(
        "() => performance.getEntriesByType('resource').map(r => new URL(r.name).pathname) \
           .filter(p => /_split_.*-[0-9a-f]{16}\\.wasm$/.test(p)).map(p => p.slice(1).split('-')[0])",
        None::<&()>,
    )
    .await
    .expect("evaluate")
}

/// Whether the page asked for `/favicon.ico`, read half a second after its load event: a
/// browser asks for it then unless the page names an icon of its own.
async fn asked_for_a_favicon(page: &playwright_rs::protocol::Page) -> bool {
    page.evaluate(
        "() => new Promise(done => { \
           const read = () => setTimeout(() => done(performance.getEntriesByType('resource') \
             .some(r => new URL(r.name).pathname === '/favicon.ico')), 500); \
           if (document.readyState === 'complete') read(); \
           else addEventListener('load', read, { once: true }); })",
        None::<&()>,
    )
    .await
    .expect("evaluate")
}

async fn landing_on_the_dashboard_loads_its_own_bundle_and_its_links_the_whole_app(
    s: Arc<TestStack>,
) {
    let browser = Browser::launch(&s, "bundles").await;
    let page = browser.open(&s.url("/ui/dashboard")).await;
    end2end::browser::taken_over(&page).await;
    check_text(&page, "health-overall", "Worker ok").await;
    assert_eq!(bundles_loaded(&page).await, ["dashboard"]);
    // The panels below the first screen are the Dashboard bundle's chunk: fetched after the
    // first screen, and drawn.
    check_visible(&page, "routes").await;
    assert_eq!(
        chunks_loaded(&page).await,
        ["dashboard_split_dashboard_panels"]
    );
    // The tab icon is in the page: no request for /favicon.ico (a Worker call on Cloudflare).
    assert!(!asked_for_a_favicon(&page).await, "asked for /favicon.ico");
    // A link to a page the Dashboard's bundle does not draw loads it with the whole app, and the
    // whole app then reaches every page, the Dashboard too, without loading again.
    for (link, testid, path) in [
        ("Jobs", "page-jobs", "/ui/jobs"),
        ("Dashboard", "page-dashboard", "/ui/dashboard"),
        ("Dead letters", "page-dead-letters", "/ui/dead-letters"),
    ] {
        click_text(&page, "nav", link).await;
        check_visible(&page, testid).await;
        end2end::browser::taken_over(&page).await;
        assert!(page.url().ends_with(path), "{link}: {}", page.url());
        assert_eq!(bundles_loaded(&page).await, ["app"], "{link}");
        // The whole app draws the Dashboard's panels itself.
        assert!(chunks_loaded(&page).await.is_empty(), "{link}");
    }
    check_text(&page, "status-badge", "all systems ok").await;
    browser.close().await;
}

/// The Dashboard's panels below its first screen come in a chunk after it: when the chunk
/// cannot be fetched (the line dropped; a deploy since the page was loaded took it away), the
/// first screen stays and a line says to reload, in the panels' place.
async fn a_dashboard_whose_panels_cannot_come_keeps_its_first_screen_and_says_so(
    s: Arc<TestStack>,
) {
    let browser = Browser::launch(&s, "no-chunk").await;
    let page = browser.page().await;
    page.route("**/*_split_*.wasm", |route| async move {
        route.abort(None).await
    })
    .await
    .expect("refuse the chunk");
    page.goto(&s.url("/ui/dashboard"), None)
        .await
        .expect("navigate");
    end2end::browser::taken_over(&page).await;
    check_text(&page, "panels-error", "reload the page").await;
    // The first screen, drawn with the metrics.
    check_visible(&page, "chart-latency").await;
    assert_eq!(find(&page, "routes").count().await.unwrap(), 0, "no panel");
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

/// The id of the job just submitted, from the form's confirmation line, once it names a job
/// other than `previous`.
async fn last_id(page: &playwright_rs::protocol::Page, previous: Option<&str>) -> String {
    for _ in 0..100 {
        let text = text_of(page, "fb-last").await;
        let id = text.trim_start_matches("queued ").trim().to_string();
        if text.starts_with("queued ") && Some(id.as_str()) != previous {
            return id;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("the form did not confirm a new submission");
}

async fn feedback_submitted_in_both_modes_completes_with_frozen_elapsed_times(s: Arc<TestStack>) {
    let browser = Browser::launch(&s, "feedback").await;
    let page = browser.open(&s.url("/")).await;
    check_visible(&page, "feedback-form").await;

    // Sync, by keyboard: type, then Enter on the submit button.
    fill(
        &page,
        "fb-text",
        "The dark mode toggle stopped working after the last update.",
    )
    .await;
    press(&page, "fb-submit", "Enter").await;
    let sync_id = last_id(&page, None).await;
    let sync_item = format!("job-{sync_id}");
    check_text(&page, &sync_item, "completed").await;
    check_text(&page, &sync_item, "bug").await;

    // An empty text is refused next to its field.
    press(&page, "fb-submit", "Enter").await;
    check_text(&page, "error-text", "text must not be empty").await;

    // Batch: waits for the batch, completes once polled.
    fill(&page, "fb-text", "I love the new editor, thanks!").await;
    find(&page, "mode-batch")
        .check(None)
        .await
        .expect("choose batch");
    click(&page, "fb-submit").await;
    let batch_id = last_id(&page, Some(&sync_id)).await;
    let batch_item = format!("job-{batch_id}");
    check_text(&page, &batch_item, "Waiting for the Message Batch").await;
    let mut done = false;
    for _ in 0..60 {
        click(&page, "poll-now").await;
        end2end::pause(Duration::from_secs(1)).await;
        let t = find(&page, &batch_item)
            .inner_text()
            .await
            .unwrap_or_default();
        if t.contains("completed") {
            done = true;
            break;
        }
    }
    assert!(done, "the batch job did not complete in the SPA");
    check_text(&page, &batch_item, "positive").await;

    // Both elapsed times are frozen now.
    let elapsed = |id: String| {
        let page = &page;
        async move {
            find(page, &format!("job-{id}"))
                .get_by_test_id("job-elapsed")
                .inner_text()
                .await
                .unwrap()
        }
    };
    let before = (
        elapsed(sync_id.clone()).await,
        elapsed(batch_id.clone()).await,
    );
    end2end::pause(Duration::from_millis(1500)).await;
    let after = (elapsed(sync_id).await, elapsed(batch_id).await);
    assert_eq!(before, after, "elapsed times must freeze once completed");
    screenshot(&page, &s, "feedback").await;
    browser.close().await;
}

async fn a_prompt_job_is_followed_from_the_form_to_its_result_and_a_queued_one_is_canceled(
    s: Arc<TestStack>,
) {
    let browser = Browser::launch(&s, "jobs").await;
    let page = browser.open(&s.url("/")).await;
    // The model picker offers the catalog's current models (no retired one), the default first
    // selected.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    check_text(&page, "pj-model", "Claude Opus 5.5 (claude-opus-5-5)").await;
    let options = find(&page, "pj-model")
        .locator("option")
        .count()
        .await
        .unwrap();
    assert_eq!(options, pipeline::models::valid_ids(now).len());
    assert!(!text_of(&page, "pj-model")
        .await
        .contains("claude-sonnet-4-5"));
    fill(
        &page,
        "pj-prompt",
        "Explain the difference between a queue and a topic.",
    )
    .await;
    // Follow the link to the job's page: it completes and shows its result.
    submit_and_open_the_job(&page).await;
    check_visible(&page, "page-job").await;
    check_text(&page, "detail-status", "completed").await;
    check_text(&page, "detail-model", "claude-sonnet-5-5").await;
    check_text(
        &page,
        "job-result",
        "Explain the difference between a queue",
    )
    .await;
    check_text(&page, "attempt-log", "completed").await;
    screenshot(&page, &s, "job-detail").await;

    // The Jobs page lists it; filtering by kind and lane narrows the list.
    click_text(&page, "nav", "Jobs").await;
    check_visible(&page, "jobs-table").await;
    check_text(&page, "jobs-table", "prompt").await;
    find(&page, "filter-kind")
        .select_option("prompt", None)
        .await
        .expect("filter by kind");
    find(&page, "filter-priority")
        .select_option("bulk", None)
        .await
        .expect("filter by priority");
    // The list is fetched again for the filters: it empties once the answer is drawn.
    end2end::eventually(
        "no bulk prompt job yet",
        Duration::from_secs(30),
        || async {
            let rows = find(&page, "jobs-table")
                .locator("tbody tr")
                .count()
                .await
                .unwrap();
            (rows == 0).then_some(())
        },
    )
    .await;

    // A bulk job waits for its delivery delay: cancel it from its page.
    let page = browser.open(&s.url("/")).await;
    fill(&page, "pj-prompt", "Cancel me before I run").await;
    find(&page, "pj-priority")
        .select_option("bulk", None)
        .await
        .expect("bulk");
    submit_and_open_the_job(&page).await;
    click(&page, "cancel-job").await;
    check_text(&page, "detail-status", "canceled").await;
    screenshot(&page, &s, "job-canceled").await;
    browser.close().await;
}

/// Submits the prompt-job form, waits for its confirmation and follows its link to the job.
async fn submit_and_open_the_job(page: &playwright_rs::protocol::Page) {
    click(page, "pj-submit").await;
    check_text(page, "pj-last", "queued ").await;
    find(page, "pj-last")
        .locator("a")
        .click(None)
        .await
        .expect("open the job");
}

async fn three_pdfs_dropped_on_the_zone_are_uploaded_and_summarized(s: Arc<TestStack>) {
    let browser = Browser::launch(&s, "upload").await;
    let page = browser.open(&s.url("/ui/upload")).await;
    check_visible(&page, "dropzone").await;
    // A PNG named like a PDF is caught before anything is sent.
    let png = ("photo.pdf".to_string(), b"\x89PNG\r\n\x1a\n....".to_vec());
    assert_eq!(drop_files(&page, "dropzone", &[png]).await, 1);
    check_text(&page, "file-problem", "not a PDF").await;
    check_text(&page, "upload-hint", "photo.pdf is not a PDF").await;
    assert!(find(&page, "upload-submit").is_disabled().await.unwrap());
    click_text(&page, "chosen-files", "remove").await;
    let pdfs: Vec<(String, Vec<u8>)> = (1..=3)
        .map(|i| {
            (
                format!("drop-{i}.pdf"),
                end2end::pdfs::make(&format!("Dropped {i}"), i),
            )
        })
        .collect();
    assert_eq!(drop_files(&page, "dropzone", &pdfs).await, 3);
    check_text(&page, "chosen-files", "drop-3.pdf").await;
    screenshot(&page, &s, "upload-chosen").await;
    click(&page, "upload-submit").await;
    check_visible(&page, "page-batch").await;
    // Batch mode: the cron flushes and polls, as the dev tooling does every minute.
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    loop {
        s.cron().await;
        if text_of(&page, "batch-progress").await == "3/3" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the upload did not reach 3/3"
        );
        end2end::pause(Duration::from_secs(1)).await;
    }
    expect(find(&page, "file-row").first())
        .to_contain_text("completed")
        .await
        .expect("the first file completed");
    find(&page, "file-summary")
        .first()
        .locator("summary")
        .click(None)
        .await
        .expect("open a summary");
    expect(find(&page, "file-summary-text").first())
        .to_contain_text("page")
        .await
        .expect("the summary names its pages");
    screenshot(&page, &s, "upload-done").await;
    browser.close().await;
}

/// The pages with a shell of their own (`app::shell::SHELLS`, sign-in aside), and what each
/// one's shell must show.
const SHELLS: [(&str, &str); 6] = [
    ("/", "feedback-form"),
    ("/ui/jobs", "page-jobs"),
    ("/ui/dashboard", "page-dashboard"),
    ("/ui/dead-letters", "page-dead-letters"),
    ("/ui/usage", "page-usage"),
    ("/ui/upload", "page-upload"),
];

/// What `<body>` holds before its first `<script>`: the shell.
fn before_scripts(html: &str) -> &str {
    let body = &html[html.find("<body").expect("a body")..];
    &body[..body.find("<script").expect("a script")]
}

async fn each_page_is_html_before_any_script_and_keeps_what_was_typed_before_the_wasm(
    s: Arc<TestStack>,
) {
    // The HTML as it arrives: the frame and the page's own shell come before any script, and
    // a job's own page gets the frame, not another page's shell.
    let http = reqwest::Client::new();
    let get = |path: &str| {
        let req = http.get(s.url(path));
        async move { req.send().await.unwrap().text().await.unwrap() }
    };
    for (path, testid) in SHELLS {
        let html = get(path).await;
        let shell = before_scripts(&html);
        for want in ["data-testid=\"nav\"", &format!("data-testid=\"{testid}\"")] {
            assert!(shell.contains(want), "{path}: no {want} before the scripts");
        }
        assert!(html.contains(&format!("data-shell=\"{path}\"")), "{path}");
    }
    // The Dashboard's shell holds the sections its links jump to, the panels whose code comes
    // in a chunk after the first screen among them.
    let dashboard = get("/ui/dashboard").await;
    for anchor in ["paths", "routes", "routing", "cost", "health", "controls"] {
        let want = format!("id=\"{anchor}\"");
        assert!(before_scripts(&dashboard).contains(&want), "no {want}");
    }
    let frame = get("/ui/jobs/0193a7b2-no-such-job").await;
    assert!(before_scripts(&frame).contains("data-testid=\"nav\""));
    assert!(
        frame.contains("data-shell=\"\""),
        "the frame names no route"
    );
    assert!(
        !frame.contains("feedback-form"),
        "not the Submit page's shell"
    );

    // In the browser, with the wasm held back: the shell is on screen and takes text, its
    // submit waits for the wasm; once the wasm has taken over, what was typed is still there
    // and is what the form sends.
    let browser = Browser::launch(&s, "shell").await;
    let page = browser.page().await;
    let release = end2end::browser::hold_the_wasm(&page).await;
    let dom_only = playwright_rs::protocol::GotoOptions::new()
        .wait_until(playwright_rs::protocol::WaitUntil::DomContentLoaded);
    page.goto(&s.url("/"), dom_only).await.expect("navigate");
    check_visible(&page, "feedback-form").await;
    screenshot(&page, &s, "submit-shell").await;
    let typed = "Typed into the shell before the wasm arrived: the export button is gone.";
    fill(&page, "fb-text", typed).await;
    find(&page, "mode-batch")
        .check(None)
        .await
        .expect("choose batch");
    expect(find(&page, "fb-submit"))
        .to_be_disabled()
        .await
        .expect("no submit before the wasm");
    assert_eq!(
        page.locator("body[data-hydrated]").count().await.unwrap(),
        0,
        "the wasm was held back"
    );

    release.send(true).unwrap();
    end2end::browser::taken_over(&page).await;
    let kept = find(&page, "fb-text").input_value(None).await.unwrap();
    assert_eq!(kept, typed, "hydration kept what was typed");
    assert!(find(&page, "mode-batch").is_checked().await.unwrap());
    click(&page, "fb-submit").await;
    let id = last_id(&page, None).await;
    let item = format!("job-{id}");
    check_text(&page, &item, typed).await;
    // Sent in the mode chosen before the wasm: it waits for its Message Batch.
    check_text(&page, &item, "Waiting for the Message Batch").await;
    browser.close().await;
}

async fn no_page_scrolls_sideways_at_a_phone_width(s: Arc<TestStack>) {
    // A phone's width: wide tables scroll inside themselves, the navigation on its own line.
    let browser = Browser::launch(&s, "phone-width").await;
    let page = browser.page().await;
    page.set_viewport_size(playwright_rs::Viewport {
        width: 390,
        height: 800,
    })
    .await
    .expect("a phone's viewport");
    for (path, testid) in SHELLS {
        page.goto(&s.url(path), None).await.expect("navigate");
        end2end::browser::taken_over(&page).await;
        check_visible(&page, testid).await;
        // Once the data is drawn too (the tables are what grows): no loading line is left.
        expect(page.locator("main p.muted:has-text('Loading')"))
            .with_timeout(end2end::browser::CHECK_TIMEOUT)
            .to_have_count(0)
            .await
            .unwrap_or_else(|e| panic!("{path} kept a loading line: {e}"));
        let (scroll, client): (u32, u32) = page
            .evaluate(
                "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]",
                None::<&()>,
            )
            .await
            .expect("evaluate");
        assert!(
            scroll <= client,
            "{path} is {scroll} px wide on a {client} px screen"
        );
    }
    screenshot(&page, &s, "phone-width").await;
    browser.close().await;
}

async fn a_pages_first_data_is_asked_with_the_html_and_only_once(s: Arc<TestStack>) {
    // Every request the page makes to the Worker's API, in order (the wasm held back first).
    let browser = Browser::launch(&s, "first-gets").await;
    let page = browser.page().await;
    let asked = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    for pattern in ["**/api/**", "**/jobs?**"] {
        let asked = asked.clone();
        page.route(pattern, move |route| {
            asked
                .lock()
                .unwrap()
                .push(route.request().url().to_string());
            async move { route.continue_(None).await }
        })
        .await
        .expect("watch the API calls");
    }
    let release = end2end::browser::hold_the_wasm(&page).await;
    let dom_only = || {
        playwright_rs::protocol::GotoOptions::new()
            .wait_until(playwright_rs::protocol::WaitUntil::DomContentLoaded)
    };
    let seen = |path: &str| {
        let url = s.url(path);
        asked.lock().unwrap().iter().filter(|u| **u == url).count()
    };
    let wait_for = |path: &'static str| {
        let seen = &seen;
        async move {
            for _ in 0..200 {
                if seen(path) > 0 {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            panic!("{path} was not asked before the wasm");
        }
    };

    // The Dashboard: all its first data leaves while the wasm is still held back.
    page.goto(&s.url("/ui/dashboard"), dom_only())
        .await
        .expect("navigate");
    for path in [
        "/api/health",
        "/api/metrics?minutes=60",
        "/api/pauses",
        "/api/rollout?hours=48",
        "/api/routing?days=7",
        "/api/usage/cache",
        "/api/usage/tags",
        "/api/reconciliation",
    ] {
        wait_for(path).await;
    }
    assert_eq!(
        page.locator("body[data-hydrated]").count().await.unwrap(),
        0
    );

    // The Dead letters page (no refresh of its own): once the wasm has drawn the list, its
    // first data was asked exactly once, by boot.js: the app took those answers.
    asked.lock().unwrap().clear();
    page.goto(&s.url("/ui/dead-letters"), dom_only())
        .await
        .expect("navigate");
    let first = ["/api/health", "/api/dlq?status=dead_lettered&limit=50"];
    for path in first {
        wait_for(path).await;
    }
    release.send(true).unwrap();
    end2end::browser::taken_over(&page).await;
    // The list is drawn (empty or not) only once its data has come.
    expect(page.locator("[data-testid=dlq-list]"))
        .to_have_count(1)
        .await
        .expect("the list drawn");
    for path in first {
        assert_eq!(seen(path), 1, "{path}: asked again by the app");
    }
    browser.close().await;
}
