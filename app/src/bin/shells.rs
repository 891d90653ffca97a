//! Renders every page's shell at build time (`cargo xtask build`), from the same components the
//! wasm hydrates: prints `[{"route", "file", "html"}]`, the HTML being what goes inside
//! `<body>`. See `app::shell`.

fn main() {
    let shells = app::shell::SHELLS
        .iter()
        .map(|(route, file)| (*route, *file, app::shell::render(route)))
        .chain([("", app::shell::FRAME, app::shell::render_frame())])
        .map(|(route, file, html)| serde_json::json!({"route": route, "file": file, "html": html}))
        .collect::<Vec<_>>();
    println!("{}", serde_json::Value::Array(shells));
}
