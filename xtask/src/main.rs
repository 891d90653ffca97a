//! `cargo xtask <command>`: the project's two commands and their helpers.
//!
//! - `dev [--reset] [--auth] [--port 8787] [--sim-port 8788]`: build and run the whole stack
//!   locally. Its state lives in `.state/dev` (default port) or `.state/dev-<port>`, so two dev
//!   stacks on different ports run side by side without sharing a config or a database.
//! - `test [--jobs N]`: everything CI runs — fmt, clippy (host and wasm32), wasm builds, the
//!   deploy dry run, then every test built once (`cargo test --no-run`) and run side by side:
//!   host tests (the app's too, on the host), doc-tests, and the end-to-end suites against real
//!   local stacks, N (3) suites at a time. Ends with every `test result:` line and
//!   `N passed, N failed`; per-binary logs in `target/xtask-test/`.
//! - `test --suite NAME`: one end-to-end suite (`end2end/tests/NAME.rs`): builds what it needs
//!   (the SPA and the Worker), then `cargo test -p end2end --test NAME`.
//! - `build`: just the two wasm artifacts.
//! - `chaos [--jobs N] [--kills K]`: the chaos suite's full run (1,000 jobs, faults, two runtime
//!   kills; minutes — run it in the background); the report lands in `target/chaos/`.
//! - `bench [all]`: every benchmark below, one after the other, into `target/bench/results.md`
//!   (≈ 15 minutes; run it in the background).
//! - `bench budget [--jobs N]`: the rate-limit benchmark (minutes; run it in the background).
//! - `bench e2e [--jobs N]`: a sync job end to end with a 0-latency simulator, p50/p95.
//! - `bench render`: SPA and Worker sizes, the dashboard's first render in headless Chromium.
//! - `bench queries [--rows N]`: dashboard, usage and DLQ queries over 1,000,000 generated jobs.
//! - `bench load [--clients N] [--seconds S]`: the producers under 200 concurrent clients.
//! - `key create --user NAME [--admin] [--port N] [--remote]`: an API key, printed alone on the
//!   last line; into the state of the dev stack on port N (default 8787), or the deployed
//!   database with `--remote`.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use xtask::paths::{dev_state, root, target_dir, DEV_PORT};
use xtask::proc::{self, cargo, port_in_use, Service};
use xtask::stack::{wrangler, Stack, StackOptions};
use xtask::wrangler_config::{LocalSettings, Profile};
use xtask::{build, step, testing, tools, Result};

const USAGE: &str = "usage: cargo xtask <dev [--reset] [--auth] [--port N] [--sim-port N] | test [--suite NAME] [--jobs N] | build | chaos [--jobs N] [--kills K] | bench [all] | bench budget [--jobs N] | bench e2e [--jobs N] | bench render | bench queries [--rows N] | bench load [--clients N] [--seconds S] | key create --user NAME [--admin] [--port N] [--remote]>";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("dev") => dev(&args[1..]),
        Some("test") => test(&args[1..]),
        Some("build") => tools::ensure(false).and_then(|_| build_all()),
        Some("bench") => bench(&args[1..]),
        Some("chaos") => chaos(&args[1..]),
        Some("key") => key(&args[1..]),
        _ => Err(USAGE.into()),
    };
    if let Err(e) = result {
        eprintln!("\x1b[1;31merror:\x1b[0m {e}");
        std::process::exit(1);
    }
}

