//! `cargo xtask <command>`: the project's two commands and their helpers.
//!
//! - `dev [--reset] [--auth] [--port 8787] [--sim-port 8788]`: build and run the whole stack
//!   locally. Its state lives in `.state/dev` (default port) or `.state/dev-<port>`, so two dev
//!   stacks on different ports run side by side without sharing a config or a database.
//! - `test [--jobs N]`: everything CI runs — fmt, the wasm builds, the deploy dry run, then
//!   every test built once (`cargo test --no-run`) and run side by side (clippy `-D warnings`
//!   runs inside every build: `.cargo/config.toml`):
//!   host tests (the app's too, on the host), doc-tests, and the end-to-end suites against real
//!   local stacks, N (5) suites at a time. Ends with every `test result:` line and
//!   `N passed, N failed`; per-binary logs in `target/xtask-test/`.
//! - `test --soak`: the soak runs — the suites at production sizes (the 100,000-request
//!   stream, the 1,000-job chaos run), one after the other; `.ci/run` runs them after the main
//!   set.
//! - `test --suite NAME`: one end-to-end suite (`end2end/tests/e2e/NAME.rs`): builds what it
//!   needs (the SPA and the Worker), then `cargo test -p end2end --test e2e -- NAME`.
//! - `build`: just the two wasm artifacts.
//! - `chaos [--jobs N] [--kills K]`: the chaos suite's full run (1,000 jobs, faults, two runtime
//!   kills; minutes — run it in the background); the report lands in `target/chaos/`.
//! - `bench [all]`: every benchmark below, one after the other, into `target/bench/results.md`
//!   (≈ 15 minutes; run it in the background).
//! - `bench budget [--jobs N]`: the rate-limit benchmark (minutes; run it in the background).
//! - `bench fairness [--jobs N]`: a whale's backlog and five small users under tight limits.
//! - `bench e2e [--jobs N]`: a sync job end to end with a 0-latency simulator, p50/p95.
//! - `bench render`: SPA and Worker sizes, the dashboard's first render in headless Chromium.
//! - `bench cost [--jobs N] [--trace]`: what a job of each kind asks of D1, R2, the queues and
//!   the Durable Object over its life, and what a million a day would cost (`--trace`: every D1
//!   statement with its rows in the stack's log).
//! - `sizes [--top N]`: the crates and functions that make the SPA and the Worker big.
//! - `bench queries [--rows N[,M…]]`: dashboard, usage and DLQ queries over generated jobs at each size.
//! - `bench load [--clients N] [--seconds S]`: the producers under 200 concurrent clients.
//! - `bench startup`: the Worker's startup CPU (`wrangler check startup`), goal ≤ 200 ms.
//! - `key create --user NAME [--admin] [--port N] [--remote]`: an API key, printed alone on the
//!   last line; into the state of the dev stack on port N (default 8787), or the deployed
//!   database with `--remote`.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use xtask::paths::{dev_state, root, target_dir, DEV_PORT};
use xtask::proc::cargo;
use xtask::proc::wrangler;
use xtask::{build, step, testing, tools, Result};

const USAGE: &str = "usage: cargo xtask <dev [--reset] [--auth] [--port N] [--sim-port N] | test [--soak | --suite NAME] [--jobs N] | build | chaos [--jobs N] [--kills K] | bench [all] | bench budget [--jobs N] | bench fairness [--jobs N] | bench e2e [--jobs N] | bench render | bench queries [--rows N] | bench load [--clients N] [--seconds S] | bench cost [--jobs N] [--trace] | bench startup | sizes [--top N] | key create --user NAME [--admin] [--port N] [--remote]>";

