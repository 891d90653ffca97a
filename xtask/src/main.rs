//! `cargo xtask <command>`: the project's two commands and their helpers.
//!
//! - `dev [--reset] [--port 8787] [--sim-port 8788]`: build and run the whole stack locally.
//! - `test`: everything CI runs — fmt, clippy (host and wasm32), host tests, wasm builds, the
//!   deploy dry run, and the end-to-end suites against a real local stack.
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
//! - `key create --user NAME [--admin] [--remote]`: an API key, printed alone on the last line.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use xtask::paths::{dev_state, root, target_dir};
use xtask::proc::{self, cargo, port_in_use, Service};
use xtask::stack::{wrangler, Stack, StackOptions};
use xtask::wrangler_config::{LocalSettings, Profile};
use xtask::{build, step, tools, Result};

const USAGE: &str = "usage: cargo xtask <dev [--reset] [--auth] [--port N] [--sim-port N] | test | build | chaos [--jobs N] [--kills K] | bench [all] | bench budget [--jobs N] | bench e2e [--jobs N] | bench render | bench queries [--rows N] | bench load [--clients N] [--seconds S] | key create --user NAME [--admin] [--remote]>";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("dev") => dev(&args[1..]),
        Some("test") => test(),
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

/// `key create --user NAME [--admin] [--remote]`: into the local dev state (after a first
/// `cargo xtask dev`), or the deployed database. The key alone is the last line of stdout.
fn key(args: &[String]) -> Result<()> {
    if args.first().map(String::as_str) != Some("create") {
        return Err(USAGE.into());
    }
    let (mut user, mut role, mut remote) = (None, pipeline::identity::Role::User, false);
    let mut it = args[1..].iter();
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--user" => user = it.next().cloned(),
            "--admin" => role = pipeline::identity::Role::Admin,
            "--remote" => remote = true,
            other => return Err(format!("unknown flag {other}\n{USAGE}").into()),
        }
    }
    let user = user.ok_or("--user NAME is required")?;
    let key = if remote {
        xtask::keys::create(xtask::keys::Target::Remote, &user, role)?
    } else {
        let config = dev_state().join("wrangler.toml");
        if !config.exists() {
            return Err("no local state yet: run `cargo xtask dev` once (or pass --remote)".into());
        }
        let persist = dev_state().join("wrangler-state");
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
        port: 8787,
        sim_port: 8788,
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
/// in `.state/dev/demo-keys.txt` so that later starts can print them again.
fn demo_keys(stack: &Stack) -> Result<String> {
    let file = dev_state().join("demo-keys.txt");
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
    if args.reset {
        step("--reset: wiping local state (.state/dev)");
        let _ = std::fs::remove_dir_all(dev_state());
    }
    std::fs::create_dir_all(dev_state())?;
    let sim_log = dev_state().join("anthropic-sim.log");
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
        state_dir: dev_state(),
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
            dev_state().join("demo-keys.txt").display()
        );
        for line in keys.lines() {
            println!("                {line}");
        }
        println!("                more: cargo xtask key create --user NAME [--admin]");
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

/// Everything CI runs. Ends with the test runners' summary lines and a total.
fn test() -> Result<()> {
    let started = Instant::now();
    tools::ensure(true)?;
    step("cargo fmt --check");
    cargo(
        &["fmt", "--all", "--", "--check"],
        "cargo fmt --check (run `cargo fmt --all`)",
    )?;
    step("clippy, host crates (-D warnings)");
    cargo(
        &["clippy", "--all-targets", "--", "-D", "warnings"],
        "clippy (host)",
    )?;
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
    )?;
    build_all()?;
    deploy_dry_run()?;
    step("host tests and end-to-end suites (cargo test)");
    let summary = cargo_test()?;
    step(&format!("done in {:.0} s", started.elapsed().as_secs_f64()));
    println!("{summary}");
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

/// Runs `cargo test --no-fail-fast` (the default members: pipeline, sim, xtask, end2end; every
/// suite runs even when an earlier one failed), echoing its output,
/// and returns a summary: each test binary's `test result:` line and the totals.
fn cargo_test() -> Result<String> {
    // stderr merged into stdout, so each result line can be labelled with the binary that
    // cargo announced ("Running …" / "Doc-tests …") just before it.
    let mut child = Command::new("sh")
        .args(["-c", "exec cargo test --no-fail-fast --color always 2>&1"])
        .current_dir(root())
        .env("SIM_SDK_PYTHONPATH", tools::python_sdk_dir())
        .stdout(Stdio::piped())
        .spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut results = Vec::new();
    let mut current = String::new();
    for line in BufReader::new(stdout).lines() {
        let line = line?;
        println!("{line}");
        let plain = strip_ansi(&line);
        let trimmed = plain.trim_start();
        if let Some(what) = trimmed.strip_prefix("Running ") {
            current = label(what);
        } else if let Some(krate) = trimmed.strip_prefix("Doc-tests ") {
            current = format!("{krate} doc-tests");
        } else if trimmed.starts_with("test result:") {
            results.push((current.clone(), trimmed.to_string()));
        }
    }
    let status = child.wait()?;
    let count = |word: &str| -> u64 {
        results
            .iter()
            .filter_map(|(_, l)| {
                let before = l.split(&format!(" {word}")).next()?;
                before.rsplit(' ').next()?.parse::<u64>().ok()
            })
            .sum()
    };
    let (passed, failed) = (count("passed"), count("failed"));
    let mut summary = String::from("\ntest summary:\n");
    for (binary, r) in &results {
        // Binaries without tests (doc-tests of crates without examples, bins) are not listed.
        if !r.contains(" 0 passed; 0 failed;") {
            summary.push_str(&format!("  {binary:<40} {r}\n"));
        }
    }
    summary.push_str(&format!("{passed} passed, {failed} failed"));
    if !status.success() || failed > 0 {
        println!("{summary}");
        return Err(format!("cargo test failed ({status})").into());
    }
    if passed == 0 {
        return Err("cargo test ran no test at all".into());
    }
    Ok(summary)
}

/// `unittests src/lib.rs (target/debug/deps/pipeline-0123abcd)` → `pipeline unittests src/lib.rs`.
fn label(running: &str) -> String {
    let (what, path) = running.split_once(" (").unwrap_or((running, ""));
    let file = path
        .trim_end_matches(')')
        .rsplit('/')
        .next()
        .unwrap_or_default();
    let krate = file.rsplit_once('-').map_or(file, |(name, _hash)| name);
    format!("{krate} {what}").trim().to_string()
}

/// Drops ANSI colour sequences (cargo colours its status words).
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
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
