//! The production envelope at its worst cases (issue 32). `wrangler dev` enforces none of
//! Cloudflare's per-invocation limits, so the Worker meters itself (`worker/src/meter.rs`), and
//! every suite ends by checking that no invocation passed one. This suite makes the cases where
//! they bind:
//! - what one isolate holds while it serves the largest upload the API accepts, measured the way
//!   production's 128 MB limit sees it — V8's own heap figures through the runtime's inspector
//!   (`end2end::heap`) plus the Worker's linear memory, which V8 keeps outside them and which
//!   never shrinks;
//! - one cron run facing everything at once: ten flushes due, three ended batches of more lines
//!   than a poll reads, webhooks due to a receiver that answers slowly, a retention backlog,
//!   with health probed ten times a second — each loop takes its share, the rest waits for the
//!   next run, and every backlog drains with nothing lost or made twice;
//! - a bulk queue batch of PDFs against a slow model;
//! - and, from every invocation's `use:` line, each entry point's peak use of each limit as a
//!   share of it (the README's "Production limits" table): at most `PLAN_PCT` (80%).
//!
//! Sized by `ENVELOPE_UPLOAD_FILES` (files of 18.8 MiB in the upload: 5 in the soak run, the
//! API's largest, 94 MiB of the 95 MiB it accepts; 1 in the main set — enough to see a file
//! held whole in the Worker's memory, which [`WASM_GOAL`] is smaller than) and by
//! `ENVELOPE_SCALE` ([`Sizes`]: production's sizes in the soak run, a tenth in the main set).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use end2end::batches::FIXTURE_ID_SQL;
use end2end::envelope;
use end2end::heap::{HeapUsage, HeapWatch, Inspector, MIB};
use end2end::{eventually, pdfs, tests, StackConfig, Suite, TestStack};
use pipeline::envelope::{Configured, Entry, Limits, Plan, PLAN_PCT};
use serde_json::json;

pub fn suite() -> Suite {
    let z = Sizes::now();
    let vars: Vec<(String, String)> = vec![
        ("BATCH_FLUSH_SIZE".into(), z.flush.to_string()),
        ("BATCH_RESULTS_PER_RUN".into(), z.per_poll.to_string()),
        ("RETENTION_SLICE".into(), z.slice.to_string()),
        ("LIMITS_SUBREQUESTS".into(), z.subrequests.to_string()),
    ];
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    end2end::suite_timed(
        "envelope",
        StackConfig::vars(&vars),
        Duration::from_secs(900 + 600 / z.scale),
        tests![
            the_largest_upload_leaves_the_isolate_as_small_as_it_found_it_in_every_mode,
            the_worst_cron_run_plans_inside_its_share_and_every_backlog_drains,
            a_bulk_batch_of_pdfs_against_a_slow_model_ends_inside_the_wall_plan,
            every_entry_point_stays_inside_80_percent_of_each_production_limit,
        ],
    )
}

/// The worst case's sizes: production's divided by `ENVELOPE_SCALE` (1 in the soak run; 10 in
/// the main set). Production's: flushes of 1,000 jobs, 5,000 result lines a poll, retention
/// slices of 500, and the Paid plan's 10,000 subrequests per invocation — at a tenth, `[limits]
/// subrequests` is 1,000 (`LIMITS_SUBREQUESTS`), so the same plans bind at a tenth of the work.
/// D1's 1,000 queries per invocation stay whole.
#[derive(Debug, Clone, Copy)]
struct Sizes {
    scale: u64,
    flush: u64,
    per_poll: u64,
    slice: u64,
    subrequests: u64,
    /// Webhooks due at once.
    hooks: usize,
    /// Lines of each ended batch: more than one poll reads.
    lines: usize,
}

