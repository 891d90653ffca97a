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
        }
    }

    /// A new page at `url`.
    pub async fn open(&self, url: &str) -> Page {
        let page = self.context.new_page().await.expect("new page");
        page.set_default_navigation_timeout(NAVIGATION_TIMEOUT_MS)
            .await;
        page.set_default_timeout(ACTION_TIMEOUT_MS).await;
        page.goto(url, None).await.expect("navigate");
        page
    }

    pub async fn close(self) {
        let _ = self.context.close().await;
    }
}
