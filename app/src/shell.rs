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
//!   ([`crate::takeover::typed`]) and becomes the field's initial value, so hydration keeps it and the form sends
//!   what is shown.

#[cfg(any(feature = "ssr", feature = "hydrate"))]
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

/// The page with a bundle of its own (`dashboard-bundle`): the app with it alone.
pub const DASHBOARD: &str = "/ui/dashboard";

/// The bundle this build is: `app` (every page) or `dashboard` (the Dashboard alone). Its
/// files are named after it (`dashboard_bg-….wasm`), and its shells load them.
pub const BUNDLE: &str = if cfg!(feature = "dashboard-bundle") {
    "dashboard"
} else {
    "app"
};

/// The shells this build renders, as (route, file; the frame's route is empty): every page's
/// and the frame, or in the Dashboard's bundle the Dashboard's alone.
pub fn rendered_here() -> Vec<(&'static str, &'static str)> {
    let all = SHELLS.iter().copied().chain([("", FRAME)]);
    if cfg!(feature = "dashboard-bundle") {
        all.filter(|(route, _)| *route == DASHBOARD).collect()
    } else {
        all.collect()
    }
}

/// The frame alone (header, navigation, a loading line), for the pages whose path carries an
/// id (`/ui/jobs/:id`, `/ui/batches/:id`): the Worker answers them with this file.
pub const FRAME: &str = "ui/frame.html";

/// Whether `path` (the browser's) is the route `shell` was rendered for.
pub fn is_shell_of(shell: &str, path: &str) -> bool {
    !shell.is_empty() && crate::takeover::same_route(shell, path)
}

/// Starts the app in the browser: hydrates this page's shell, or draws the page in place of a
/// shell rendered for another route.
#[cfg(feature = "hydrate")]
pub fn start() {
    let Some(body) = document().body() else {
        return;
    };
    let path = window().location().pathname().unwrap_or_default();
    crate::takeover::loaded_at(&path);
    let shell = body.get_attribute(SHELL_ATTR).unwrap_or_default();
    if is_shell_of(&shell, &path) {
        crate::takeover::capture(&body);
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
        crate::takeover::provide_ready();
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
    fn the_whole_app_renders_every_shell_and_knows_no_load_yet() {
        // The host tests build the whole app (no `dashboard-bundle`).
        assert_eq!(BUNDLE, "app");
        let here = rendered_here();
        assert_eq!(here.len(), SHELLS.len() + 1);
        assert!(here.contains(&(DASHBOARD, "ui/dashboard.html")));
        assert!(here.contains(&("", FRAME)));
        // Before the wasm has started, no path counts as moved away from.
        assert!(!crate::takeover::moved_since_loaded("/ui/jobs"));
    }

    #[test]
    fn every_shell_has_its_own_file() {
        let mut files: Vec<_> = SHELLS.iter().map(|(_, f)| *f).chain([FRAME]).collect();
        files.sort_unstable();
        files.dedup();
        assert_eq!(files.len(), SHELLS.len() + 1);
    }
}