impl Sizes {
    fn now() -> Sizes {
        let scale = std::env::var("ENVELOPE_SCALE")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(10u64)
            .clamp(1, 10);
        let per_poll = 5_000 / scale;
        Sizes {
            scale,
            flush: 1_000 / scale,
            per_poll,
            slice: 500 / scale,
            subrequests: 10_000 / scale,
            // A cron run delivers at most 20 side by side.
            hooks: (100 / scale as usize).max(20),
            lines: (per_poll + per_poll / 10) as usize,
        }
    }

    /// The limits of an invocation of `entry` on the stack.
    fn limits(&self, entry: Entry) -> Limits {
        let configured = Configured {
            subrequests: Some(self.subrequests as u32),
            cpu_ms: None,
        };
        Limits::of(Plan::Paid, entry, configured).expect("the plan allows it")
    }
}

/// The isolate's live memory at the upload's peak, for the limits table (bytes).
static ISOLATE_LIVE_PEAK: AtomicU64 = AtomicU64::new(0);

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
        ISOLATE_LIVE_PEAK.fetch_max(isolate(&live, wasm), Ordering::Relaxed);
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

/// A webhook receiver that answers 204 after `delay` (the Worker gives up after 5 s); answers
/// its URL and the `webhook-id`s it got, in order.
async fn slow_receiver(delay: Duration) -> (String, Arc<Mutex<Vec<String>>>) {
    use axum::http::{HeaderMap, StatusCode};
    let got: Arc<Mutex<Vec<String>>> = Arc::default();
    let inbox = got.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: HeaderMap| {
            let inbox = inbox.clone();
            async move {
                tokio::time::sleep(delay).await;
                let id = headers
                    .get("webhook-id")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_string();
                inbox.lock().unwrap().push(id);
                StatusCode::NO_CONTENT
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, got)
}

/// `GET /api/health` ten times a second until stopped: (probes, answers other than 200).
struct Prober {
    stop: Arc<std::sync::atomic::AtomicBool>,
    task: tokio::task::JoinHandle<(u64, Vec<String>)>,
}

impl Prober {
    fn start(s: &Arc<TestStack>) -> Prober {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (s, until) = (s.clone(), stop.clone());
        let task = tokio::spawn(async move {
            // One probe every 100 ms, each on its own: a slow answer does not delay the next.
            let mut probes = Vec::new();
            let mut tick = tokio::time::interval(Duration::from_millis(100));
            while !until.load(Ordering::Relaxed) {
                tick.tick().await;
                let ops = s.user("env-ops");
                probes.push(tokio::spawn(async move { ops.get("/api/health").await }));
            }
            let mut bad = Vec::new();
            let n = probes.len() as u64;
            for p in probes {
                let (status, body) = p.await.unwrap();
                if status != 200 {
                    bad.push(format!("{status} {body}"));
                }
            }
            (n, bad)
        });
        Prober { stop, task }
    }

    async fn stop(self) -> (u64, Vec<String>) {
        self.stop.store(true, Ordering::Relaxed);
        self.task.await.unwrap()
    }
}

const MODEL: &str = "claude-haiku-5-5";
const FLUSHER: &str = "env-flush";
const HOOKED: &str = "env-hooks";
const ENDED: &str = "env-ended";
const OLD: &str = "env-old";
/// The fixture ids of the waiting jobs' and the old jobs' rows (`end2end::batches::fixture_id`).
const WAITING_TAG: u32 = 0xf1_00_00_00;
const OLD_TAG: u32 = 0x01_d0_00_00;

/// `n` jobs of `FLUSHER` waiting for a flush, in D1: one batch-mode job submitted through the
/// API (its request body in R2, its reservation made) and joined to the accumulation by the
/// bulk consumer, then copied `n - 1` times in D1 (each copy reads the same body from R2 when
/// it is flushed, as its own would be read). Ten flushes' worth made through the API would
/// be flushed by the bulk consumer as they arrive, never all due at once.
async fn waiting_jobs(s: &Arc<TestStack>, n: u64) -> String {
    let seed = s
        .user(FLUSHER)
        .submit_job(&json!({
            "prompt": "Summarise what a message batch is, in one line.",
            "priority": "bulk", "mode": "batch", "model": MODEL, "max_tokens": 50,
            "output_config": {"effort": "low"}
        }))
        .await;
    eventually(
        "the seed job joins the accumulation",
        Duration::from_secs(120),
        || async {
            let sql = format!(
            "SELECT COUNT(*) AS n FROM jobs WHERE id = '{seed}' AND accumulated_at IS NOT NULL \
             AND flush_id IS NULL"
        );
            (s.d1_count_now(&sql).await == 1).then_some(())
        },
    )
    .await;
    let columns: Vec<String> = s
        .d1_now("SELECT name FROM pragma_table_info('jobs')")
        .await
        .iter()
        .filter_map(|r| r["name"].as_str().map(str::to_string))
        .collect();
    let values: Vec<String> = columns
        .iter()
        .map(|c| match c.as_str() {
            "id" => format!("printf('{FIXTURE_ID_SQL}', {WAITING_TAG}, n.i)"),
            "prompt_key" => "COALESCE(j.prompt_key, 'prompts/' || j.id)".to_string(),
            other => format!("j.{other}"),
        })
        .collect();
    s.d1_now(&format!(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < {n}) \
         INSERT INTO jobs ({}) SELECT {} FROM n, jobs j WHERE j.id = '{seed}'",
        columns.join(", "),
        values.join(", ")
    ))
    .await;
    seed
}

