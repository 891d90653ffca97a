//! A Message Batch of many requests settled from its streamed results: a poll reads at most
//! `BATCH_RESULTS_PER_RUN` (5,000) lines and the next resumes after the last chunk it settled;
//! the runtime is killed in the middle of a poll. Every job ends completed exactly once, billed
//! once, with one stored answer, and the runtime's memory stays bounded while the answers pass
//! through it.
//!
//! Its size is `STREAM_JOBS`: 12,000 in `cargo xtask test` (three polls, the second killed), and
//! 100,000 — the API's maximum per batch — in `cargo xtask test --soak` (≈ 13 minutes alone).

use std::sync::Arc;
use std::time::{Duration, Instant};

use end2end::api::client;
use end2end::heap::{Inspector, MIB};
use end2end::{tests, StackConfig, Suite, TestStack};
use serde_json::Value;

pub fn suite() -> Suite {
    // A poll of 5,000 lines takes a dozen seconds on the local runtime: 20 of them at full size.
    let polls = jobs() as u64 / PER_RUN + 1;
    end2end::suite_timed(
        "stream",
        StackConfig::vars(&[("BATCH_RESULTS_PER_RUN", &PER_RUN.to_string())]),
        Duration::from_secs(300 + 60 * polls),
        tests![a_big_batch_settles_in_bounded_memory_and_a_restart_loses_and_doubles_nothing],
    )
}

/// The batch's size: `STREAM_JOBS`, at most the API's 100,000 requests per batch.
fn jobs() -> usize {
    std::env::var("STREAM_JOBS")
        .ok()
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("STREAM_JOBS must be a number, got {v:?}"))
        })
        .unwrap_or(12_000)
        .clamp(2 * PER_RUN as usize + 1, 100_000)
}
/// Lines a poll reads (the production default of `BATCH_RESULTS_PER_RUN`).
const PER_RUN: u64 = 5_000;
const USER: &str = "streamer";
const MODEL: &str = "claude-haiku-5-5";

/// One poll (`POST /api/batches/poll`, what the cron runs), through a runtime restart: a
/// failed request (the runtime went away) is `None`.
async fn poll(s: &Arc<TestStack>) -> Option<Value> {
    let resp = client()
        .post(s.url("/api/batches/poll"))
        .header("x-user-id", "stream-admin")
        .timeout(Duration::from_secs(600))
        .send()
        .await
        .ok()?;
    if resp.status().as_u16() != 200 {
        let status = resp.status();
        eprintln!("poll: {status} {}", resp.text().await.unwrap_or_default());
        return None;
    }
    let body: Value = resp.json().await.ok()?;
    Some(body["poll"].clone())
}

