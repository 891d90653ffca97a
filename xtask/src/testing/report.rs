//! Where the suites' time went: per end-to-end suite its wall time split into stack start (the
//! simulator, the D1 state copied from the template or migrated, `wrangler dev` until ready),
//! waiting on the pipeline, running, and teardown — from the figures each suite writes (see
//! `end2end::timing`) — and which suites ran beside it.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

/// One suite's run as the runner saw it (`span`: start and end since the test run began) and
/// as the suite itself reported it.
#[derive(Debug, Clone)]
pub struct SuiteRun {
    pub name: String,
    pub span: (Duration, Duration),
    pub figures: Option<Figures>,
}

/// What a suite wrote about itself, in milliseconds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    pub sim_ms: u64,
    pub template_ms: u64,
    pub migrations_ms: u64,
    pub ready_ms: u64,
    pub teardown_ms: u64,
    pub tests: u64,
    pub tests_ms: u64,
    pub waiting_ms: u64,
}

impl Figures {
    /// Reads `<dir>/<suite>.json`, if the suite wrote it.
    pub fn read(dir: &Path, suite: &str) -> Option<Figures> {
        let text = std::fs::read_to_string(dir.join(format!("{suite}.json"))).ok()?;
        Figures::parse(&serde_json::from_str(&text).ok()?)
    }

    fn parse(v: &Value) -> Option<Figures> {
        let n = |k: &str| v[k].as_u64().unwrap_or(0);
        let tests = v["tests"].as_array()?;
        let sum = |k: &str| tests.iter().filter_map(|t| t[k].as_u64()).sum::<u64>();
        Some(Figures {
            sim_ms: n("sim_ms"),
            template_ms: n("template_ms"),
            migrations_ms: n("migrations_ms"),
            ready_ms: n("ready_ms"),
            teardown_ms: n("teardown_ms"),
            tests: tests.len() as u64,
            tests_ms: sum("ms"),
            // A wait inside a wait would count twice: never more than the tests took.
            waiting_ms: sum("waiting_ms").min(sum("ms")),
        })
    }

    fn start_ms(&self) -> u64 {
        self.sim_ms + self.template_ms + self.migrations_ms + self.ready_ms
    }
}

/// The suites that ran at the same time as `run` (their spans intersect), by name.
pub fn overlapping<'a>(run: &SuiteRun, all: &'a [SuiteRun]) -> Vec<&'a str> {
    all.iter()
        .filter(|o| o.name != run.name && o.span.0 < run.span.1 && run.span.0 < o.span.1)
        .map(|o| o.name.as_str())
        .collect()
}

fn s(ms: u64) -> String {
    format!("{:.1}", ms as f64 / 1000.0)
}

/// Seconds with two decimals: the parts of a stack's start are tens of milliseconds.
fn s2(ms: u64) -> String {
    format!("{:.2}", ms as f64 / 1000.0)
}

/// The table, as Markdown, slowest suite first, with a total line.
pub fn table(runs: &[SuiteRun]) -> String {
    let mut sorted: Vec<&SuiteRun> = runs.iter().collect();
    sorted.sort_by_key(|r| std::cmp::Reverse(r.span.1.saturating_sub(r.span.0)));
    let mut out = String::from(
        "| suite | wall s | stack start s (sim + D1 copied / migrated + wrangler ready) | waiting s | running s | teardown s | tests | ran beside |\n\
         |---|---:|---|---:|---:|---:|---:|---|\n",
    );
    for r in sorted {
        let wall = r.span.1.saturating_sub(r.span.0).as_millis() as u64;
        let beside = overlapping(r, runs).join(", ");
        match &r.figures {
            Some(f) => out.push_str(&format!(
                "| {} | {} | {} ({} + {} / {} + {}) | {} | {} | {} | {} | {} |\n",
                r.name,
                s(wall),
                s(f.start_ms()),
                s2(f.sim_ms),
                s2(f.template_ms),
                s2(f.migrations_ms),
                s2(f.ready_ms),
                s(f.waiting_ms),
                s(f.tests_ms - f.waiting_ms),
                s(f.teardown_ms),
                f.tests,
                beside
            )),
            None => out.push_str(&format!(
                "| {} | {} | (no figures written) | | | | | {} |\n",
                r.name,
                s(wall),
                beside
            )),
        }
    }
    let with: Vec<&Figures> = runs.iter().filter_map(|r| r.figures.as_ref()).collect();
    let sum = |f: fn(&Figures) -> u64| with.iter().map(|x| f(x)).sum::<u64>();
    let first = runs.iter().map(|r| r.span.0).min().unwrap_or_default();
    let last = runs.iter().map(|r| r.span.1).max().unwrap_or_default();
    out.push_str(&format!(
        "| **all {} suites** (summed; {} s from the first start to the last end) | {} | {} | {} | {} | {} | {} | |\n",
        runs.len(),
        s(last.saturating_sub(first).as_millis() as u64),
        s(runs
            .iter()
            .map(|r| r.span.1.saturating_sub(r.span.0).as_millis() as u64)
            .sum()),
        s(sum(Figures::start_ms)),
        s(sum(|f| f.waiting_ms)),
        s(sum(|f| f.tests_ms - f.waiting_ms)),
        s(sum(|f| f.teardown_ms)),
        sum(|f| f.tests),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(name: &str, from: u64, to: u64) -> SuiteRun {
        SuiteRun {
            name: name.into(),
            span: (Duration::from_secs(from), Duration::from_secs(to)),
            figures: None,
        }
    }

    #[test]
    fn suites_overlap_when_their_spans_intersect_and_not_when_one_ends_as_the_next_starts() {
        let all = [run("a", 0, 10), run("b", 5, 20), run("c", 20, 30)];
        assert_eq!(overlapping(&all[0], &all), vec!["b"]);
        assert_eq!(overlapping(&all[1], &all), vec!["a"]);
        assert!(overlapping(&all[2], &all).is_empty());
    }

    #[test]
    fn a_suites_figures_add_up_its_tests_and_never_wait_longer_than_they_ran() {
        let v: Value = serde_json::json!({
            "suite": "x", "sim_ms": 5, "template_ms": 40, "migrations_ms": 0, "ready_ms": 3000,
            "teardown_ms": 200,
            "tests": [{"name": "a", "ms": 1000, "waiting_ms": 600},
                      {"name": "b", "ms": 500, "waiting_ms": 900}]
        });
        let f = Figures::parse(&v).unwrap();
        assert_eq!((f.tests, f.tests_ms, f.waiting_ms), (2, 1500, 1500));
        assert_eq!(f.start_ms(), 3045);
        let mut r = run("x", 0, 5);
        r.figures = Some(f);
        let t = table(&[r, run("y", 1, 2)]);
        assert!(
            t.contains("| x | 5.0 | 3.0 (0.01 + 0.04 / 0.00 + 3.00) | 1.5 | 0.0 | 0.2 | 2 | y |"),
            "{t}"
        );
        assert!(t.contains("| y | 1.0 | (no figures written)"), "{t}");
    }
}
