//! Debian's Chromium driven by playwright-rs, and the helpers tests are written with:
//! [`action`]s (do), [`find`]s (locate by `data-testid`) and [`check`]s (assert, with
//! auto-waiting). All three are re-exported here: `use end2end::browser::{click, find, ..}`.

use std::path::Path;

use playwright_rs::protocol::{BrowserContext, BrowserContextOptions, Page, Playwright};
use playwright_rs::Viewport;

use crate::TestStack;

pub mod action;
pub mod check;
pub mod find;

pub use action::*;
pub use check::*;
pub use find::*;

/// How long a navigation may take, in ms.
const NAVIGATION_TIMEOUT_MS: f64 = 120_000.0;
/// How long an action (a click, a fill) may wait for its element, in ms.
const ACTION_TIMEOUT_MS: f64 = 60_000.0;

/// A headless Chromium with a fresh profile. Keep it alive for as long as its pages are used.
pub struct Browser {
    _playwright: Playwright,
    pub context: BrowserContext,
    /// Where each page's diary goes ([`Diary`]).
    diary: std::path::PathBuf,
}

impl Browser {
    pub async fn launch(stack: &TestStack, name: &str) -> Browser {
        let chromium = xtask::paths::CHROMIUM;
        assert!(
            Path::new(chromium).exists(),
            "{chromium} is missing: `cargo xtask test` installs it with apt-get"
        );
        let playwright = Playwright::launch()
            .await
            .expect("start the Playwright driver (node_modules/playwright-core)");
        let profile = stack.artifacts.join(format!("profile-{name}"));
        let _ = std::fs::remove_dir_all(&profile);
        let options = BrowserContextOptions::builder()
            .executable_path(chromium.to_string())
            .headless(true)
            .viewport(Viewport {
                width: 1280,
                height: 800,
            })
            // Without the networking flags Chromium floods the closed network with requests.
            .args(
                [
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-quic",
                    "--no-first-run",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                ]
                .map(String::from)
                .to_vec(),
            )
            .build();
        let context = playwright
            .chromium()
            .launch_persistent_context_with_options(profile.to_string_lossy(), options)
            .await
            .expect("launch Chromium");
        // Limits far from any load: a first visit compiles the SPA's wasm while other suites'
        // stacks share the 2 cores (a navigation took over Playwright's default 30 s on a fresh
        // clone, five stacks starting beside it). A check that fails still fails, later.
        context
            .set_default_navigation_timeout(NAVIGATION_TIMEOUT_MS)
            .await;
        context.set_default_timeout(ACTION_TIMEOUT_MS).await;
        Browser {
            _playwright: playwright,
            context,
            diary: stack.artifacts.join(format!("browser-{name}.log")),
        }
    }

    /// A new page at `url` ([`Browser::page`]), once the wasm has taken it over.
    pub async fn open(&self, url: &str) -> Page {
        let page = self.page().await;
        page.goto(url, None).await.expect("navigate");
        taken_over(&page).await;
        page
    }

    /// A new blank page, its requests, console and errors written to the browser's diary.
    pub async fn page(&self) -> Page {
        let page = self.context.new_page().await.expect("new page");
        page.set_default_navigation_timeout(NAVIGATION_TIMEOUT_MS)
            .await;
        page.set_default_timeout(ACTION_TIMEOUT_MS).await;
        Diary::open(&self.diary).watch(&page).await;
        page
    }

    pub async fn close(self) {
        let _ = self.context.close().await;
    }
}

/// A page's diary: every request it makes and how it ended, its console and its errors, with
/// milliseconds since the page opened, appended to `<artifacts>/browser-NAME.log` (kept with the
/// suite's logs). Twice on 2026-12-04 a page never drew its SPA under load; this is what tells
/// which of its requests did not end.
#[derive(Clone)]
struct Diary {
    file: std::sync::Arc<std::sync::Mutex<std::fs::File>>,
    start: std::time::Instant,
}

impl Diary {
    fn open(path: &Path) -> Diary {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
        Diary {
            file: std::sync::Arc::new(std::sync::Mutex::new(file)),
            start: std::time::Instant::now(),
        }
    }

    fn write(&self, line: String) {
        use std::io::Write;
        let ms = self.start.elapsed().as_millis();
        let mut f = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let _ = writeln!(f, "{ms:>7} {line}");
    }

    async fn watch(self, page: &Page) {
        self.write("page opened".into());
        let d = self.clone();
        let _ = page
            .on_request(move |r| {
                d.write(format!("request  {} {}", r.method(), r.url()));
                async { Ok(()) }
            })
            .await;
        let d = self.clone();
        let _ = page
            .on_request_finished(move |r| {
                d.write(format!("finished {} {}", r.method(), r.url()));
                async { Ok(()) }
            })
            .await;
        let d = self.clone();
        let _ = page
            .on_request_failed(move |r| {
                let why = r.failure().unwrap_or_default();
                d.write(format!("failed   {} {} ({why})", r.method(), r.url()));
                async { Ok(()) }
            })
            .await;
        let d = self.clone();
        let _ = page
            .on_console(move |m| {
                d.write(format!("console  {}: {}", m.type_(), m.text()));
                async { Ok(()) }
            })
            .await;
        let d = self.clone();
        let _ = page
            .on_pageerror(move |e| {
                d.write(format!("error    {e}"));
                async { Ok(()) }
            })
            .await;
        let _ = page
            .on_crash(move || {
                self.write("crashed".into());
                async { Ok(()) }
            })
            .await;
    }
}

/// Waits until the wasm has taken the page over (`<body data-hydrated>`, `app::shell`): before
/// it, a page is its build-time shell, which shows the forms but sends nothing.
pub async fn taken_over(page: &Page) {
    playwright_rs::expect(page.locator("body[data-hydrated]"))
        .with_timeout(check::CHECK_TIMEOUT)
        .to_have_count(1)
        .await
        .unwrap_or_else(|e| panic!("the wasm never took the page over: {e}"));
}

/// Holds the SPA's wasm back from `page` until the answer is told `true`: meanwhile the page is
/// its build-time shell, as a visitor on a slow line sees it.
pub async fn hold_the_wasm(page: &Page) -> tokio::sync::watch::Sender<bool> {
    let (release, held) = tokio::sync::watch::channel(false);
    page.route("**/*_bg-*.wasm", move |route| {
        let mut held = held.clone();
        async move {
            let _ = held.wait_for(|go| *go).await;
            route.continue_(None).await
        }
    })
    .await
    .expect("hold the wasm back");
    release
}