/// `n` finished jobs of `OLD`, 100 days old: past every retention horizon.
async fn retention_backlog(s: &Arc<TestStack>, n: u64) {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
        - 100 * 86_400_000;
    s.d1_now(&format!(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < {n}) \
         INSERT INTO jobs (id, user_id, kind, status, lane, mode, model, input_text, attempts, \
         created_at, started_at, completed_at, updated_at) \
         SELECT printf('{FIXTURE_ID_SQL}', {OLD_TAG}, i), '{OLD}', 'prompt', 'completed', 'bulk', 'sync', '{MODEL}', \
         'An old question', 1, {t}, {t}, {t}, {t} FROM n"
    ))
    .await;
}

/// What is still to do: (jobs waiting or in a batch, ended-batch jobs not settled, webhooks not
/// delivered, old jobs not removed).
fn backlog(s: &Arc<TestStack>) -> (u64, u64, u64, u64) {
    (
        s.d1_count(&format!(
            "SELECT COUNT(*) AS n FROM jobs WHERE user_id = '{FLUSHER}' AND status != 'completed'"
        )),
        s.d1_count(&format!(
            "SELECT COUNT(*) AS n FROM jobs WHERE user_id = '{ENDED}' AND status != 'completed'"
        )),
        s.d1_count(&format!(
            "SELECT COUNT(*) AS n FROM webhook_deliveries WHERE user_id = '{HOOKED}' \
                 AND state != 'delivered'"
        )),
        s.d1_count(&format!(
            "SELECT COUNT(*) AS n FROM jobs WHERE user_id = '{OLD}'"
        )),
    )
}

/// Every batch the simulator holds: (id, requests in it).
async fn sim_batches(s: &Arc<TestStack>) -> Vec<(String, u64)> {
    let (status, page) =
        end2end::api::send_json(s.sim_api(reqwest::Method::GET, "/v1/messages/batches?limit=1000"))
            .await;
    assert_eq!(status, 200, "{page}");
    page["data"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|b| {
            let c = &b["request_counts"];
            let n = ["processing", "succeeded", "errored", "canceled", "expired"]
                .iter()
                .map(|k| c[k].as_u64().unwrap_or(0))
                .sum();
            (b["id"].as_str().unwrap_or_default().to_string(), n)
        })
        .collect()
}

