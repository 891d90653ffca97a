use leptos::prelude::*;
use leptos_router::components::A;

use crate::api::{self, ApiError};
use crate::components::status_badge::StatusBadge;
use pipeline::dto::HealthReport;
use pipeline::identity::AuthMode;

/// The Worker's health report, fetched once by the layout and shared with every page.
pub type Health = LocalResource<Result<HealthReport, ApiError>>;

/// Whether the Worker runs in open (demo) mode: no authentication, ops actions for everyone.
pub fn demo_mode(health: Health) -> impl Fn() -> bool + Copy {
    move || {
        health
            .get()
            .and_then(|r| r.ok())
            .is_some_and(|h| h.auth_mode == AuthMode::Open)
    }
}

/// The page frame: header with navigation and status, the demo banner, and the page itself.
#[component]
pub fn Layout(children: Children) -> impl IntoView {
    let health: Health = LocalResource::new(api::health);
    provide_context(health);
    let demo = demo_mode(health);
    view! {
        <header class="topbar">
            <a class="brand" href="/">"claude-pipeline"</a>
            <nav data-testid="nav">
                <A href="/" exact=true>"Submit"</A>
                <A href="/ui/jobs">"Jobs"</A>
                <A href="/ui/upload">"Upload"</A>
                <A href="/ui/usage">"Usage"</A>
                <A href="/ui/dashboard">"Dashboard"</A>
                <A href="/ui/dead-letters">"Dead letters"</A>
            </nav>
            <StatusBadge health=health />
            <ThemeToggle />
        </header>
        <Show when=demo>
            <div class="banner" data-testid="demo-banner">
                "demo mode — no authentication"
            </div>
        </Show>
        <main>{children()}</main>
    }
}

/// Switches between the light and dark palettes and remembers the choice.
#[component]
fn ThemeToggle() -> impl IntoView {
    let storage = || window().local_storage().ok().flatten();
    let initial = storage()
        .and_then(|s| s.get_item("theme").ok().flatten())
        .unwrap_or_default();
    let theme = RwSignal::new(initial);
    Effect::new(move |_| {
        let t = theme.get();
        if let Some(root) = document().document_element() {
            let _ = if t.is_empty() {
                root.remove_attribute("data-theme")
            } else {
                root.set_attribute("data-theme", &t)
            };
        }
        if let Some(s) = storage() {
            let _ = s.set_item("theme", &t);
        }
    });
    let next = move || match theme.get().as_str() {
        "dark" => "light",
        _ => "dark",
    };
    view! {
        <button
            class="theme-toggle"
            data-testid="theme-toggle"
            title="Switch light / dark"
            on:click=move |_| theme.set(next().to_string())
        >
            {move || if next() == "dark" { "◐ dark" } else { "◑ light" }}
        </button>
    }
}
