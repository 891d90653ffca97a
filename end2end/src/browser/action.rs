//! Actions: what a user does on the page (type, click, press, sign in, drop files), and
//! screenshots for people to look at.

use playwright_rs::protocol::Page;

use super::find::find;
use crate::TestStack;

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

/// Signs in on the SPA's sign-in page with `key` and waits until it says who is signed in.
pub async fn sign_in(page: &Page, key: &str) {
    click(page, "sign-in-link").await;
    fill(page, "api-key", key).await;
    click(page, "sign-in").await;
    super::check::check_visible(page, "signed-in").await;
}

/// Drops files on the element with a real `DataTransfer`, as a user dragging them from the
/// desktop does (the bytes go in as base64). Answers how many files the drop carried.
pub async fn drop_files(page: &Page, testid: &str, files: &[(String, Vec<u8>)]) -> u32 {
    use base64::Engine;
    let files: Vec<(String, String)> = files
        .iter()
        .map(|(n, b)| {
            (
                n.clone(),
                base64::engine::general_purpose::STANDARD.encode(b),
            )
        })
        .collect();
    let js = "(el, files) => { const dt = new DataTransfer(); \
        for (const [name, b64] of files) { const bin = atob(b64); const bytes = new Uint8Array(bin.length); \
        for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i); \
        dt.items.add(new File([bytes], name, {type: 'application/pdf'})); } \
        for (const type of ['dragenter', 'dragover', 'drop']) { \
        el.dispatchEvent(new DragEvent(type, {bubbles: true, cancelable: true, dataTransfer: dt})); } \
        return dt.files.length; }";
    find(page, testid)
        .evaluate(js, Some(&files))
        .await
        .unwrap_or_else(|e| panic!("drop on {testid}: {e}"))
}
