//! `cargo xtask bench render`: the dashboard's first render in headless Chromium, and the SPA's
//! and the Worker's sizes.
//!
//! A fresh local stack with some history (40 completed jobs, two cron runs, so the charts have
//! data). Each load opens `/ui/dashboard` and records, inside the page, `performance.now()` (ms
//! since navigation start) when the dashboard's frame is drawn (the SPA booted, its wasm
//! instantiated) and when the latency chart has its lines and the KPI cards their numbers (the
//! metrics fetched and drawn). Cold: a fresh browser profile per load (nothing cached), 5
//! loads; warm: 5 more loads in the last profile (HTTP cache). Then every page at phone speed
//! (`phone.rs`, issue 34). Sizes: every file the SPA ships (`dist/`) and the Worker bundle
//! (`worker/build/`), raw and gzip. Results: tables on stdout and `target/bench/render.md`,
//! `target/bench/phone.md`, `target/bench/sizes.md`.

use std::time::Duration;

use end2end::browser::{check_visible, Browser};
use end2end::{spawn_stack, TestStack};
use serde_json::json;

/// Installed before any page script: notes when the dashboard's frame and its data appear.
const PROBE: &str = r#"
(() => {
  const seen = () => {
    if (window.__frame === undefined && document.querySelector('[data-testid=page-dashboard]')) {
      window.__frame = performance.now();
    }
    if (window.__data === undefined
        && document.querySelector('[data-testid=chart-latency] polyline')
        && document.querySelector('[data-testid=kpi-dead-letters]')) {
      window.__data = performance.now();
    }
  };
  new MutationObserver(seen).observe(document, {childList: true, subtree: true});
})();
"#;

const LOADS: usize = 5;

pub fn run(_args: &[String]) {
    sizes();
    let rt = crate::common::runtime();
    let stack = std::sync::Arc::new(spawn_stack("bench-render", &rt));
    let (table, phone) = rt.block_on(async {
        history(&stack).await;
        let (mut cold, mut warm) = (Vec::new(), Vec::new());
        let mut last = None;
        for i in 0..LOADS {
            let browser = Browser::launch(&stack, &format!("render-{i}")).await;
            cold.push(load(&browser, &stack).await);
            if let Some(b) = last.replace(browser) {
                b.close().await;
            }
        }
        let browser = last.expect("a browser");
        for _ in 0..LOADS {
            warm.push(load(&browser, &stack).await);
        }
        browser.close().await;
        let med = |v: &[(f64, f64)], pick: fn(&(f64, f64)) -> f64| {
            let mut xs: Vec<f64> = v.iter().map(pick).collect();
            xs.sort_by(|a, b| a.total_cmp(b));
            xs[xs.len() / 2]
        };
        let max = |v: &[(f64, f64)]| v.iter().map(|x| x.1).fold(0.0, f64::max);
        let phone = crate::phone::run(&stack).await;
        let table = format!(
            "Dashboard first render in headless Chromium (Debian's), against `wrangler dev` on \
             this machine; ms from navigation start, median of {LOADS} loads (worst for data).\n\n\
             | loads | frame drawn (SPA booted) ms | charts and KPIs with data ms | worst ms |\n\
             |---|---:|---:|---:|\n\
             | cold (fresh profile) | {:.0} | {:.0} | {:.0} |\n\
             | warm (HTTP cache) | {:.0} | {:.0} | {:.0} |\n",
            med(&cold, |x| x.0),
            med(&cold, |x| x.1),
            max(&cold),
            med(&warm, |x| x.0),
            med(&warm, |x| x.1),
            max(&warm),
        );
        (table, phone)
    });
    drop(stack);
    rt.shutdown_timeout(Duration::from_secs(5));
    println!("{table}");
    crate::common::write("render", &table);
    println!("{phone}");
    crate::common::write("phone", &phone);
}

/// Completed jobs and two metrics rows, so the charts have something to draw.
async fn history(s: &std::sync::Arc<TestStack>) {
    let user = s.user("bench-render");
    let mut ids = Vec::new();
    for i in 0..40 {
        ids.push(
            user.submit_job(&json!({"prompt": format!("History {i}."), "max_tokens": 64, "output_config": {"effort": "low"}}))
                .await,
        );
    }
    // The SPA's own user (anonymous in open mode) has jobs for its Jobs page too.
    let anon = s.anon();
    let mut mine = Vec::new();
    for i in 0..10 {
        mine.push(
            anon.submit_job(&json!({"prompt": format!("Mine {i}."), "max_tokens": 64, "output_config": {"effort": "low"}}))
                .await,
        );
    }
    for id in &ids {
        user.job_reaches(id, "completed", Duration::from_secs(120))
            .await;
    }
    for id in &mine {
        anon.job_reaches(id, "completed", Duration::from_secs(120))
            .await;
    }
    for _ in 0..2 {
        assert_eq!(s.trigger_cron(), 200);
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// One load of the dashboard: (frame ms, data ms) since navigation start.
async fn load(browser: &Browser, s: &TestStack) -> (f64, f64) {
    let page = browser.context.new_page().await.expect("new page");
    page.add_init_script(PROBE).await.expect("init script");
    page.goto(&s.url("/ui/dashboard"), None)
        .await
        .expect("navigate");
    check_visible(&page, "chart-latency").await;
    check_visible(&page, "kpi-dead-letters").await;
    let (frame, data): (f64, f64) = end2end::eventually(
        "the probe saw the dashboard drawn",
        Duration::from_secs(20),
        || async {
            let v: serde_json::Value = page
                .evaluate(
                    "() => [window.__frame ?? null, window.__data ?? null]",
                    None::<&()>,
                )
                .await
                .expect("evaluate");
            Some((v[0].as_f64()?, v[1].as_f64()?))
        },
    )
    .await;
    let _ = page.close().await;
    (frame, data)
}

/// What the SPA ships and the Worker bundle, raw and gzip.
fn sizes() {
    let kb = |n: usize| format!("{:.0}", n as f64 / 1024.0);
    let mut table = String::from(
        "Sizes of the release builds (gzip -9 as a stand-in for the transfer encoding).\n\n\
         | artifact | file | raw KiB | gzip KiB |\n|---|---|---:|---:|\n",
    );
    let mut add = |what: &str, dirs: &[std::path::PathBuf], exts: &[&str]| {
        let (mut raw, mut gz) = (0, 0);
        let mut entries: Vec<_> = dirs
            .iter()
            .flat_map(|dir| {
                std::fs::read_dir(dir)
                    .unwrap_or_else(|e| panic!("{}: {e} (run `cargo xtask build`)", dir.display()))
                    .flatten()
            })
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| exts.iter().any(|x| e == *x)))
            .collect();
        entries.sort();
        for p in entries {
            let bytes = std::fs::read(&p).expect("read");
            let g = xtask::build::gzip_len(&bytes).expect("gzip");
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            table.push_str(&format!(
                "| {what} | {name} | {} | {} |\n",
                kb(bytes.len()),
                kb(g)
            ));
            raw += bytes.len();
            gz += g;
        }
        table.push_str(&format!(
            "| **{what}, in all** | | **{}** | **{}** |\n",
            kb(raw),
            kb(gz)
        ));
    };
    add(
        "SPA (wasm + js + css + html)",
        &[xtask::paths::dist()],
        &["wasm", "js", "css", "html"],
    );
    let worker = xtask::paths::root().join("worker/build");
    add(
        "Worker bundle",
        &[worker.clone(), worker.join("worker")],
        &["wasm", "mjs", "js"],
    );
    println!("{table}");
    crate::common::write("sizes", &table);
}
