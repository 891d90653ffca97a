//! Running the test binaries of `cargo xtask test`: built once by cargo (`cargo test --no-run`,
//! whose JSON messages name every test executable), then run here — the host tests and the
//! end-to-end suites side by side, a few suites at a time (each suite starts its own stack on
//! free ports with its own state directory, so they do not share anything) — each binary's
//! output kept in a log and echoed whole when it ends, and a summary of every `test result:`
//! line with the totals.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::paths::{root, target_dir};
use crate::{step, Result};

/// One test executable, as cargo built it.
#[derive(Debug, Clone)]
pub struct TestBinary {
    /// `pipeline unittests src/lib.rs`, `sim tests/http.rs`, `end2end suite jobs`.
    pub label: String,
    pub exe: PathBuf,
    /// The package's directory: cargo runs tests from there.
    pub dir: PathBuf,
    pub package: String,
    /// The end-to-end suite's name: the `e2e` binary of `end2end`, run for one suite (its
    /// one argument).
    pub suite: Option<String>,
}

/// `cargo <args> --no-run --message-format=json-render-diagnostics`: builds the test targets
/// that `args` select (compiler messages still reach the terminal) and answers their
/// executables.
pub fn build_tests(args: &[&str], what: &str, priority: Priority) -> Result<Vec<TestBinary>> {
    let mut child = priority
        .command(std::ffi::OsStr::new("cargo"))
        .args(args)
        .args(["--no-run", "--message-format=json-render-diagnostics"])
        .current_dir(root())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{what}: cannot start cargo: {e}"))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut found = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let msg: Value = match serde_json::from_str(&line?) {
            Ok(v) => v,
            Err(_) => continue,
        };
        if msg["reason"] != "compiler-artifact" || msg["profile"]["test"] != true {
            continue;
        }
        let Some(exe) = msg["executable"].as_str() else {
            continue;
        };
        found.extend(binaries(&msg, exe)?);
    }
    let status = child.wait()?;
    if !status.success() {
        return Err(format!("{what} failed ({status})").into());
    }
    Ok(found)
}

/// The runs of a built test target: one, or one per suite for `end2end`'s `e2e`.
fn binaries(msg: &Value, exe: &str) -> Result<Vec<TestBinary>> {
    let b = binary(msg, exe);
    let is_suites = b.package == "end2end" && msg["target"]["kind"] == serde_json::json!(["test"]);
    if !is_suites {
        return Ok(vec![b]);
    }
    Ok(suite_names()?
        .into_iter()
        .map(|name| TestBinary {
            label: format!("end2end suite {name}"),
            suite: Some(name),
            ..b.clone()
        })
        .collect())
}

