//! Renders every page's shell at build time (`cargo xtask build`), from the same components the
//! wasm hydrates: prints `[{"route", "file", "bundle", "html", "head"}]`, `html` being what goes
//! inside `<body>`, `head` what goes in `<head>` (the page's first GETs) and `bundle` the wasm
//! that hydrates it. With `dashboard-bundle`, the Dashboard's shell alone, from the Dashboard's
//! bundle. See `app::shell`.

fn main() {
    let shells = app::shell::rendered_here()
        .into_iter()
        .map(|(route, file)| {
            let html = if route.is_empty() {
                app::shell::render_frame()
            } else {
                app::shell::render(route)
            };
            let head = app::shell::head(route);
            serde_json::json!({
                "route": route,
                "file": file,
                "bundle": app::shell::BUNDLE,
                "html": html,
                "head": head,
            })
        })
        .collect::<Vec<_>>();
    println!("{}", serde_json::Value::Array(shells));
}