mod dev;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("dev") => dev::dev(&args[1..]),
        Some("test") => test(&args[1..]),
        Some("build") => tools::ensure(false).and_then(|_| build_all()),
        Some("bench") => bench(&args[1..]),
        Some("chaos") => chaos(&args[1..]),
        Some("key") => key(&args[1..]),
        Some("sizes") => sizes(&args[1..]),
        _ => Err(USAGE.into()),
    };
    if let Err(e) = result {
        eprintln!("\x1b[1;31merror:\x1b[0m {e}");
        std::process::exit(1);
    }
}

/// `cargo xtask sizes [--top N]`: builds the SPA and the Worker, then lists the crates and
/// functions that make each big (`target/bench/sizes.md`).
fn sizes(args: &[String]) -> Result<()> {
    let top = args
        .iter()
        .position(|a| a == "--top")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(25);
    tools::ensure(false)?;
    build_all()?;
    let release = |dir: std::path::PathBuf| dir.join("wasm32-unknown-unknown/release");
    let mut out = String::from(
        "## What the bundles are made of (`cargo xtask sizes`)\n\n\
         Function bodies of the release builds before wasm-bindgen and wasm-opt, summed by crate.\n\n",
    );
    for (title, file) in [
        (
            "SPA (frontend)",
            release(xtask::paths::target_dir()).join("frontend.wasm"),
        ),
        (
            "Worker",
            release(xtask::paths::worker_target_dir()).join("worker_app.wasm"),
        ),
    ] {
        let bd = xtask::wasm_size::breakdown(&file)?;
        out.push_str(&xtask::wasm_size::report(title, &bd, top));
        out.push('\n');
    }
    println!("{out}");
    let dir = xtask::paths::target_dir().join("bench");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("sizes.md"), &out)?;
    Ok(())
}

/// Builds what the stack runs, then the benchmark binary of `end2end` (it starts its own stacks).
fn bench(args: &[String]) -> Result<()> {
    let which = args.first().map(String::as_str).unwrap_or("all");
    if !matches!(
        which,
        "all"
            | "budget"
            | "fairness"
            | "queries"
            | "load"
            | "e2e"
            | "render"
            | "cost"
            | "routing"
            | "startup"
    ) {
        return Err(format!(
            "unknown benchmark {which:?}; known: all (the default), budget, fairness, queries, load, e2e, render, cost, routing, startup"
        )
        .into());
    }
    // The render benchmark drives Chromium.
    tools::ensure(matches!(which, "all" | "render"))?;
    build_all()?;
    step(&format!("benchmark {which} (minutes)"));
    let mut cmd_args = vec!["run", "-q", "-p", "end2end", "--bin", "bench", "--", which];
    cmd_args.extend(args.iter().skip(1).map(String::as_str));
    cargo(&cmd_args, "the benchmark")
}

/// The chaos suite (`end2end/tests/chaos.rs`) at full size: 1,000 jobs unless `--jobs` says
/// otherwise. Its Markdown report is written to `target/chaos/report-<jobs>.md`.
fn chaos(args: &[String]) -> Result<()> {
    let flag = |name: &str| -> Option<&String> {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
    };
    let jobs = flag("--jobs").map_or("1000", String::as_str);
    let kills = flag("--kills").map_or("2", String::as_str);
    for (name, v) in [("--jobs", jobs), ("--kills", kills)] {
        v.parse::<u32>()
            .map_err(|_| format!("{name} must be a number, got {v:?}"))?;
    }
    tools::ensure(false)?;
    build_all()?;
    step(&format!("chaos run: {jobs} jobs, {kills} kills (minutes)"));
    let status = Command::new("cargo")
        .args([
            "test", "-q", "-p", "end2end", "--test", "e2e", "--", "chaos",
        ])
        .current_dir(root())
        .env("CHAOS_JOBS", jobs)
        .env("CHAOS_KILLS", kills)
        .status()?;
    let report = target_dir().join("chaos").join(format!("report-{jobs}.md"));
    if let Ok(text) = std::fs::read_to_string(&report) {
        println!("\n{text}");
        step(&format!("report: {}", report.display()));
    }
    if !status.success() {
        return Err("the chaos run failed".into());
    }
    Ok(())
}