fn binary(msg: &Value, exe: &str) -> TestBinary {
    let manifest = PathBuf::from(msg["manifest_path"].as_str().unwrap_or_default());
    let dir = manifest
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(root);
    let package = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let target = &msg["target"];
    let kinds: Vec<&str> = target["kind"]
        .as_array()
        .map(|k| k.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let src = PathBuf::from(target["src_path"].as_str().unwrap_or_default());
    let rel = src
        .strip_prefix(&dir)
        .unwrap_or(&src)
        .to_string_lossy()
        .into_owned();
    let label = if kinds.contains(&"test") {
        format!("{package} {rel}")
    } else {
        format!("{package} unittests {rel}")
    };
    TestBinary {
        label,
        exe: PathBuf::from(exe),
        dir,
        package,
        suite: None,
    }
}

/// The `[env]` of `.cargo/config.toml` (cargo gives it to the tests it runs; so do we), with
/// `relative = true` paths made absolute.
fn config_env() -> Vec<(String, String)> {
    let path = root().join(".cargo").join("config.toml");
    let Ok(table) = std::fs::read_to_string(&path)
        .unwrap_or_default()
        .parse::<toml::Table>()
    else {
        return Vec::new();
    };
    let Some(env) = table.get("env").and_then(|e| e.as_table()) else {
        return Vec::new();
    };
    env.iter()
        .filter_map(|(k, v)| match v {
            toml::Value::String(s) => Some((k.clone(), s.clone())),
            toml::Value::Table(t) => {
                let value = t.get("value")?.as_str()?;
                let relative = t.get("relative").and_then(|r| r.as_bool()) == Some(true);
                let value = if relative {
                    root().join(value).to_string_lossy().into_owned()
                } else {
                    value.to_string()
                };
                Some((k.clone(), value))
            }
            _ => None,
        })
        .collect()
}

/// What one binary did.
#[derive(Debug, Clone)]
pub struct Ran {
    pub label: String,
    /// Whether it was an end-to-end suite.
    pub suite: bool,
    /// When it ran, since the test run began (binaries this runner ran; not cargo's doc-tests).
    pub span: Option<(Duration, Duration)>,
    /// Its `test result:` lines (one for a libtest binary or a suite).
    pub results: Vec<String>,
    pub success: bool,
    pub took: Duration,
}

/// Runs the host test binaries of `binaries` (every one that starts no stack), all at once,
/// with `env` added, and gives back the end-to-end suites for [`run_suites`]. The host tests
/// need neither wasm build and nothing waits for them, so `cargo xtask test` starts them as
/// soon as they are built, at the lowest priority: they take the CPU the wasm builds and the
/// suites leave.
pub fn run_host(
    binaries: Vec<TestBinary>,
    env: &[(String, String)],
) -> (std::thread::JoinHandle<Result<Vec<Ran>>>, Vec<TestBinary>) {
    let logs = target_dir().join("xtask-test");
    let _ = std::fs::create_dir_all(&logs);
    let (suites, host): (Vec<_>, Vec<_>) = binaries.into_iter().partition(|b| b.suite.is_some());
    let mut env = env.to_vec();
    env.extend(config_env());
    let epoch = Instant::now();
    let runs = std::thread::spawn(move || {
        let threads: Vec<_> = host
            .into_iter()
            .map(|b| {
                let (env, log) = (env.clone(), logs.join(file_name(&b.label)));
                std::thread::spawn(move || run_one(&b, &env, &log, epoch, Priority::Background))
            })
            .collect();
        threads
            .into_iter()
            .map(|t| {
                t.join()
                    .map_err(|_| "a host test runner thread died".into())
            })
            .collect()
    });
    (runs, suites)
}

/// Runs the end-to-end `suites` (with `env` added), at most `suites_at_once` at a time,
/// longest first (`expected` seconds by label, from the last run). Each binary's output is
/// echoed whole when it ends. Suites set their time apart from the machine's speed (see their
/// docs), so they run side by side — except [`ALONE`].
pub fn run_suites(
    suites: Vec<TestBinary>,
    env: &[(String, String)],
    suites_at_once: usize,
) -> Result<Vec<Ran>> {
    let logs = target_dir().join("xtask-test");
    std::fs::create_dir_all(&logs)?;
    let timing_dir = logs.join("timing");
    let _ = std::fs::remove_dir_all(&timing_dir);
    let expected = read_durations(&logs);
    let mut suites = suites;
    suites.sort_by(|a, b| {
        let t = |x: &TestBinary| expected.get(&x.label).copied().unwrap_or(60.0);
        t(b).total_cmp(&t(a))
    });
    let mut env = env.to_vec();
    env.extend(config_env());
    env.push((
        "E2E_TIMING_DIR".into(),
        timing_dir.to_string_lossy().into_owned(),
    ));
    let (tx, rx) = mpsc::channel::<Ran>();
    let epoch = Instant::now();
    let spawn = |b: TestBinary| {
        let (tx, env, log) = (tx.clone(), env.clone(), logs.join(file_name(&b.label)));
        std::thread::spawn(move || {
            let _ = tx.send(run_one(&b, &env, &log, epoch, Priority::Normal));
        });
    };
    let total = suites.len();
    // The ones that must be alone run first, one at a time, while only the host tests and the
    // doc-tests (at the lowest priority) use the other core; then a suite that ends makes
    // room for the next one.
    let (alone, shared): (Vec<_>, Vec<_>) = suites
        .into_iter()
        .partition(|b| b.suite.as_deref().is_some_and(|s| ALONE.contains(&s)));
    let mut ran = Vec::new();
    for b in alone {
        spawn(b);
        ran.push(
            rx.recv()
                .map_err(|e| format!("a test runner thread died: {e}"))?,
        );
    }
    let mut queue = shared.into_iter();
    for b in queue.by_ref().take(suites_at_once.max(1)) {
        spawn(b);
    }
    while ran.len() < total {
        let r = rx
            .recv()
            .map_err(|e| format!("a test runner thread died: {e}"))?;
        if let Some(next) = queue.next() {
            spawn(next);
        }
        ran.push(r);
    }
    write_durations(&logs, &ran);
    Ok(ran)
}

/// Suites that run before the others, one at a time. `abuse` sends bursts of 300 requests at one
/// local isolate; now and then (three in ten full runs of 2026-12-03/04, one of them alone;
/// once more in eight runs of 2026-12-04 beside five other stacks) the local queue broker then
/// waits for ever on a high-lane consumer invocation whose handler has returned (the Worker logs
/// its end; Miniflare's broker, awaiting the `queue()` call in `#dispatchBatch`, never logs the
/// batch's outcome) and, holding its one batch in flight, delivers nothing more on the lane.
/// Not understood: the `queue_consumer_no_wait_for_wait_until` flag, tried on 2026-12-04 on the
/// guess that a `waitUntil` task held the invocation, did not prevent it. Nothing production
/// does (there an invocation ends at its wall-clock limit and its batch is retried); alone, the
/// bursts meet less load, and the suite's other timing faults — a call timeout, a cron trigger,
/// a reset connection — have been set far apart or are retried as a client would.
const ALONE: &[&str] = &["abuse"];

/// The soak runs of `cargo xtask test --soak`: suites at production sizes, too long for the
/// main set, which runs each of them in a small form (the sizes are the suites' defaults).
/// Each entry: the suite and the environment that sizes it.
pub const SOAK: &[(&str, &[(&str, &str)])] = &[
    // A Message Batch of the API's maximum, 100,000 requests (12,000 in the main set).
    ("stream", &[("STREAM_JOBS", "100000")]),
    // 1,000 mixed jobs under faults and two kills (200 in the main set).
    ("chaos", &[("CHAOS_JOBS", "1000"), ("CHAOS_KILLS", "2")]),
    // The largest upload the API accepts, five PDFs of 18.8 MiB (one in the main set), and the
    // worst cron run at production's sizes (a tenth in the main set).
    (
        "envelope",
        &[("ENVELOPE_UPLOAD_FILES", "5"), ("ENVELOPE_SCALE", "1")],
    ),
];

/// Runs the soak suites of `binaries`, one after the other (each loads the machine on its own),
/// each with its sizing environment added to `env`.
pub fn run_soak(binaries: Vec<TestBinary>, env: &[(String, String)]) -> Result<Vec<Ran>> {
    let logs = target_dir().join("xtask-test").join("soak");
    std::fs::create_dir_all(&logs)?;
    let mut env = env.to_vec();
    env.extend(config_env());
    let epoch = Instant::now();
    let mut ran = Vec::new();
    for (suite, sizes) in SOAK {
        let b = binaries
            .iter()
            .find(|b| b.suite.as_deref() == Some(suite))
            .ok_or_else(|| format!("the soak suite {suite} was not built"))?;
        let mut env = env.clone();
        env.extend(sizes.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        ran.push(run_one(
            b,
            &env,
            &logs.join(file_name(&b.label)),
            epoch,
            Priority::Normal,
        ));
    }
    Ok(ran)
}

/// The suites of `ran` with the figures they wrote, and the table of where their time went
/// (also written to `target/xtask-test/timings.md`).
pub fn time_table(ran: &[Ran]) -> String {
    let dir = target_dir().join("xtask-test");
    let runs: Vec<report::SuiteRun> = ran
        .iter()
        .filter(|r| r.suite)
        .filter_map(|r| {
            let name = r.label.strip_prefix("end2end suite ")?.to_string();
            Some(report::SuiteRun {
                figures: report::Figures::read(&dir.join("timing"), &name),
                span: r.span?,
                name,
            })
        })
        .collect();
    let table = report::table(&runs);
    let _ = std::fs::write(dir.join("timings.md"), &table);
    table
}

/// How a test process is scheduled beside the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Priority {
    Normal,
    /// `nice -n 19`: what nothing else waits for takes only the CPU the rest leaves.
    Background,
}

impl Priority {
    fn command(self, program: &std::ffi::OsStr) -> Command {
        match self {
            Priority::Normal => Command::new(program),
            Priority::Background => {
                let mut c = Command::new("nice");
                c.args(["-n", "19"]).arg(program);
                c
            }
        }
    }
}

fn run_one(
    b: &TestBinary,
    env: &[(String, String)],
    log: &Path,
    epoch: Instant,
    priority: Priority,
) -> Ran {
    step(&format!("started {}", b.label));
    let started = Instant::now();
    let status = std::fs::File::create(log).and_then(|out| {
        let err = out.try_clone()?;
        priority
            .command(b.exe.as_os_str())
            .args(&b.suite)
            .current_dir(&b.dir)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .env("CARGO_MANIFEST_DIR", &b.dir)
            .env("CARGO_PKG_NAME", &b.package)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .status()
    });
    let took = started.elapsed();
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let results: Vec<String> = text
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("test result:"))
        .map(String::from)
        .collect();
    let success = matches!(&status, Ok(s) if s.success());
    // One block per binary, as cargo prints it, so parallel runs never interleave.
    let mut block = format!("\n     Running {} ({})\n{text}", b.label, b.exe.display());
    match &status {
        Ok(s) if !s.success() => block.push_str(&format!("\n{} exited: {s}\n", b.label)),
        Err(e) => block.push_str(&format!("\n{} did not run: {e}\n", b.label)),
        _ => {}
    }
    print!("{block}");
    step(&format!(
        "{} {} in {:.0} s",
        b.label,
        if success { "passed" } else { "FAILED" },
        took.as_secs_f64()
    ));
    Ran {
        label: b.label.clone(),
        suite: b.suite.is_some(),
        span: Some((started - epoch, started - epoch + took)),
        results,
        success,
        took,
    }
}

