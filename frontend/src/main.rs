//! The SPA's wasm entry point: panic hook, then take over the page's build-time shell
//! (`app::shell::start`: hydrate it, or draw the page in its place).

fn main() {
    console_error_panic_hook::set_once();
    app::shell::start();
}
