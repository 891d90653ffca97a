//! Finds: where things are on the page, by `data-testid`.

use playwright_rs::protocol::{Locator, Page};

/// The element with this `data-testid`.
pub fn find(page: &Page, testid: &str) -> Locator {
    page.get_by_test_id(testid)
}

/// The element's rendered text.
pub async fn text_of(page: &Page, testid: &str) -> String {
    find(page, testid)
        .inner_text()
        .await
        .unwrap_or_else(|e| panic!("text of {testid}: {e}"))
}
