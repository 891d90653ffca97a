//! Renders every page's shell at build time (`cargo xtask build`), from the same components the
//! wasm hydrates: prints `[{"route", "file", "html", "head"}]`, `html` being what goes inside
//! `<body>` and `head` what goes in `<head>` (the page's first GETs). See `app::shell`.

fn main() {
    let shells = app::shell::SHELLS
        .iter()
        .map(|(route, file)| (*route, *file, app::shell::render(route)))
        .chain([("", app::shell::FRAME, app::shell::render_frame())])
        .map(|(route, file, html)| {
            let head = app::shell::head(route);
            serde_json::json!({"route": route, "file": file, "html": html, "head": head})
        })
        .collect::<Vec<_>>();
    println!("{}", serde_json::Value::Array(shells));
}
