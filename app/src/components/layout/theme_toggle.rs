//! The light / dark switch in the header.

use leptos::prelude::*;

/// Switches between the light and dark palettes and remembers the choice.
#[component]
pub fn ThemeToggle() -> impl IntoView {
    let storage = || window().local_storage().ok().flatten();
    // Starts as the build-time shell drew it (no choice); the stored choice arrives with the
    // first effect, after the wasm has taken the page over.
    let theme = RwSignal::new(String::new());
    Effect::new(move |loaded: Option<()>| {
        let t = theme.get();
        if loaded.is_none() {
            let stored = storage().and_then(|s| s.get_item("theme").ok().flatten());
            if let Some(stored) = stored.filter(|s| *s != t) {
                // Runs this effect again, with the stored choice.
                theme.set(stored);
                return;
            }
        }
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
