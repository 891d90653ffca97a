//! The page frame every route shares: header, navigation, who is signed in, health, theme.

mod health;
mod health_badge;
mod theme_toggle;
mod who;

use leptos::prelude::*;
use leptos_router::components::A;

use crate::api;
pub use health::{demo_mode, is_admin, Health};
use health_badge::HealthBadge;
use theme_toggle::ThemeToggle;
use who::Who;

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
            <HealthBadge health=health />
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
