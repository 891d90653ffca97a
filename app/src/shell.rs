//! Content before the wasm (issue 34): each page's shell is HTML when it arrives, rendered at
//! build time from these same components (the `shells` binary, `ssr` feature), and the wasm
//! takes it over by hydration (`hydrate` feature): it attaches to the elements already on
//! screen instead of drawing them again, so nothing shifts and nothing typed is lost.
//!
//! - A shell is the page with every fetch still pending: the frame, headings, forms, empty
//!   states and loading lines. What depends on who is signed in or on data arrives after the
//!   wasm, as it did before.
//! - `<body data-shell="/ui/jobs">` names the route a shell was rendered for. The wasm hydrates
//!   only when that is the page it is on; any other page (a job's or an upload's own page,
//!   served the frame shell, or an unknown path served `index.html`) is drawn from nothing in
//!   place of the shell, in the same task, so no blank frame is painted in between.
//! - Text typed into a shell's field before the wasm arrived is read from the page first
//!   ([`typed`]) and becomes the field's initial value, so hydration keeps it and the form sends
//!   what is shown.

use std::cell::RefCell;
use std::collections::HashMap;

use leptos::prelude::*;

/// The attribute on `<body>` naming the route its shell was rendered for.
pub const SHELL_ATTR: &str = "data-shell";

/// The pages rendered ahead of time, as (route, file under `dist/`). The static assets serve
/// `/ui/jobs` from `ui/jobs.html`, and `/` (and any path they do not know) from `index.html`.
pub const SHELLS: &[(&str, &str)] = &[
    ("/", "index.html"),
    ("/ui/jobs", "ui/jobs.html"),
    ("/ui/upload", "ui/upload.html"),
    ("/ui/usage", "ui/usage.html"),
    ("/ui/dashboard", "ui/dashboard.html"),
    ("/ui/dead-letters", "ui/dead-letters.html"),
    ("/ui/sign-in", "ui/sign-in.html"),
];

/// The frame alone (header, navigation, a loading line), for the pages whose path carries an
/// id (`/ui/jobs/:id`, `/ui/batches/:id`): the Worker answers them with this file.
pub const FRAME: &str = "ui/frame.html";

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

/// Whether `path` (the browser's) is the route `shell` was rendered for.
pub fn is_shell_of(shell: &str, path: &str) -> bool {
    let trim = |p: &str| {
        let t = p.trim_end_matches('/');
        if t.is_empty() {
            "/".to_owned()
        } else {
            t.to_owned()
        }
    };
    !shell.is_empty() && trim(shell) == trim(path)
}

/// Starts the app in the browser: hydrates this page's shell, or draws the page in place of a
/// shell rendered for another route.
#[cfg(feature = "hydrate")]
pub fn start() {
    let Some(body) = document().body() else {
        return;
    };
    let path = window().location().pathname().unwrap_or_default();
    let shell = body.get_attribute(SHELL_ATTR).unwrap_or_default();
    if is_shell_of(&shell, &path) {
        capture(&body);
        leptos::mount::hydrate_body(crate::App);
    } else {
        remove_all_but_scripts(&body);
        leptos::mount::mount_to_body(crate::App);
    }
    // For tests and the benchmark: the page is the wasm's from here on.
    body.set_attribute(TAKEN_ATTR, "").ok();
}

/// The attribute `<body>` carries once the wasm has taken the page over.
pub const TAKEN_ATTR: &str = "data-hydrated";

