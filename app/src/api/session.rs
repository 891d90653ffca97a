//! Who the SPA calls as: the API key this browser session signed in with, and the client header
//! every call carries.

use gloo_net::http::RequestBuilder;

/// Where the signed-in API key is kept: this browser session only.
pub const KEY_ITEM: &str = "claude-pipeline.api-key";

fn session() -> Option<web_sys::Storage> {
    web_sys::window()?.session_storage().ok().flatten()
}

/// The API key this session signed in with, if any.
pub fn api_key() -> Option<String> {
    session()?.get_item(KEY_ITEM).ok().flatten()
}

/// What every call sends in [`pipeline::open_mode::CLIENT_HEADER`]: it says this is a client,
/// not a page's form (an open-mode stack needs it on a write).
pub const CLIENT: &str = "claude-pipeline-spa";

/// Every request carries the session's key, when there is one.
pub fn authed(rb: RequestBuilder) -> RequestBuilder {
    let rb = rb.header(pipeline::open_mode::CLIENT_HEADER, CLIENT);
    match api_key() {
        Some(k) => rb.header("authorization", &format!("Bearer {k}")),
        None => rb,
    }
}

/// Keeps `key` for this session.
pub fn keep(key: &str) {
    if let Some(s) = session() {
        let _ = s.set_item(KEY_ITEM, key);
    }
}

/// Forgets the session's key.
pub fn forget() {
    if let Some(s) = session() {
        let _ = s.remove_item(KEY_ITEM);
    }
}
