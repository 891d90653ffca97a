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

/// Whether the caller may see the ops pages and controls (admins; everyone in demo mode, where
/// the Worker names every caller an admin). The Worker enforces it anyway: this only hides.
pub fn is_admin(health: Health) -> impl Fn() -> bool + Copy {
    move || {
        health
            .get()
            .and_then(|r| r.ok())
            .is_some_and(|h| h.role == pipeline::identity::Role::Admin)
    }
}

/// The page frame: header with navigation and status, the demo banner, and the page itself.
#[component]
pub fn Layout(children: Children) -> impl IntoView {
    let health: Health = LocalResource::new(api::health);
    provide_context(health);
    let demo = demo_mode(health);
    let is_admin = is_admin(health);
    view! {
        <header class="topbar">
            <a class="brand" href="/">"claude-pipeline"</a>
            <nav data-testid="nav">
                <A href="/" exact=true>"Submit"</A>
                <A href="/ui/jobs">"Jobs"</A>
                <A href="/ui/upload">"Upload"</A>
                <A href="/ui/usage">"Usage"</A>
                <Show when=is_admin>
                    <A href="/ui/dashboard">"Dashboard"</A>
                    <A href="/ui/dead-letters">"Dead letters"</A>
                </Show>
            </nav>
            <Who health=health />
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

/// Who is signed in (keys mode), with a way out; or the way in when no key is accepted.
#[component]
fn Who(health: Health) -> impl IntoView {
    move || match health.get() {
        Some(Ok(h)) if h.auth_mode == AuthMode::Keys => view! {
            <span class="who" data-testid="signed-in">
                {format!("{} ({})", h.user_id, h.role.as_str())}
                " · "
                <button class="link" data-testid="sign-out" on:click=move |_| {
                    api::sign_out();
                    let _ = window().location().set_href("/ui/sign-in");
                }>"sign out"</button>
            </span>
        }
        .into_any(),
        Some(Err(e)) if e.status == 401 => view! {
            <a class="who" href="/ui/sign-in" data-testid="sign-in-link">"Sign in"</a>
        }
        .into_any(),
        _ => ().into_any(),
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
