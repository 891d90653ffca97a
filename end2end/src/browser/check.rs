//! Checks: what the page must show, each waiting up to [`CHECK_TIMEOUT`] for it.

use std::time::Duration;

use playwright_rs::expect;
use playwright_rs::protocol::Page;

use super::find::find;

/// How long a check waits for the page to show what it expects.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(60);

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
