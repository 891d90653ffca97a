//! The SPA's wasm entry point: panic hook, then mount `app::App` on `<body>`.

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(app::App);
}
