//! The production envelope at its worst cases (issue 32): what one isolate holds while it
//! serves the largest upload the API accepts, measured the way production's 128 MB limit sees
//! it — V8's own heap figures through the runtime's inspector (`end2end::heap`) plus the
//! Worker's linear memory, which V8 keeps outside them and which never shrinks.
//!
//! Sized by `ENVELOPE_UPLOAD_FILES` (files of 18.8 MiB in the upload: 5 in the soak run, the
//! API's largest, 94 MiB of the 95 MiB it accepts; 1 in the main set — enough to see a file
//! held whole in the Worker's memory, which [`WASM_GOAL`] is smaller than).

use std::sync::Arc;
use std::time::Duration;

use end2end::heap::{HeapUsage, HeapWatch, Inspector, MIB};
use end2end::{pdfs, tests, StackConfig, Suite, TestStack};

pub fn suite() -> Suite {
    end2end::suite_timed(
        "envelope",
        StackConfig::default(),
        Duration::from_secs(900),
        tests![the_largest_upload_leaves_the_isolate_as_small_as_it_found_it_in_every_mode],
    )
}

/// One file of the largest upload: 18.8 MiB, under the 20 MiB a file may have.
const FILE_BYTES: usize = 19_713_229;
/// What stays once every job has ended: what every later request of the isolate carries.
const IDLE_GOAL: u64 = 64 * MIB;
/// The Worker's own linear memory never shrinks: it must never hold a file (20 MiB), only
/// slices of one.
const WASM_GOAL: u64 = 16 * MIB;
/// Issue 32's goal for the peak: the live memory (after a collection, sampled once a second
/// through the upload's life), which is what the isolate must hold. The samples between
/// collections also count ArrayBuffers V8 has not yet collected — an upload's bytes pass
/// through as such buffers 2–2.5 times, and without a collection inside the request the raw
/// figure reached 2–2.5× the upload (2026-12-06); it is printed beside the live one.
const PEAK_GOAL: u64 = 100 * MIB;

fn files_in_upload() -> usize {
    std::env::var("ENVELOPE_UPLOAD_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
}

/// The Worker's linear memory, as its last invocation logged it (`use:` lines, bytes).
fn wasm_memory(s: &TestStack) -> u64 {
    s.log_lines("use: ")
        .iter()
        .filter_map(|l| {
            let json = &l[l.find('{')?..];
            serde_json::from_str::<serde_json::Value>(json).ok()?["wasm_memory_bytes"].as_u64()
        })
        .max()
        .unwrap_or(0)
}

fn mib(b: u64) -> String {
    format!("{:.1} MiB", b as f64 / MIB as f64)
}

/// What the isolate holds: V8's heap and backing stores, and the wasm memory beside them.
fn isolate(h: &HeapUsage, wasm: u64) -> u64 {
    h.isolate() + wasm
}

async fn the_largest_upload_leaves_the_isolate_as_small_as_it_found_it_in_every_mode(
    s: Arc<TestStack>,
) {
    let n = files_in_upload();
    let files: Vec<(String, Vec<u8>)> = (0..n)
        .map(|i| {
            let title = format!("Scanned report {i}");
            (format!("scan-{i}.pdf"), pdfs::padded(&title, 3, FILE_BYTES))
        })
        .collect();
    let mut inspector = Inspector::connect(s.inspector_port())
        .await
        .expect("the runtime's inspector");
    let start = inspector.heap_kept().await.expect("heap");
    let mut rows = Vec::new();
    // Files API first: once the Worker has seen a base URL without it, it stops asking.
    for (files_api, mode) in [
        (true, "sync"),
        (true, "batch"),
        (false, "sync"),
        (false, "batch"),
    ] {
        s.sim.lock().knobs.files_api = files_api;
        // Every fifth sample (once a second) after a full collection: the live memory.
        let watch = HeapWatch::start(inspector, Some(5))
            .await
            .expect("sampling");
        let user = s.user(&format!("scanner-{mode}-{files_api}"));
        let id = user.submit_upload(&files, &[("mode", mode)]).await;
        let b = user.upload_finished(&id, Duration::from_secs(600)).await;
        let (back, seen) = watch.stop().await;
        let (peak, live) = (seen.peak, seen.live_peak);
        inspector = back;
        assert_eq!(b["counts"]["completed"].as_u64(), Some(n as u64), "{b}");
        let idle = inspector.heap_kept().await.expect("heap");
        let wasm = wasm_memory(&s);
        let row = format!(
            "| {} MiB in {n} files | {mode} | Files API {} | {} (JS {} + backing {} + wasm {}) | {} (JS {} + backing {}) | {} | {} samples, {} after a collection |",
            n as u64 * FILE_BYTES as u64 / MIB,
            if files_api { "on" } else { "off" },
            mib(isolate(&live, wasm)),
            mib(live.total),
            mib(live.backing),
            mib(wasm),
            mib(isolate(&peak, wasm)),
            mib(peak.total),
            mib(peak.backing),
            mib(isolate(&idle, wasm)),
            seen.samples,
            seen.collections,
        );
        println!("envelope memory: {row}");
        rows.push((row, isolate(&live, wasm), isolate(&idle, wasm), wasm));
    }
    s.sim.lock().knobs.files_api = true;
    println!(
        "envelope memory: at start {} (JS {} + backing {} + wasm {})",
        mib(isolate(&start, wasm_memory(&s))),
        mib(start.total),
        mib(start.backing),
        mib(wasm_memory(&s))
    );
    for (row, live, idle, wasm) in &rows {
        assert!(
            *live <= PEAK_GOAL && *idle <= IDLE_GOAL && *wasm <= WASM_GOAL,
            "live at the peak {} (goal {}), idle {} (goal {}), the Worker's memory {} (goal {}): \
             {row}",
            mib(*live),
            mib(PEAK_GOAL),
            mib(*idle),
            mib(IDLE_GOAL),
            mib(*wasm),
            mib(WASM_GOAL)
        );
    }
}
