//! Debian's Chromium driven by playwright-rs, and the helpers tests are written with:
//! actions (do), finds (locate by `data-testid`) and checks (assert, with auto-waiting).

use std::path::Path;
use std::time::Duration;

use playwright_rs::protocol::{BrowserContext, BrowserContextOptions, Locator, Page, Playwright};
use playwright_rs::{expect, Viewport};

use crate::TestStack;

/// How long a check waits for the page to show what it expects.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(20);

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
        Browser {
            _playwright: playwright,
            context,
        }
    }

    /// A new page at `url`.
    pub async fn open(&self, url: &str) -> Page {
        let page = self.context.new_page().await.expect("new page");
        page.goto(url, None).await.expect("navigate");
        page
    }

    pub async fn close(self) {
        let _ = self.context.close().await;
    }
}

// ---- find ----

/// The element with this `data-testid`.
pub fn find(page: &Page, testid: &str) -> Locator {
    page.get_by_test_id(testid)
}

// ---- actions ----

/// Clicks the link or button whose visible text is `text` inside the element `within`.
pub async fn click_text(page: &Page, within: &str, text: &str) {
    find(page, within)
        .locator(format!("text={text}"))
        .click(None)
        .await
        .unwrap_or_else(|e| panic!("click {text:?} in {within}: {e}"));
}

/// Saves a screenshot under the suite's artifacts, for people to look at.
pub async fn screenshot(page: &Page, stack: &TestStack, name: &str) {
    let path = stack.artifacts.join(format!("{name}.png"));
    page.screenshot_to_file(&path, None)
        .await
        .unwrap_or_else(|e| panic!("screenshot {name}: {e}"));
}

/// Types `text` into the field (replacing what was there).
pub async fn fill(page: &Page, testid: &str, text: &str) {
    find(page, testid)
        .fill(text, None)
        .await
        .unwrap_or_else(|e| panic!("fill {testid}: {e}"));
}

/// Clicks the element.
pub async fn click(page: &Page, testid: &str) {
    find(page, testid)
        .click(None)
        .await
        .unwrap_or_else(|e| panic!("click {testid}: {e}"));
}

/// Focuses the element and presses a key on it (keyboard use).
pub async fn press(page: &Page, testid: &str, key: &str) {
    find(page, testid)
        .press(key, None)
        .await
        .unwrap_or_else(|e| panic!("press {key} on {testid}: {e}"));
}

/// The element's rendered text.
pub async fn text_of(page: &Page, testid: &str) -> String {
    find(page, testid)
        .inner_text()
        .await
        .unwrap_or_else(|e| panic!("text of {testid}: {e}"))
}

// ---- checks ----

/// The element shows `text` (waits up to [`CHECK_TIMEOUT`]).
pub async fn check_text(page: &Page, testid: &str, text: &str) {
    expect(find(page, testid))
        .with_timeout(CHECK_TIMEOUT)
        .to_contain_text(text)
        .await
        .unwrap_or_else(|e| panic!("[data-testid={testid}] should contain {text:?}: {e}"));
}

/// The element is visible (waits up to [`CHECK_TIMEOUT`]).
pub async fn check_visible(page: &Page, testid: &str) {
    expect(find(page, testid))
        .with_timeout(CHECK_TIMEOUT)
        .to_be_visible()
        .await
        .unwrap_or_else(|e| panic!("[data-testid={testid}] should be visible: {e}"));
}