async fn the_worst_cron_run_plans_inside_its_share_and_every_backlog_drains(s: Arc<TestStack>) {
    let z = Sizes::now();
    let flushed = 10 * z.flush;
    // Webhooks due: jobs with a callback to a slow receiver, finished; only the cron delivers.
    let (url, received) = slow_receiver(Duration::from_secs(3)).await;
    let hooked = s.user(HOOKED);
    for i in 0..z.hooks {
        hooked
            .submit_job(&json!({
                "prompt": format!("Ping {i}"), "priority": "high", "model": MODEL,
                "max_tokens": 20, "output_config": {"effort": "low"}, "callback_url": url
            }))
            .await;
    }
    let hooks = z.hooks as u64;
    eventually("the webhooks are due", Duration::from_secs(300), || async {
        let sql = format!(
            "SELECT COUNT(*) AS n FROM webhook_deliveries WHERE user_id = '{HOOKED}' \
             AND state = 'pending'"
        );
        (s.d1_count_now(&sql).await == hooks).then_some(())
    })
    .await;
    // Ten flushes due.
    waiting_jobs(&s, flushed).await;
    // Three ended batches of more lines than a poll reads.
    let mut ended = Vec::new();
    for i in 0..3 {
        let flush = format!("fl-env-{i}");

        let b = end2end::batches::Submitted {
            flush: &flush,
            user: ENDED,
            tag: 0xe0_00_00_00 + i,
            jobs: z.lines,
            model: MODEL,
        };
        ended.push(end2end::batches::submitted(&s, b).await);
    }
    for id in &ended {
        eventually("the batch ends", Duration::from_secs(300), || async {
            (s.sim_batch(id).await["processing_status"] == "ended").then_some(())
        })
        .await;
    }
    // A retention backlog of three slices and one more.
    retention_backlog(&s, 3 * z.slice + 1).await;
    // Batches made before this test (the upload's) are not this test's.
    let before: Vec<String> = sim_batches(&s)
        .await
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    let start = backlog(&s);
    assert_eq!(
        start,
        (flushed, 3 * z.lines as u64, hooks, 3 * z.slice + 1),
        "the backlog is in place"
    );

    // The worst run, with health probed ten times a second from here on.
    let prober = Prober::start(&s);
    let t0 = Instant::now();
    assert_eq!(s.cron().await, 200);
    let first = backlog(&s);
    println!("envelope: the worst cron run left {first:?} of {start:?} (waiting or in a batch, ended-batch lines, webhooks, old jobs)");
    // Every loop did some of its work, and left the rest for the next runs (a batch the run
    // created may end and be settled in the same run: the simulator's batches end in seconds).
    let flushes = s.d1_count(&format!(
        "SELECT COUNT(DISTINCT flush_id) AS n FROM jobs WHERE user_id = '{FLUSHER}' \
             AND anthropic_batch_id IS NOT NULL"
    ));
    assert!(
        (1..10).contains(&flushes),
        "some flushes, not all ten: {flushes}"
    );
    assert!(
        first.1 < start.1 && first.1 > 0,
        "some lines settled: {first:?}"
    );
    assert!(first.2 < start.2, "some webhooks delivered: {first:?}");
    assert!(
        first.3 < start.3 && first.3 > 0,
        "a slice removed: {first:?}"
    );

    // Then the minute's runs, until every backlog has drained.
    let runs = AtomicU64::new(1);
    eventually(
        "every backlog drains",
        Duration::from_secs(1_200),
        || async {
            let left = backlog(&s);
            if left == (0, 0, 0, 0) {
                return Some(());
            }
            s.cron().await;
            runs.fetch_add(1, Ordering::Relaxed);
            None
        },
    )
    .await;
    let (probes, bad) = prober.stop().await;
    println!(
        "envelope: {} cron runs drained it in {:.0} s; {probes} health probes",
        runs.load(Ordering::Relaxed),
        t0.elapsed().as_secs_f64()
    );
    assert!(bad.is_empty(), "health answered otherwise: {bad:?}");
    assert!(probes >= 9 * t0.elapsed().as_secs(), "{probes} probes");

    // Nothing lost or made twice: every waiting job went into exactly one batch, the ended
    // batches' jobs were settled once each, every webhook was delivered (at least once: a
    // receiver's answer may come after the Worker gave up), and every job is counted once.
    let made: u64 = sim_batches(&s)
        .await
        .iter()
        .filter(|(id, _)| !ended.contains(id) && !before.contains(id))
        .map(|(_, n)| *n)
        .sum();
    assert_eq!(made, flushed, "each waiting job in one batch");
    let ids = received.lock().unwrap().clone();
    let distinct: std::collections::BTreeSet<&String> = ids.iter().collect();
    assert_eq!(distinct.len() as u64, hooks, "{ids:?}");
    let rollup = s.d1(&format!(
        "SELECT user_id, SUM(jobs) AS jobs FROM usage_days WHERE user_id IN ('{FLUSHER}', '{ENDED}') \
         GROUP BY user_id ORDER BY user_id"
    ));
    let jobs_of = |u: &str| {
        rollup
            .iter()
            .find(|r| r["user_id"] == u)
            .and_then(|r| r["jobs"].as_u64())
            .unwrap_or(0)
    };
    assert_eq!(jobs_of(ENDED), 3 * z.lines as u64);
    assert_eq!(jobs_of(FLUSHER), flushed);
}

