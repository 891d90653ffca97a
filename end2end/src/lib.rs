//! End-to-end suites against the real local stack: `wrangler dev` (workerd + Miniflare with D1,
//! R2, Queues, the Durable Object and the cron) and `anthropic-sim`, in the test timing profile.
//!
//! Each suite is a test binary with its own small harness (`harness = false`): it starts **one**
//! stack for all its tests (wrangler dev takes ≈600 MB), runs the tests in order, prints cargo's
//! summary line, and tears the stack down whatever happened — a panic included.
//!
//! # Layout
//! - [`spawn_stack`]: a fresh stack on free ports with a fresh state directory.
//! - [`run_suite`]: the harness.
//! - [`api`]: HTTP helpers for the API suites.
//! - [`browser`]: Chromium through playwright-rs, with action / find / check helpers.
//! - [`pdfs`]: real small PDFs made in the tests.

pub mod api;
pub mod browser;
pub mod pdfs;

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use xtask::paths::target_dir;
use xtask::proc::free_port;
use xtask::stack::{Stack, StackOptions};
use xtask::wrangler_config::{LocalSettings, Profile};

/// A running stack, shared by the tests of a suite.
pub struct TestStack {
    /// The Worker, e.g. `http://127.0.0.1:41234`.
    pub base_url: String,
    /// The simulator serving the Worker's Anthropic calls.
    pub sim_url: String,
    pub sim: sim::Sim,
    /// Where this suite may write screenshots and other artifacts.
    pub artifacts: PathBuf,
    stack: std::sync::Mutex<Stack>,
}

impl TestStack {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base_url, path)
    }

    /// Kills the local runtime mid-run and starts it again on the same port and state.
    pub fn restart(&self) {
        let mut stack = self.stack.lock().unwrap_or_else(|p| p.into_inner());
        stack.restart().unwrap_or_else(|e| panic!("restart: {e}"));
    }

    /// Objects in the local R2 bucket, counted from the runtime's state on disk (what a refused
    /// request must not leave behind).
    pub fn r2_objects(&self) -> usize {
        fn walk(dir: &std::path::Path, in_blobs: bool) -> usize {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return 0;
            };
            entries
                .flatten()
                .map(|e| {
                    let p = e.path();
                    if p.is_dir() {
                        walk(&p, in_blobs || p.file_name().is_some_and(|n| n == "blobs"))
                    } else {
                        usize::from(in_blobs)
                    }
                })
                .sum()
        }
        walk(
            &self
                .artifacts
                .parent()
                .expect("state dir")
                .join("wrangler-state"),
            false,
        )
    }

    /// An API key for `user` made with the command-line path (`cargo xtask key create`).
    pub fn create_key(&self, user: &str, admin: bool) -> String {
        let role = if admin {
            pipeline::identity::Role::Admin
        } else {
            pipeline::identity::Role::User
        };
        let stack = self.stack.lock().unwrap_or_else(|p| p.into_inner());
        stack
            .create_key(user, role)
            .unwrap_or_else(|e| panic!("create a key for {user}: {e}"))
    }

    /// Rows of a SQL statement run on the stack's local D1 (`wrangler d1 execute`).
    pub fn d1(&self, sql: &str) -> Vec<serde_json::Value> {
        let stack = self.stack.lock().unwrap_or_else(|p| p.into_inner());
        stack.d1(sql).unwrap_or_else(|e| panic!("d1 {sql}: {e}"))
    }

    /// How many times the simulator billed `job` (by its `x-job-id` header or batch `custom_id`).
    pub fn billed(&self, job: &str) -> u64 {
        let sim = self.sim.lock();
        sim.stats.billed_by_job.get(job).copied().unwrap_or(0)
    }

    /// What the simulator billed `job` in all, in micro-dollars.
    pub fn sim_cost(&self, job: &str) -> u64 {
        let sim = self.sim.lock();
        sim.stats.cost_by_job.get(job).copied().unwrap_or(0)
    }

    /// Runs the cron now, as the dev tooling does every minute.
    pub fn trigger_cron(&self) -> u16 {
        self.try_trigger_cron().expect("cron trigger")
    }

    /// [`Self::trigger_cron`] that reports a failure (a runtime being restarted) instead of
    /// panicking.
    pub fn try_trigger_cron(&self) -> Option<u16> {
        let stack = self.stack.lock().unwrap_or_else(|p| p.into_inner());
        stack.trigger_cron().ok()
    }
}

/// Starts the simulator (in this process, on `rt`) and a fresh `wrangler dev` pointed at it.
/// Call it from the thread that outlives the suite: wrangler is tied to it (see `xtask::proc`).
pub fn spawn_stack(suite: &str, rt: &tokio::runtime::Runtime) -> TestStack {
    spawn_stack_with(suite, rt, sim::Knobs::default(), Vec::new())
}

/// [`spawn_stack`] with the simulator's knobs and further Worker vars (which win over the
/// profile's) chosen by the suite.
pub fn spawn_stack_with(
    suite: &str,
    rt: &tokio::runtime::Runtime,
    knobs: sim::Knobs,
    vars: Vec<(String, String)>,
) -> TestStack {
    let (sim_addr, sim) = rt
        .block_on(sim::spawn(sim::Config {
            api_key: None,
            knobs,
        }))
        .expect("start anthropic-sim");
    let sim_url = format!("http://{sim_addr}");
    let state_dir = target_dir().join("e2e").join(suite);
    let artifacts = state_dir.join("artifacts");
    let opts = StackOptions {
        port: free_port().expect("free port"),
        state_dir,
        fresh: true,
        settings: LocalSettings {
            profile: Profile::Test,
            auth_mode: "open",
            anthropic_base_url: sim_url.clone(),
            // Dead letters are announced to the simulator's webhook sink.
            extra_vars: vec![
                // Dead letters are announced to the simulator's webhook sink.
                (
                    "NOTIFY_WEBHOOK_URL".into(),
                    format!("{sim_url}/_sim/webhooks"),
                ),
                // Half the users take the queue path of POST /api/claude.
                ("QUEUE_ROLLOUT_PERCENT".into(), "50".into()),
            ]
            .into_iter()
            .chain(vars)
            .collect(),
        },
        anthropic_api_key: "sim-test-key".into(),
    };
    let stack = Stack::start(opts).unwrap_or_else(|e| panic!("the local stack did not start: {e}"));
    std::fs::create_dir_all(&artifacts).expect("artifacts dir");
    TestStack {
        base_url: stack.base_url.clone(),
        sim_url,
        sim,
        artifacts,
        stack: std::sync::Mutex::new(stack),
    }
}