fn file_name(label: &str) -> String {
    let safe: String = label
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("{safe}.log")
}

fn read_durations(dir: &Path) -> BTreeMap<String, f64> {
    std::fs::read_to_string(dir.join("durations.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

fn write_durations(dir: &Path, ran: &[Ran]) {
    let mut d = read_durations(dir);
    for r in ran {
        d.insert(r.label.clone(), r.took.as_secs_f64());
    }
    if let Ok(text) = serde_json::to_string_pretty(&d) {
        let _ = std::fs::write(dir.join("durations.json"), text);
    }
}

/// `cargo <args>` whose output is echoed and whose `test result:` lines are labelled by the
/// binary cargo announced before them (for doc-tests, which only cargo can run).
pub fn cargo_results(
    args: &[&str],
    env: &[(String, String)],
    priority: Priority,
) -> Result<(Vec<Ran>, bool)> {
    let started = Instant::now();
    let mut cmd = priority.command(std::ffi::OsStr::new("sh"));
    cmd.arg("-c")
        .arg(format!("exec cargo {} 2>&1", args.join(" ")))
        .current_dir(root())
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdout(Stdio::piped());
    let mut child = cmd.spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut ran: Vec<Ran> = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line?;
        println!("{line}");
        let plain = strip_ansi(&line);
        let trimmed = plain.trim_start();
        let label = if let Some(what) = trimmed.strip_prefix("Running ") {
            Some(label(what))
        } else {
            trimmed
                .strip_prefix("Doc-tests ")
                .map(|k| format!("{k} doc-tests"))
        };
        if let Some(label) = label {
            ran.push(Ran {
                label,
                suite: false,
                span: None,
                results: Vec::new(),
                success: true,
                took: Duration::ZERO,
            });
        } else if trimmed.starts_with("test result:") {
            if let Some(last) = ran.last_mut() {
                last.results.push(trimmed.to_string());
                last.success = !trimmed.contains("FAILED");
                last.took = started.elapsed();
            }
        }
    }
    let status = child.wait()?;
    Ok((ran, status.success()))
}

/// Every `test result:` line (binaries without tests left out) and the totals, ending with
/// `N passed, N failed`; and the totals.
pub fn summary(ran: &[Ran]) -> (String, u64, u64) {
    let count = |word: &str| -> u64 {
        ran.iter()
            .flat_map(|r| &r.results)
            .filter_map(|l| {
                let before = l.split(&format!(" {word}")).next()?;
                before.rsplit(' ').next()?.parse::<u64>().ok()
            })
            .sum()
    };
    let (passed, failed) = (count("passed"), count("failed"));
    let mut text = String::from("\ntest summary:\n");
    for r in ran {
        for line in &r.results {
            if !line.contains(" 0 passed; 0 failed;") {
                text.push_str(&format!("  {:<40} {line}\n", r.label));
            }
        }
        if !r.success && r.results.is_empty() {
            text.push_str(&format!("  {:<40} FAILED without a result line\n", r.label));
        }
    }
    text.push_str(&format!("{passed} passed, {failed} failed"));
    (text, passed, failed)
}

/// `unittests src/lib.rs (target/debug/deps/pipeline-0123abcd)` → `pipeline unittests src/lib.rs`.
pub fn label(running: &str) -> String {
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
pub fn strip_ansi(s: &str) -> String {
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

/// Where the end-to-end suites live: a module each, of the `e2e` binary (`main.rs`).
pub fn suites_dir() -> PathBuf {
    root().join("end2end").join("tests").join("e2e")
}

/// The end-to-end suites, by name, as the `e2e` binary's table lists them (`SUITES` in its
/// `main.rs`: a line `("NAME", module::function),` each).
pub fn suite_names() -> Result<Vec<String>> {
    let path = suites_dir().join("main.rs");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("reading {path:?}: {e}"))?;
    Ok(text
        .lines()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix("(\"")?;
            let (name, tail) = rest.split_once("\", ")?;
            tail.ends_with("),").then(|| name.to_string())
        })
        .collect())
}

pub mod report;

#[cfg(test)]
mod tests;