/// Builds what the stack runs, then the benchmark binary of `end2end` (it starts its own stacks).
fn bench(args: &[String]) -> Result<()> {
    let which = args.first().map(String::as_str).unwrap_or("all");
    if !matches!(
        which,
        "all" | "budget" | "queries" | "load" | "e2e" | "render"
    ) {
        return Err(format!(
            "unknown benchmark {which:?}; known: all (the default), budget, queries, load, e2e, render"
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
        .args(["test", "-q", "-p", "end2end", "--test", "chaos"])
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

fn build_all() -> Result<()> {
    build::spa()?;
    build::worker()?;
    Ok(())
}

struct DevArgs {
    reset: bool,
    /// Keys mode (`AUTH_MODE=keys`) with a demo admin and user.
    auth: bool,
    port: u16,
    sim_port: u16,
}

fn parse_dev(args: &[String]) -> Result<DevArgs> {
    let mut a = DevArgs {
        reset: false,
        auth: false,
        port: DEV_PORT,
        sim_port: DEV_PORT + 1,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut port = || -> Result<u16> {
            Ok(it
                .next()
                .ok_or(format!("{flag} needs a port"))?
                .parse()
                .map_err(|_| format!("{flag}: not a port"))?)
        };
        match flag.as_str() {
            "--reset" => a.reset = true,
            "--auth" => a.auth = true,
            "--port" => a.port = port()?,
            "--sim-port" => a.sim_port = port()?,
            other => return Err(format!("unknown flag {other}\n{USAGE}").into()),
        }
    }
    Ok(a)
}

/// The demo admin and user of `dev --auth`: created on the first start, kept (local dev only)
/// in the stack's state (`.state/dev/demo-keys.txt` on the default port) so that later starts
/// can print them again.
fn demo_keys(stack: &Stack) -> Result<String> {
    let file = stack.state_dir.join("demo-keys.txt");
    if let Ok(text) = std::fs::read_to_string(&file) {
        return Ok(text);
    }
    step("creating the demo admin and user keys");
    let admin = stack.create_key("admin", pipeline::identity::Role::Admin)?;
    let user = stack.create_key("demo", pipeline::identity::Role::User)?;
    let text = format!("admin (admin): {admin}\ndemo  (user):  {user}\n");
    std::fs::write(&file, &text)?;
    Ok(text)
}

/// The API base URL with a real key: `ANTHROPIC_BASE_URL` when set (a gateway or proxy), else
/// the API itself; a trailing slash is dropped.
fn real_base_url(var: Option<String>) -> String {
    var.map(|v| v.trim().trim_end_matches('/').to_owned())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "https://api.anthropic.com".into())
}

/// Builds everything, starts the simulator (unless a real key is set) and wrangler dev, triggers
/// the cron every minute, and stops every child cleanly on Ctrl-C.
fn dev(args: &[String]) -> Result<()> {
    let args = parse_dev(args)?;
    let started = Instant::now();
    tools::ensure(false)?;
    for (what, port) in [("the Worker", args.port), ("the simulator", args.sim_port)] {
        if port_in_use(port) {
            return Err(format!(
                "port {port} (for {what}) is in use: is another `cargo xtask dev` running? \
                 Choose others with --port / --sim-port."
            )
            .into());
        }
    }
    let real_key = std::env::var("ANTHROPIC_API_KEY")
        .ok()
        .filter(|k| !k.trim().is_empty());
    build_all()?;
    // Keyed by the Worker's port: a second dev stack never rewrites this one's config.
    let state = dev_state(args.port);
    if args.reset {
        step(&format!(
            "--reset: wiping local state ({})",
            state.display()
        ));
        let _ = std::fs::remove_dir_all(&state);
    }
    std::fs::create_dir_all(&state)?;
    let sim_log = state.join("anthropic-sim.log");
    let mut sim = None;
    let base_url = match &real_key {
        Some(_) => {
            // ANTHROPIC_BASE_URL points the Worker at a gateway (Cloudflare AI Gateway, a
            // corporate proxy) in front of the real API.
            let url = real_base_url(std::env::var("ANTHROPIC_BASE_URL").ok());
            step(&format!(
                "ANTHROPIC_API_KEY is set: the Worker calls the real Anthropic API at {url}"
            ));
            url
        }
        None => {
            step("building anthropic-sim");
            cargo(
                &["build", "-p", "sim", "--bin", "anthropic-sim"],
                "cargo build -p sim",
            )?;
            let bin = target_dir().join("debug").join("anthropic-sim");
            sim = Some(Service::spawn(
                "anthropic-sim",
                Command::new(bin).args(["--port", &args.sim_port.to_string()]),
                &sim_log,
            )?);
            format!("http://127.0.0.1:{}", args.sim_port)
        }
    };
    proc::catch_interrupts();
    let mut stack = Stack::start(StackOptions {
        port: args.port,
        state_dir: state.clone(),
        fresh: false,
        settings: LocalSettings {
            profile: Profile::Demo,
            auth_mode: if args.auth { "keys" } else { "open" },
            anthropic_base_url: base_url.clone(),
            extra_vars: Vec::new(),
        },
        anthropic_api_key: real_key.unwrap_or_else(|| "sim-local-key".into()),
    })?;
    let _ = stack.trigger_cron();
    let demo_keys = if args.auth {
        Some(demo_keys(&stack)?)
    } else {
        None
    };
    println!();
    println!(
        "  claude-pipeline is running ({:.0} s to start)",
        started.elapsed().as_secs_f64()
    );
    println!("  SPA and API   {}/", stack.base_url);
    println!("  health        {}/api/health", stack.base_url);
    println!(
        "  Anthropic     {base_url}{}",
        if sim.is_some() {
            "  (anthropic-sim)"
        } else {
            ""
        }
    );
    println!(
        "  cron          {}/__scheduled?cron=*+*+*+*+*  (triggered every minute)",
        stack.base_url
    );
    println!("  state         {}", stack.state_dir.display());
    println!(
        "  logs          {}",
        stack.state_dir.join("wrangler.log").display()
    );
    if sim.is_some() {
        println!("                {}", sim_log.display());
    }
    if let Some(keys) = &demo_keys {
        println!(
            "  auth          keys mode; demo keys (kept in {}):",
            state.join("demo-keys.txt").display()
        );
        for line in keys.lines() {
            println!("                {line}");
        }
        println!(
            "                more: cargo xtask key create --user NAME [--admin]{}",
            if args.port == DEV_PORT {
                String::new()
            } else {
                format!(" --port {}", args.port)
            }
        );
    }
    println!("  Ctrl-C stops everything.");
    println!();
    let mut next_cron = Instant::now() + Duration::from_secs(60);
    while !proc::interrupted() {
        std::thread::sleep(Duration::from_millis(200));
        if let Some(status) = stack.exited() {
            return Err(format!("wrangler dev exited ({status}):\n{}", stack.log_tail(30)).into());
        }
        if let Some(s) = sim.as_mut() {
            if let Some(status) = s.exited() {
                return Err(format!("anthropic-sim exited ({status}):\n{}", s.log_tail(20)).into());
            }
        }
        if Instant::now() >= next_cron {
            next_cron += Duration::from_secs(60);
            match stack.trigger_cron() {
                Ok(200) => {}
                Ok(code) => eprintln!("cron trigger answered {code}"),
                Err(e) => eprintln!("cron trigger failed: {e}"),
            }
        }
    }
    step("stopping wrangler dev and anthropic-sim");
    stack.stop();
    drop(sim);
    step("stopped");
    Ok(())
}

/// Everything CI runs (or, with `--suite NAME`, one end-to-end suite). Ends with the test
/// runners' summary lines and a total.
fn test(args: &[String]) -> Result<()> {
    let mut suite = None;
    let mut jobs = SUITES_AT_ONCE;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        match flag.as_str() {
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
    match suite {
        Some(name) => test_suite(&name),
        None => test_all(jobs),
    }
}

/// End-to-end suites run at once by `cargo xtask test` (each starts its own stack; ≈600 MB).
const SUITES_AT_ONCE: usize = 3;

/// `cargo xtask test --suite NAME`: what the suite needs (tools, the SPA and the Worker), then
/// `cargo test -p end2end --test NAME`.
fn test_suite(name: &str) -> Result<()> {
    let known = testing::suite_names()?;
    if !known.iter().any(|k| k == name) {
        return Err(format!("unknown suite {name:?}; known: {}", known.join(", ")).into());
    }
    let started = Instant::now();
    tools::ensure(true)?;
    build_all()?;
    step(&format!(
        "end-to-end suite {name} (cargo test -p end2end --test {name})"
    ));
    let (ran, ok) = testing::cargo_results(
        &["test", "-p", "end2end", "--test", name, "--color", "always"],
        &[],
    )?;
    let (summary, passed, failed) = testing::summary(&ran);
    step(&format!("done in {:.0} s", started.elapsed().as_secs_f64()));
    println!("{summary}");
    if !ok || failed > 0 || passed == 0 {
        return Err(format!("the {name} suite failed").into());
    }
    Ok(())
}

/// Everything CI runs: fmt, clippy (host and wasm32), the wasm builds, the deploy dry run, then
/// every test — host tests (pipeline, sim, xtask, end2end's own, the app's on the host),
/// doc-tests and the end-to-end suites — built once and run side by side.
fn test_all(suites_at_once: usize) -> Result<()> {
    let started = Instant::now();
    let mut timings: Vec<(&str, Duration)> = Vec::new();
    let mut timed = |what: &'static str, f: &mut dyn FnMut() -> Result<()>| -> Result<()> {
        let t0 = Instant::now();
        let r = f();
        timings.push((what, t0.elapsed()));
        r
    };
    timed("tools", &mut || tools::ensure(true))?;
    timed("fmt", &mut || {
        step("cargo fmt --check");
        cargo(
            &["fmt", "--all", "--", "--check"],
            "cargo fmt --check (run `cargo fmt --all`)",
        )
    })?;
    timed("clippy host", &mut || {
        step("clippy, host crates (-D warnings)");
        cargo(
            &["clippy", "--all-targets", "--", "-D", "warnings"],
            "clippy (host)",
        )
    })?;
    timed("clippy wasm32", &mut || {
        step("clippy, wasm32 crates (-D warnings)");
        cargo(
            &[
                "clippy",
                "-p",
                "worker-app",
                "-p",
                "app",
                "-p",
                "frontend",
                "--target",
                "wasm32-unknown-unknown",
                "--",
                "-D",
                "warnings",
            ],
            "clippy (wasm32)",
        )
    })?;
    timed("SPA", &mut || build::spa().map(|_| ()))?;
    timed("Worker", &mut || build::worker().map(|_| ()))?;
    timed("deploy dry run", &mut deploy_dry_run)?;
    let mut binaries = Vec::new();
    timed("build tests", &mut || {
        step("building the tests (cargo test --no-run): default members, then the app and the Worker on the host");
        binaries = testing::build_tests(&["test"], "cargo test --no-run")?;
        // The app and the Worker are wasm32 crates; their unit tests (formatting, chart scales;
        // the store's rows and query text) are pure and run on the host.
        binaries.extend(testing::build_tests(
            &["test", "-p", "app", "-p", "worker-app", "--lib"],
            "cargo test -p app -p worker-app --lib --no-run",
        )?);
        Ok(())
    })?;
    let env = vec![(
        "SIM_SDK_PYTHONPATH".to_string(),
        tools::python_sdk_dir().to_string_lossy().into_owned(),
    )];
    let mut ran = Vec::new();
    let mut doc_ok = true;
    timed("tests", &mut || {
        step(&format!(
            "running {} test binaries ({suites_at_once} end-to-end suites at a time) and the doc-tests",
            binaries.len()
        ));
        let docs = {
            let env = env.clone();
            std::thread::spawn(move || {
                testing::cargo_results(
                    &["test", "--doc", "--no-fail-fast", "--color", "always"],
                    &env,
                )
            })
        };
        ran = testing::run_all(std::mem::take(&mut binaries), &env, suites_at_once)?;
        let (doc_ran, ok) = docs.join().map_err(|_| "the doc-tests thread panicked")??;
        doc_ok = ok;
        ran.extend(doc_ran);
        Ok(())
    })?;
    let (summary, passed, failed) = testing::summary(&ran);
    let failed_binaries: Vec<&str> = ran
        .iter()
        .filter(|r| !r.success)
        .map(|r| r.label.as_str())
        .collect();
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

#[cfg(test)]
mod tests {
    use super::real_base_url;

    #[test]
    fn a_real_key_calls_the_api_or_the_gateway_named_by_anthropic_base_url() {
        assert_eq!(real_base_url(None), "https://api.anthropic.com");
        assert_eq!(
            real_base_url(Some("  ".into())),
            "https://api.anthropic.com"
        );
        assert_eq!(
            real_base_url(Some(
                "https://gateway.ai.cloudflare.com/v1/acct/gw/anthropic/".into()
            )),
            "https://gateway.ai.cloudflare.com/v1/acct/gw/anthropic"
        );
    }
}
