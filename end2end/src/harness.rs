//! The suites' harness (`harness = false`): one binary for every suite ([`main`]), one stack for
//! all the tests of a suite, the tests in order, cargo's summary line, and the stack torn down
//! whatever happened — a panic included.

use std::future::Future;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::stack::{spawn_stack_of, StackConfig, TestStack};
use crate::timing::{waited, SuiteTiming, TestTiming};

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
pub const TEST_TIMEOUT: Duration = Duration::from_secs(180);

/// A suite: its name, its stack's configuration, its tests in order, and how long each may take.
pub struct Suite {
    pub name: &'static str,
    pub config: StackConfig,
    pub timeout: Duration,
    pub tests: Vec<(&'static str, TestFn)>,
}

/// `tests` against one fresh default stack.
pub fn suite(name: &'static str, tests: &[(&'static str, TestFn)]) -> Suite {
    suite_with(name, StackConfig::default(), tests)
}

/// [`suite`] on a stack configured by the suite (see [`StackConfig`]).
pub fn suite_with(
    name: &'static str,
    config: StackConfig,
    tests: &[(&'static str, TestFn)],
) -> Suite {
    suite_timed(name, config, TEST_TIMEOUT, tests)
}

/// [`suite_with`] where each test may take up to `timeout` (the chaos run, the stream).
pub fn suite_timed(
    name: &'static str,
    config: StackConfig,
    timeout: Duration,
    tests: &[(&'static str, TestFn)],
) -> Suite {
    Suite {
        name,
        config,
        timeout,
        tests: tests.to_vec(),
    }
}

/// A suite by name, made only when it runs (making one may read its environment).
pub type Named = (&'static str, fn() -> Suite);

/// The suites' binary: `e2e [SUITE [FILTER]]` runs one suite (its tests whose names contain
/// FILTER, as libtest filters), or every suite one after the other; `e2e --list` names them.
/// One binary for every suite: one link, and one compilation of what they share.
pub fn main(suites: &[Named]) -> ExitCode {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-') || a == "--list")
        .collect();
    if args.first().map(String::as_str) == Some("--list") {
        for (name, _) in suites {
            println!("{name}");
        }
        return ExitCode::SUCCESS;
    }
    let chosen: Vec<&Named> = match args.first() {
        Some(name) => match suites.iter().find(|(n, _)| n == name) {
            Some(s) => vec![s],
            None => {
                let known: Vec<&str> = suites.iter().map(|(n, _)| *n).collect();
                eprintln!("no suite {name:?}; known: {}", known.join(", "));
                return ExitCode::FAILURE;
            }
        },
        None => suites.iter().collect(),
    };
    let filter = args.get(1).map(String::as_str);
    let mut code = ExitCode::SUCCESS;
    for (_, make) in chosen {
        if run(make(), filter) != ExitCode::SUCCESS {
            code = ExitCode::FAILURE;
        }
    }
    code
}

/// Runs `suite`'s tests (those whose names contain `filter`) against one fresh stack, and
/// prints cargo's summary line.
fn run(suite: Suite, filter: Option<&str>) -> ExitCode {
    let Suite {
        name: suite,
        config,
        timeout,
        tests,
    } = suite;
    let selected: Vec<_> = tests
        .iter()
        .filter(|(name, _)| filter.is_none_or(|f| name.contains(f)))
        .collect();
    println!("\nrunning {} tests (suite {suite})", selected.len());
    let started = Instant::now();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let mut failures = Vec::new();
    let mut timing = SuiteTiming::default();
    if !selected.is_empty() {
        let stack = Arc::new(spawn_stack_of(suite, &rt, config));
        println!(
            "stack of suite {suite} ready in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        (timing.sim_ms, timing.stack) = (stack.sim_ms, stack.phases);
        for (name, test) in &selected {
            let t0 = Instant::now();
            let waited0 = waited();
            let fut = test(stack.clone());
            let outcome =
                rt.block_on(async { tokio::time::timeout(timeout, tokio::spawn(fut)).await });
            let failure = match outcome {
                Ok(Ok(())) => None,
                Ok(Err(join)) => Some(panic_message(join)),
                Err(_) => Some(format!("timed out after {timeout:?}")),
            };
            let ms = t0.elapsed().as_millis();
            timing.tests.push(TestTiming {
                name: name.to_string(),
                ms: ms.try_into().unwrap_or(u64::MAX),
                waiting_ms: crate::timing::ms(waited().saturating_sub(waited0)),
            });
            match failure {
                None => println!("test {name} ... ok ({ms} ms)"),
                Some(msg) => {
                    println!("test {name} ... FAILED ({ms} ms)");
                    failures.push((name.to_string(), msg));
                }
            }
        }
        // Every suite is a production-limits test: no invocation of its stack may have
        // passed a limit of Cloudflare's (which `wrangler dev` does not enforce).
        let exceeded = stack.envelope_exceeded();
        let name = "no_invocation_passed_a_production_limit";
        if exceeded.is_empty() {
            println!("test {name} ... ok");
        } else {
            println!("test {name} ... FAILED");
            failures.push((name.to_string(), exceeded.join("\n")));
        }
        // Stops wrangler dev (and workerd) before the runtime and the simulator go away.
        let t0 = Instant::now();
        drop(stack);
        rt.shutdown_timeout(Duration::from_secs(5));
        timing.teardown_ms = crate::timing::ms(t0.elapsed());
    } else {
        rt.shutdown_timeout(Duration::from_secs(5));
    }
    timing.write(suite);
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
        selected.len() + usize::from(!selected.is_empty()) - failed,
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
