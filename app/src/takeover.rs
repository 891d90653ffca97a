//! What a page's fields and buttons know of the wasm's takeover of its shell (`crate::shell`):
//! whether it has happened yet ([`waiting`]), and what the shell's fields held when it did
//! ([`typed`], [`kept`]), so that hydration keeps what the visitor typed.

use std::cell::RefCell;
use std::collections::HashMap;

use leptos::prelude::*;

/// Whether the wasm has taken the page over (false in a shell, and until the first effect runs).
#[derive(Clone, Copy)]
pub struct Ready(RwSignal<bool>);

/// Provides [`Ready`]: false as the shell drew it, true once the first effect runs (effects run
/// only in the browser, after hydration).
pub fn provide_ready() {
    let ready = RwSignal::new(false);
    Effect::new(move |_| ready.set(true));
    provide_context(Ready(ready));
}

/// True until the wasm has taken the page over: a form's submit button is disabled meanwhile,
/// so a click or an Enter in a shell never sends the browser's own form submission (which
/// would reload the page and lose what was typed).
pub fn waiting() -> Signal<bool> {
    let ready = use_context::<Ready>();
    Signal::derive(move || ready.is_some_and(|r| !r.0.get()))
}

thread_local! {
    static TYPED: RefCell<HashMap<String, String>> = RefCell::new(HashMap::new());
}

/// What the shell's field `testid` held when the wasm arrived (text typed, an option chosen,
/// `"true"`/`"false"` for a checkbox or radio), once; `None` when no shell was taken over.
pub fn typed(testid: &str) -> Option<String> {
    TYPED.with(|t| t.borrow_mut().remove(testid))
}

/// A form field's signal: what the shell's field `testid` held when the wasm arrived
/// ([`typed`]), or `default`.
pub fn kept(testid: &str, default: &str) -> RwSignal<String> {
    RwSignal::new(typed(testid).unwrap_or_else(|| default.to_owned()))
}

/// Keeps every field's value the visitor may have changed before the wasm arrived.
#[cfg(feature = "hydrate")]
pub fn capture(body: &web_sys::HtmlElement) {
    use wasm_bindgen::JsCast;
    let Ok(fields) =
        body.query_selector_all("input[data-testid], textarea[data-testid], select[data-testid]")
    else {
        return;
    };
    TYPED.with(|t| {
        let mut t = t.borrow_mut();
        for i in 0..fields.length() {
            let Some(node) = fields.item(i) else { continue };
            let Some(el) = node.dyn_ref::<web_sys::Element>() else {
                continue;
            };
            let Some(testid) = el.get_attribute("data-testid") else {
                continue;
            };
            let value = if let Some(input) = el.dyn_ref::<web_sys::HtmlInputElement>() {
                match input.type_().as_str() {
                    "checkbox" | "radio" => input.checked().to_string(),
                    _ => input.value(),
                }
            } else if let Some(area) = el.dyn_ref::<web_sys::HtmlTextAreaElement>() {
                area.value()
            } else if let Some(select) = el.dyn_ref::<web_sys::HtmlSelectElement>() {
                select.value()
            } else {
                continue;
            };
            t.insert(testid, value);
        }
    });
}

/// Whether two paths are the same route (a trailing `/` aside).
pub fn same_route(a: &str, b: &str) -> bool {
    let trim = |p: &str| {
        let t = p.trim_end_matches('/');
        if t.is_empty() {
            "/".to_owned()
        } else {
            t.to_owned()
        }
    };
    trim(a) == trim(b)
}

// Only the Dashboard's bundle has paths it does not draw; the whole app sets the path and never
// reads it.
/// The path the page was loaded at, set once as the wasm starts (`crate::shell::start`).
#[cfg_attr(not(feature = "dashboard-bundle"), allow(dead_code))]
static LOADED_AT: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Notes the path the page was loaded at.
#[cfg_attr(not(feature = "dashboard-bundle"), allow(dead_code))]
pub fn loaded_at(path: &str) {
    let _ = LOADED_AT.set(path.to_owned());
}

/// Whether the router has moved away from the path the page was loaded at: a page this
/// bundle does not draw is then loaded from the Worker (`crate::pages::elsewhere`); on the
/// path it was loaded at, loading it again would only come back here.
#[cfg_attr(not(feature = "dashboard-bundle"), allow(dead_code))]
pub fn moved_since_loaded(path: &str) -> bool {
    LOADED_AT.get().is_some_and(|at| !same_route(at, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_values_are_read_once() {
        TYPED.with(|t| t.borrow_mut().insert("pj-prompt".into(), "hello".into()));
        assert_eq!(typed("pj-prompt").as_deref(), Some("hello"));
        assert_eq!(typed("pj-prompt"), None);
    }
}