/// Keeps every field's value the visitor may have changed before the wasm arrived.
#[cfg(feature = "hydrate")]
fn capture(body: &web_sys::HtmlElement) {
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

/// Empties `<body>` of a shell that is not this page's, keeping the scripts.
#[cfg(feature = "hydrate")]
fn remove_all_but_scripts(body: &web_sys::HtmlElement) {
    let children = body.children();
    let mut gone = Vec::new();
    for i in 0..children.length() {
        if let Some(el) = children.item(i) {
            if el.tag_name() != "SCRIPT" {
                gone.push(el);
            }
        }
    }
    gone.iter().for_each(|el| el.remove());
    body.set_attribute(SHELL_ATTR, "").ok();
}

/// The `GET`s the first draw of `route` makes, each built as its call builds it
/// ([`crate::api::gets`]): the frame's health, then the page's own. [`FRAME`] (an empty
/// `route`) and pages whose first draw needs the path's id ask for the health only.
pub fn first_gets(route: &str) -> Vec<String> {
    use crate::api::gets;
    use crate::pages;
    let page = match route {
        "/" => vec![gets::feedback()],
        "/ui/jobs" => pages::jobs::first_gets(),
        "/ui/upload" => vec![gets::batches()],
        "/ui/dashboard" => pages::dashboard::first_gets(),
        "/ui/dead-letters" => pages::dead_letters::first_gets(),
        _ => Vec::new(),
    };
    std::iter::once(gets::health()).chain(page).collect()
}

/// What goes in the `<head>` of `route`'s page: its [`first_gets`] for `boot.js` to start
/// while the wasm downloads (`crate::api::early`), as a JSON data block (not a script: the
/// content security policy allows no inline script, and a data block is never run).
pub fn head(route: &str) -> String {
    let plan = crate::api::early::plan(first_gets(route));
    // `</` cannot end the block early: JSON allows `<\/` for `</`.
    let json = plan.to_string().replace("</", "<\\/");
    format!(
        r#"<script type="application/json" id="{}">{json}</script>"#,
        crate::api::early::PLAN_ID
    )
}

/// The shell of `route`: the app as it draws before any fetch has answered.
#[cfg(feature = "ssr")]
pub fn render(route: &str) -> String {
    Owner::new().with(|| {
        provide_context(leptos_router::location::RequestUrl::new(route));
        view! { <crate::App /> }.to_html()
    })
}

/// The [`FRAME`] shell: the page frame with a loading line where the page goes.
#[cfg(feature = "ssr")]
pub fn render_frame() -> String {
    use leptos_router::components::Router;
    Owner::new().with(|| {
        provide_context(leptos_router::location::RequestUrl::new("/ui/frame"));
        provide_ready();
        view! {
            <Router>
                <crate::components::layout::Layout>
                    <p class="muted">"Loading…"</p>
                </crate::components::layout::Layout>
            </Router>
        }
        .to_html()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shell_is_taken_over_only_on_its_own_route() {
        assert!(is_shell_of("/", "/"));
        assert!(is_shell_of("/ui/jobs", "/ui/jobs"));
        assert!(is_shell_of("/ui/jobs", "/ui/jobs/"));
        assert!(!is_shell_of("/", "/ui/jobs"));
        assert!(!is_shell_of("/ui/jobs", "/ui/jobs/abc"));
        // The frame names no route: always drawn over.
        assert!(!is_shell_of("", "/ui/jobs/abc"));
        assert!(!is_shell_of("", "/"));
    }

    #[test]
    fn typed_values_are_read_once() {
        TYPED.with(|t| t.borrow_mut().insert("pj-prompt".into(), "hello".into()));
        assert_eq!(typed("pj-prompt").as_deref(), Some("hello"));
        assert_eq!(typed("pj-prompt"), None);
    }

    #[test]
    fn every_page_names_its_first_gets_in_its_head() {
        for (route, _) in SHELLS.iter().chain(&[("", FRAME)]) {
            let gets = first_gets(route);
            assert_eq!(gets[0], "/api/health", "{route}: the frame's call first");
            let head = head(route);
            let open = r#"<script type="application/json" id="first-gets">"#;
            let json = head
                .strip_prefix(open)
                .and_then(|h| h.strip_suffix("</script>"))
                .unwrap_or_else(|| panic!("{route}: {head}"));
            let plan: serde_json::Value = serde_json::from_str(json).unwrap();
            assert_eq!(plan["urls"], serde_json::json!(gets), "{route}");
            assert_eq!(plan["key_item"], "claude-pipeline.api-key");
        }
        let dashboard = first_gets("/ui/dashboard");
        assert!(dashboard.contains(&"/api/metrics?minutes=60".to_string()));
        assert_eq!(first_gets("/ui/jobs")[1], "/jobs?limit=50");
        assert_eq!(
            first_gets("/ui/dead-letters")[1],
            "/api/dlq?status=dead_lettered&limit=50"
        );
    }

    #[test]
    fn every_shell_has_its_own_file() {
        let mut files: Vec<_> = SHELLS.iter().map(|(_, f)| *f).chain([FRAME]).collect();
        files.sort_unstable();
        files.dedup();
        assert_eq!(files.len(), SHELLS.len() + 1);
    }
}