/// `key create --user NAME [--admin] [--port N] [--remote]`: into the local state of the dev
/// stack on port N (default 8787; after a first `cargo xtask dev`), or the deployed database.
/// The key alone is the last line of stdout.
fn key(args: &[String]) -> Result<()> {
    if args.first().map(String::as_str) != Some("create") {
        return Err(USAGE.into());
    }
    let (mut user, mut role, mut remote) = (None, pipeline::identity::Role::User, false);
    let mut port = DEV_PORT;
    let mut it = args[1..].iter();
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--user" => user = it.next().cloned(),
            "--admin" => role = pipeline::identity::Role::Admin,
            "--remote" => remote = true,
            "--port" => {
                port = it
                    .next()
                    .and_then(|p| p.parse().ok())
                    .ok_or("--port needs the dev stack's Worker port")?
            }
            other => return Err(format!("unknown flag {other}\n{USAGE}").into()),
        }
    }
    let user = user.ok_or("--user NAME is required")?;
    let key = if remote {
        xtask::keys::create(xtask::keys::Target::Remote, &user, role)?
    } else {
        let state = dev_state(port);
        let config = state.join("wrangler.toml");
        if !config.exists() {
            return Err(format!(
                "no local state in {} yet: run `cargo xtask dev{}` once (or pass --remote)",
                state.display(),
                if port == DEV_PORT {
                    String::new()
                } else {
                    format!(" --port {port}")
                }
            )
            .into());
        }
        let persist = state.join("wrangler-state");
        xtask::keys::create(
            xtask::keys::Target::Local {
                config: &config,
                persist: &persist,
            },
            &user,
            role,
        )?
    };
    eprintln!(
        "API key for {user} ({}) — shown once, stored only as its SHA-256:",
        role.as_str()
    );
    println!("{key}");
    Ok(())
}

/// The SPA and the Worker, side by side (their own target directories).
fn build_all() -> Result<()> {
    let spa = std::thread::spawn(build::spa);
    let worker = build::worker();
    spa.join().map_err(|_| "the SPA build thread panicked")??;
    worker?;
    Ok(())
}

/// Everything CI runs (or, with `--suite NAME`, one end-to-end suite). Ends with the test
/// runners' summary lines and a total.
fn test(args: &[String]) -> Result<()> {
    let mut suite = None;
    let mut soak = false;
    let mut jobs = SUITES_AT_ONCE;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--soak" => soak = true,
            "--suite" => suite = Some(it.next().ok_or("--suite needs a suite's name")?.clone()),
            "--jobs" => {
                jobs = it
                    .next()
                    .and_then(|n| n.parse().ok())
                    .filter(|n| *n > 0)
                    .ok_or("--jobs needs a number of suites to run at once")?
            }
            other => return Err(format!("unknown flag {other}\n{USAGE}").into()),
        }
    }
    match (suite, soak) {
        (Some(_), true) => Err("--soak runs its own suites: give it no --suite".into()),
        (Some(name), false) => test_suite(&name),
        (None, true) => test_soak(),
        (None, false) => test_all(jobs),
    }
}

/// `cargo xtask test --soak`: what the suites need, the tests built as the main set builds
/// them (nothing new to compile after it), then each soak run in turn.
fn test_soak() -> Result<()> {
    let started = Instant::now();
    tools::ensure(true)?;
    build_all()?;
    step("building the tests (cargo test --no-run), as the main set does");
    let binaries =
        testing::build_tests(&["test"], "cargo test --no-run", testing::Priority::Normal)?;
    let names: Vec<&str> = testing::SOAK.iter().map(|(s, _)| *s).collect();
    step(&format!("soak runs, one at a time: {}", names.join(", ")));
    let ran = testing::run_soak(binaries, &test_env())?;
    let (summary, passed, failed) = testing::summary(&ran);
    step(&format!(
        "soak done in {:.0} s",
        started.elapsed().as_secs_f64()
    ));
    println!("{summary}");
    let failed_runs: Vec<&str> = ran
        .iter()
        .filter(|r| !r.success)
        .map(|r| r.label.as_str())
        .collect();
    if !failed_runs.is_empty() || failed > 0 || passed == 0 {
        return Err(format!("soak runs failed: {}", failed_runs.join(", ")).into());
    }
    Ok(())
}

