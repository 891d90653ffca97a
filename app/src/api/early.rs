//! The answers `boot.js` asked for before the wasm arrived: a page's shell names the `GET`s its
//! first draw makes ([`crate::shell::first_gets`]), `boot.js` starts them beside the wasm's
//! download with the session's key, and keeps each in `window.__firstGets` (absolute URL →
//! `{answer, key, at}`). The first call for that URL with the same key takes it, once; a later
//! one, another key or an answer older than [`FRESH_MS`] asks the Worker again.

use gloo_net::http::Response;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// An early answer older than this (ms since it was asked) is not used: the page asks again.
const FRESH_MS: f64 = 10_000.0;

/// The global `boot.js` fills.
const GLOBAL: &str = "__firstGets";

/// The id of the JSON block naming a page's first GETs (`boot.js` reads it).
pub const PLAN_ID: &str = "first-gets";

/// What `boot.js` needs to ask for `urls` as the calls would: the session storage item holding
/// the key, the header every call carries, and the URLs (relative to the page).
pub fn plan(urls: Vec<String>) -> serde_json::Value {
    serde_json::json!({
        "key_item": super::session::KEY_ITEM,
        "header": [pipeline::open_mode::CLIENT_HEADER, super::session::CLIENT],
        "urls": urls,
    })
}

/// The answer started for `url` (absolute, as the request carries it) with `key`, taken out of
/// the map so it serves one call; `None` when there is none, it is stale or it was asked with
/// another key.
pub fn take(url: &str, key: Option<&str>) -> Option<js_sys::Promise> {
    let window: JsValue = web_sys::window()?.into();
    let map: js_sys::Map = js_sys::Reflect::get(&window, &GLOBAL.into())
        .ok()?
        .dyn_into()
        .ok()?;
    let url = JsValue::from_str(url);
    let entry = map.get(&url);
    if entry.is_undefined() {
        return None;
    }
    map.delete(&url);
    let field = |k: &str| js_sys::Reflect::get(&entry, &k.into()).ok();
    let asked_at = field("at")?.as_f64()?;
    if js_sys::Date::now() - asked_at > FRESH_MS || field("key")?.as_string().as_deref() != key {
        return None;
    }
    field("answer")?.dyn_into().ok()
}

/// The response of an early answer, or `None` if it failed (the caller asks again). Read in a
/// task of its own: an answer already here would otherwise be drawn inside the task that
/// hydrates the page, one long task instead of two short ones.
pub async fn response(answer: js_sys::Promise) -> Option<Response> {
    gloo_timers::future::TimeoutFuture::new(0).await;
    let raw: web_sys::Response = JsFuture::from(answer).await.ok()?.dyn_into().ok()?;
    Some(Response::from(raw))
}