async fn a_bulk_batch_of_pdfs_against_a_slow_model_ends_inside_the_wall_plan(s: Arc<TestStack>) {
    let usual = s.sim.lock().knobs.latency_ms;
    s.sim.lock().knobs.latency_ms = 2_000;
    let files: Vec<(String, Vec<u8>)> = (0..10)
        .map(|i| {
            let title = format!("Slow report {i}");
            (format!("slow-{i}.pdf"), pdfs::padded(&title, 2, 300_000))
        })
        .collect();
    let user = s.user("env-slow");
    let id = user.submit_upload(&files, &[("mode", "sync")]).await;
    let b = user.upload_finished(&id, Duration::from_secs(600)).await;
    s.sim.lock().knobs.latency_ms = usual;
    assert_eq!(b["counts"]["completed"].as_u64(), Some(10), "{b}");
    let lanes = s.d1("SELECT DISTINCT lane AS lane FROM jobs WHERE user_id = 'env-slow'");
    assert_eq!(lanes.len(), 1, "{lanes:?}");
    assert_eq!(
        lanes[0]["lane"], "bulk",
        "an upload's PDFs run on the bulk lane"
    );
}

async fn every_entry_point_stays_inside_80_percent_of_each_production_limit(s: Arc<TestStack>) {
    let z = Sizes::now();
    let peaks = envelope::peaks(&s.log_lines("use: "));
    let (table, over) = envelope::table(&peaks, |e| z.limits(e));
    let live = ISOLATE_LIVE_PEAK.load(Ordering::Relaxed);
    let memory = z.limits(Entry::Fetch).memory_bytes;
    println!(
        "envelope limits (production sizes / {}; [limits] subrequests = {}):\n{table}\n\
         the isolate (every entry point shares it), live at the largest upload's peak: {} of {} MB ({:.1}%)",
        z.scale,
        z.subrequests,
        mib(live),
        memory / 1_000_000,
        100.0 * live as f64 / memory as f64
    );
    let dir = xtask::paths::root().join("target/xtask-test");
    std::fs::create_dir_all(&dir).ok();
    std::fs::write(dir.join(format!("envelope-limits-{}.md", z.scale)), &table).ok();
    for entry in [Entry::Fetch, Entry::Queue, Entry::Cron] {
        assert!(
            peaks.contains_key(&entry),
            "no {} invocation logged its use",
            entry.as_str()
        );
    }
    assert!(
        over.is_empty(),
        "past {PLAN_PCT}% of a limit:\n{}",
        over.join("\n")
    );
    assert!(
        live * 100 <= memory * PLAN_PCT,
        "the isolate's live peak {}",
        mib(live)
    );
}