/// What every test binary gets: where the Python SDK is installed.
fn test_env() -> Vec<(String, String)> {
    vec![(
        "SIM_SDK_PYTHONPATH".to_string(),
        tools::python_sdk_dir().to_string_lossy().into_owned(),
    )]
}

/// End-to-end suites run at once by `cargo xtask test` (each starts its own stack; ≈600 MB).
/// Most of a suite's time is spent waiting on the pipeline (`target/xtask-test/timings.md`),
/// so five share 2 cores well.
const SUITES_AT_ONCE: usize = 5;

/// `cargo xtask test --suite NAME`: what the suite needs (tools, the SPA and the Worker), then
/// `cargo test -p end2end --test e2e -- NAME`.
fn test_suite(name: &str) -> Result<()> {
    let known = testing::suite_names()?;
    if !known.iter().any(|k| k == name) {
        return Err(format!("unknown suite {name:?}; known: {}", known.join(", ")).into());
    }
    let started = Instant::now();
    tools::ensure(true)?;
    build_all()?;
    step(&format!(
        "end-to-end suite {name} (cargo test -p end2end --test e2e -- {name})"
    ));
    let (ran, ok) = testing::cargo_results(
        &[
            "test", "-p", "end2end", "--test", "e2e", "--color", "always", "--", name,
        ],
        &[],
        testing::Priority::Normal,
    )?;
    let (summary, passed, failed) = testing::summary(&ran);
    step(&format!("done in {:.0} s", started.elapsed().as_secs_f64()));
    println!("{summary}");
    if !ok || failed > 0 || passed == 0 {
        return Err(format!("the {name} suite failed").into());
    }
    Ok(())
}