async fn a_big_batch_settles_in_bounded_memory_and_a_restart_loses_and_doubles_nothing(
    s: Arc<TestStack>,
) {
    let n = jobs();
    let batch = end2end::batches::submitted(
        &s,
        end2end::batches::Submitted {
            flush: "fl-stream",
            user: USER,
            tag: 0x5e_00_00_01,
            jobs: n,
            model: MODEL,
        },
    )
    .await;
    // The simulator ends the batch once its processing time has passed.
    end2end::waits::eventually("the batch ends", Duration::from_secs(300), || async {
        let b = s.sim_batch(&batch).await;
        (b["processing_status"] == "ended").then_some(())
    })
    .await;
    let (rss_before, _) = s.runtime_memory_kib();
    // Our isolate's own memory, beside the runtime process's: V8's heap after a collection
    // (what the Worker keeps) through the inspector — the runtime's RSS also holds Miniflare's
    // D1 and R2 simulators, which run in the same process.
    let mut inspector = Inspector::connect(s.inspector_port())
        .await
        .expect("the runtime's inspector");
    let kept_before = inspector.heap_kept().await.expect("heap");
    let objects_before = s.r2_objects();
    let t0 = Instant::now();

    // The first poll reads and settles 5,000 lines (up to the end of the network chunk it was
    // reading) and stops.
    let first = poll(&s).await.expect("the first poll answers");
    let lines = first["result_lines"].as_u64().unwrap();
    assert!((PER_RUN..PER_RUN + 1_000).contains(&lines), "{first}");
    assert_eq!(first["batches_resumable"], 1, "{first}");
    assert_eq!(first["jobs_completed"], lines, "{first}");
    let mut reports = vec![first];
    let mut rss = vec![s.runtime_memory_kib().0];
    let kept_first = inspector.heap_kept().await.expect("heap");
    // The restart below ends the session.
    drop(inspector);

    // The second is killed part-way, once it has stored 1,000 answers (ten chunks; counted on
    // disk — D1 is not read meanwhile: a `wrangler d1 execute` beside a running request can make
    // the local runtime restart it): what it committed stays, what it had not is redone.
    let s2 = s.clone();
    let second = Instant::now();
    let killed = tokio::spawn(async move { poll(&s2).await });
    let stored_first = objects_before + lines as usize;
    end2end::waits::eventually(
        "the second poll stores answers",
        Duration::from_secs(300),
        || async { (s.r2_objects() >= stored_first + 1_000).then_some(()) },
    )
    .await;
    s.restart_now().await;
    let killed = killed.await.unwrap();
    assert!(
        killed.is_none(),
        "the second poll was cut short, not finished in {:?}: {killed:?}",
        second.elapsed()
    );
    let after_kill = s.d1_count("SELECT results_lines AS n FROM flushes WHERE id = 'fl-stream'");
    assert!(
        after_kill > lines && after_kill < 2 * PER_RUN + 1_000,
        "the killed poll committed some chunks, not all: {after_kill}"
    );
    let (rss_restarted, _) = s.runtime_memory_kib();
    // The local runtime now and then restarts the Worker between polls (a plain-text 503 "Your
    // worker restarted mid-request"): that poll is simply asked again.
    let mut refused = 0;
    for _ in 0..(4 * n as u64 / PER_RUN + 20) {
        let Some(r) = poll(&s).await else {
            refused += 1;
            end2end::pause(Duration::from_secs(1)).await;
            continue;
        };
        rss.push(s.runtime_memory_kib().0);
        let done = r["batches_checked"] == 0;
        reports.push(r);
        if done {
            break;
        }
    }
    let elapsed = t0.elapsed();
    let (rss_end, _) = s.runtime_memory_kib();
    let kept_end = Inspector::connect(s.inspector_port())
        .await
        .expect("the runtime's inspector after the restart")
        .heap_kept()
        .await
        .expect("heap");
    let mib = |b: u64| b as f64 / MIB as f64;
    println!(
        "where the runtime's memory goes: workerd RSS {} → {} MiB over the first {lines} lines \
         and {} MiB at the end; the Worker isolate's heap kept (JS {:.1} + backing {:.1} MiB) \
         {:.1} MiB before, {:.1} MiB after the first {lines} lines, {:.1} MiB at the end",
        rss_before / 1024,
        rss[0] / 1024,
        rss_end / 1024,
        mib(kept_end.total),
        mib(kept_end.backing),
        mib(kept_before.isolate()),
        mib(kept_first.isolate()),
        mib(kept_end.isolate()),
    );
    // The answers pass through; the isolate does not keep them (what the RSS gains is not ours).
    assert!(
        kept_first.isolate() < kept_before.isolate() + 8 * MIB && kept_end.isolate() < 32 * MIB,
        "the isolate kept {:.1} MiB after {lines} lines ({:.1} before), {:.1} MiB at the end",
        mib(kept_first.isolate()),
        mib(kept_before.isolate()),
        mib(kept_end.isolate())
    );
    let completed = s.d1_count(&format!(
        "SELECT COUNT(*) AS n FROM jobs WHERE user_id = '{USER}' AND status = 'completed'"
    ));
    assert_eq!(completed, n as u64, "every job settled: {reports:?}");
    // Billed once: each answer is the same size, so every job has the one cost, and the rollup
    // counts each job once.
    let costs = s.d1(&format!(
        "SELECT COUNT(DISTINCT cost_micros) AS kinds, MIN(cost_micros) AS each, \
         SUM(cost_micros) AS total FROM jobs WHERE user_id = '{USER}'"
    ));
    let each = costs[0]["each"].as_u64().unwrap();
    assert!(each > 0);
    let rollup = s.d1(&format!(
        "SELECT SUM(jobs) AS jobs, SUM(cost_micros) AS cost FROM usage_days WHERE user_id = '{USER}'"
    ));
    assert_eq!(rollup[0]["jobs"], n as u64);
    assert_eq!(rollup[0]["cost"], costs[0]["total"]);
    // One answer stored per job (create-if-absent: a redone chunk wrote nothing twice). The
    // count is of blob files on disk, where the local runtime may leave the files of writes the
    // kill cut short (at most one chunk of 100) beside the objects.
    let stored = s.r2_objects() - objects_before;
    assert!(
        (n..=n + 100).contains(&stored),
        "one stored answer per job: {stored} blob files for {n} jobs"
    );
    assert_eq!(
        s.d1_count("SELECT results_lines AS n FROM flushes WHERE id = 'fl-stream'"),
        n as u64
    );
    // Bounded: the reader held one line and one network chunk at a time, and the Worker's
    // linear memory stayed small while all the answers (tens of MB of JSONL) went through it.
    let max = |k: &str| {
        reports
            .iter()
            .map(|r| r[k].as_u64().unwrap_or(0))
            .max()
            .unwrap()
    };
    let (peak_line, peak_chunk, wasm) = (
        max("peak_line_bytes"),
        max("peak_chunk_bytes"),
        max("wasm_memory_bytes"),
    );
    println!(
        "{n} results settled in {:.0} s over {} polls ({refused} refused by a restarting \
         runtime); the longest line buffered {peak_line} \
         bytes, the largest network chunk {peak_chunk} bytes, the Worker's wasm memory at most \
         {} KiB; workerd RSS {} MiB before, {} MiB after the restart, per poll after: {:?} MiB; \
         each job {each} µ$",
        elapsed.as_secs_f64(),
        reports.len(),
        wasm / 1024,
        rss_before / 1024,
        rss_restarted / 1024,
        rss.iter().map(|k| k / 1024).collect::<Vec<_>>()
    );
    assert!(
        peak_line > 0 && peak_line < 64 * 1024,
        "peak line {peak_line}"
    );
    assert!(peak_chunk <= 1 << 20, "peak chunk {peak_chunk}");
    assert!(wasm <= 16 << 20, "the Worker's memory grew to {wasm} bytes");
    // The per-status counts agree with the rows.
    assert_eq!(
        s.d1_count(
            "SELECT SUM(n) AS n FROM job_counts WHERE status = 'completed' AND lane = 'bulk'"
        ),
        n as u64
    );
    assert_eq!(costs[0]["kinds"], 1, "{costs:?}");
}