/// One test: a name written as a sentence, and its body.
pub type TestFn = fn(Arc<TestStack>) -> Pin<Box<dyn Future<Output = ()> + Send>>;

/// The tests of a suite, by function name: `tests![a_thing_happens, another_thing_fails]`.
#[macro_export]
macro_rules! tests {
    ($($t:ident),* $(,)?) => {
        &[$((stringify!($t), (|s| Box::pin($t(s))) as $crate::TestFn)),*]
    };
}

/// Longest a single test may take before it counts as failed.
const TEST_TIMEOUT: Duration = Duration::from_secs(180);

/// Runs `tests` against one fresh stack and prints cargo's summary line.
/// An optional command-line argument filters tests by substring, as libtest does.
pub fn run_suite(suite: &str, tests: &[(&str, TestFn)]) -> ExitCode {
    run_suite_with(suite, sim::Knobs::default(), Vec::new(), tests)
}

/// [`run_suite`] on a stack with the simulator's knobs and further Worker vars of the suite's
/// choosing (see [`spawn_stack_with`]).
pub fn run_suite_with(
    suite: &str,
    knobs: sim::Knobs,
    vars: Vec<(String, String)>,
    tests: &[(&str, TestFn)],
) -> ExitCode {
    run_suite_timed(suite, knobs, vars, TEST_TIMEOUT, tests)
}

/// [`run_suite_with`] where each test may take up to `timeout` (the chaos run).
pub fn run_suite_timed(
    suite: &str,
    knobs: sim::Knobs,
    vars: Vec<(String, String)>,
    timeout: Duration,
    tests: &[(&str, TestFn)],
) -> ExitCode {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let selected: Vec<_> = tests
        .iter()
        .filter(|(name, _)| filter.as_deref().is_none_or(|f| name.contains(f)))
        .collect();
    println!("\nrunning {} tests (suite {suite})", selected.len());
    let started = Instant::now();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let mut failures = Vec::new();
    if !selected.is_empty() {
        let stack = Arc::new(spawn_stack_with(suite, &rt, knobs, vars));
        for (name, test) in &selected {
            let t0 = Instant::now();
            let fut = test(stack.clone());
            let outcome =
                rt.block_on(async { tokio::time::timeout(timeout, tokio::spawn(fut)).await });
            let failure = match outcome {
                Ok(Ok(())) => None,
                Ok(Err(join)) => Some(panic_message(join)),
                Err(_) => Some(format!("timed out after {timeout:?}")),
            };
            let ms = t0.elapsed().as_millis();
            match failure {
                None => println!("test {name} ... ok ({ms} ms)"),
                Some(msg) => {
                    println!("test {name} ... FAILED ({ms} ms)");
                    failures.push((name.to_string(), msg));
                }
            }
        }
        // Stops wrangler dev (and workerd) before the runtime and the simulator go away.
        drop(stack);
    }
    rt.shutdown_timeout(Duration::from_secs(5));
    if !failures.is_empty() {
        println!("\nfailures:");
        for (name, msg) in &failures {
            println!("\n---- {name} ----\n{msg}");
        }
    }
    let failed = failures.len();
    println!(
        "\ntest result: {}. {} passed; {} failed; 0 ignored; 0 measured; {} filtered out; finished in {:.2}s\n",
        if failed == 0 { "ok" } else { "FAILED" },
        selected.len() - failed,
        failed,
        tests.len() - selected.len(),
        started.elapsed().as_secs_f64()
    );
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn panic_message(join: tokio::task::JoinError) -> String {
    match join.try_into_panic() {
        Ok(payload) => payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panicked".into()),
        Err(e) => format!("task failed: {e}"),
    }
}

/// Polls `probe` until it returns `Some`, or panics with `what` after `timeout`.
pub async fn eventually<T, F, Fut>(what: &str, timeout: Duration, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = probe().await {
            return v;
        }
        if Instant::now() >= deadline {
            panic!("{what}: not within {timeout:?}");
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Polls `GET path` (as `user` in open mode; anonymous when `None`) until the job it answers has
/// `status`, running the cron before each poll when `cron` is set. Answers the job.
pub async fn job_reaches(
    s: &Arc<TestStack>,
    user: Option<&str>,
    path: &str,
    status: &str,
    timeout: Duration,
    cron: bool,
) -> serde_json::Value {
    eventually(&format!("{path} becomes {status}"), timeout, || async {
        if cron {
            let s = s.clone();
            tokio::task::spawn_blocking(move || s.trigger_cron())
                .await
                .unwrap();
        }
        let mut req = api::client().get(s.url(path));
        if let Some(user) = user {
            req = req.header("x-user-id", user);
        }
        let (code, job) = api::send_json(req).await;
        assert_eq!(code, 200, "GET {path}: {job}");
        (job["status"] == status).then_some(job)
    })
    .await
}