/// Everything CI runs: fmt, the wasm builds (linted), the deploy dry run, then
/// every test — host tests (pipeline, sim, xtask, end2end's own, the app's on the host),
/// doc-tests and the end-to-end suites — built once and run side by side.
fn test_all(suites_at_once: usize) -> Result<()> {
    let started = Instant::now();
    let mut timings: Vec<(&str, Duration)> = vec![
        time_it("tools", || tools::ensure(true))?,
        time_it("fmt", || {
            step("cargo fmt --check");
            cargo(
                &["fmt", "--all", "--", "--check"],
                "cargo fmt --check (run `cargo fmt --all`)",
            )
        })?,
    ];
    // Clippy runs inside the builds below (`.cargo/config.toml`): the wasm artifacts lint the
    // SPA's and the Worker's crates for wasm32, the test build every host crate and target.
    // The wasm artifacts (release, wasm32) and the tests (debug, host) lock different build
    // directories, and the Worker has a target directory of its own, so cargo builds all
    // three at once: the tests' build (at the lowest priority) fills the wasm builds'
    // single-threaded stretches (LTO links, wasm-opt).
    let spa = std::thread::spawn(|| time_it("SPA", || build::spa().map(|_| ())));
    let worker = std::thread::spawn(|| time_it("Worker", || build::worker().map(|_| ())));
    let mut binaries = Vec::new();
    let tests_built = time_it("build tests", || {
        step("building the tests (cargo test --no-run): default members, then the app and the Worker on the host");
        // At the lowest priority: the Worker's build is the longest chain, mostly one thread
        // (its fat-LTO link, wasm-opt), and the suites wait for it anyway; the tests' build
        // takes what the two wasm builds leave.
        let behind = testing::Priority::Background;
        binaries = testing::build_tests(&["test"], "cargo test --no-run", behind)?;
        // The app and the Worker are wasm32 crates; their unit tests (formatting, chart scales;
        // the store's rows and query text) are pure and run on the host.
        binaries.extend(testing::build_tests(
            &["test", "-p", "app", "-p", "worker-app", "--lib"],
            "cargo test -p app -p worker-app --lib --no-run",
            behind,
        )?);
        Ok(())
    });
    let tests_built = match tests_built {
        Ok(took) => took,
        Err(e) => {
            let _ = (spa.join(), worker.join());
            return Err(e);
        }
    };
    // The host tests and the doc-tests need no wasm: they run while the wasm builds end.
    let env = test_env();
    let (host, suites) = testing::run_host(std::mem::take(&mut binaries), &env);
    let docs = {
        let env = env.clone();
        std::thread::spawn(move || {
            step("the doc-tests (cargo test --doc), at the lowest priority");
            testing::cargo_results(
                &["test", "--doc", "--no-fail-fast", "--color", "always"],
                &env,
                testing::Priority::Background,
            )
        })
    };
    let spa_built = spa.join().map_err(|_| "the SPA build thread panicked")?;
    let worker_built = worker
        .join()
        .map_err(|_| "the Worker build thread panicked")?;
    timings.push(spa_built?);
    timings.push(worker_built?);
    timings.push(tests_built);
    // After both: the dry run bundles the Worker with the SPA's `dist/` as its assets.
    timings.push(time_it("deploy dry run", deploy_dry_run)?);
    let mut ran = Vec::new();
    timings.push(time_it("suites", || {
        step(&format!(
            "running {} end-to-end suites ({suites_at_once} at a time)",
            suites.len()
        ));
        ran = testing::run_suites(suites, &env, suites_at_once)?;
        Ok(())
    })?);
    ran.extend(
        host.join()
            .map_err(|_| "the host tests' thread panicked")??,
    );
    let (doc_ran, doc_ok) = docs.join().map_err(|_| "the doc-tests thread panicked")??;
    ran.extend(doc_ran);
    let (summary, passed, failed) = testing::summary(&ran);
    let failed_binaries: Vec<&str> = ran
        .iter()
        .filter(|r| !r.success)
        .map(|r| r.label.as_str())
        .collect();
    println!(
        "\nwhere the end-to-end suites' time went (target/xtask-test/timings.md):\n{}",
        testing::time_table(&ran)
    );
    println!("\ntimings:");
    for (what, took) in &timings {
        println!("  {what:<16} {:>6.0} s", took.as_secs_f64());
    }
    step(&format!("done in {:.0} s", started.elapsed().as_secs_f64()));
    println!("{summary}");
    if !failed_binaries.is_empty() || !doc_ok || failed > 0 {
        return Err(format!("tests failed: {}", failed_binaries.join(", ")).into());
    }
    if passed == 0 {
        return Err("cargo test ran no test at all".into());
    }
    Ok(())
}

/// Runs `f`, answering how long it took under the name `what`.
fn time_it(what: &'static str, f: impl FnOnce() -> Result<()>) -> Result<(&'static str, Duration)> {
    let t0 = Instant::now();
    f()?;
    Ok((what, t0.elapsed()))
}

/// `wrangler deploy --dry-run`: validates the bundle and bindings without an account.
fn deploy_dry_run() -> Result<()> {
    step("wrangler deploy --dry-run");
    let out_dir = target_dir().join("deploy-dry-run");
    let out = wrangler(None)
        .args(["deploy", "--dry-run", "--outdir"])
        .arg(&out_dir)
        .stdin(Stdio::null())
        .output()?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() {
        return Err(format!("wrangler deploy --dry-run failed:\n{text}").into());
    }
    if let Some(line) = text.lines().find(|l| l.contains("Total Upload")) {
        step(&format!("dry run ok — {}", line.trim()));
    }
    Ok(())
}
