//! `cargo xtask bench [all]` runs every benchmark of this binary, each in its own process and on
//! its own fresh stack, and writes them into one file, `target/bench/results.md`, headed by the
//! date, the commit and the machine: sizes and the dashboard's first render (`render.rs`), a
//! sync job end to end (`e2e.rs`), the producers under load (`load.rs`), the rate-limit
//! benchmark (`budget.rs`), the ops queries at 1,000,000 rows (`queries.rs`) and the Worker's startup
//! CPU (`startup.rs`).
//! `cargo xtask bench <name>` runs one.
//!

use std::time::Instant;

use common::write;

mod budget;
mod common;
mod cost;
mod e2e;
mod fairness;
mod load;
mod phone;
mod queries;
mod render;
mod routing;
mod startup;

/// Every benchmark, in the order `all` runs them (and the results file shows them).
const ALL: [(&str, &str); 9] = [
    ("startup", "Worker startup CPU"),
    ("render", "Sizes and the dashboard's first render"),
    ("e2e", "Sync job end to end"),
    ("load", "Producers under load"),
    ("budget", "Rate-limit efficiency, budget on and off"),
    ("fairness", "Fair shares: a whale and five small users"),
    (
        "queries",
        "Dashboard, usage and DLQ queries at 1,000,000 jobs",
    ),
    (
        "cost",
        "What a job asks of the platform, and a million a day",
    ),
    (
        "routing",
        "Deadline routing against everything sync and everything batch",
    ),
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None | Some("all") => all(),
        Some("budget") => budget::run(&args),
        Some("fairness") => fairness::run(&args),
        Some("queries") => queries::run(&args),
        Some("load") => load::run(&args),
        Some("e2e") => e2e::run(&args),
        Some("render") => render::run(&args),
        Some("cost") => cost::run(&args),
        Some("routing") => routing::run(&args),
        Some("startup") => startup::run(&args),
        _ => {
            eprintln!("usage: bench [all] | bench budget [--jobs N] | bench fairness [--jobs N] | bench queries [--rows N] | bench load [--clients N] [--seconds S] | bench e2e [--jobs N] | bench render | bench cost [--jobs N] | bench routing [--jobs N] | bench startup");
            std::process::exit(2);
        }
    }
}

/// Runs every benchmark (each in a child process: one failing does not stop the others) and
/// collects their tables into `target/bench/results.md`.
fn all() {
    let dir = xtask::paths::target_dir().join("bench");
    let exe = std::env::current_exe().expect("own path");
    let mut failed = Vec::new();
    let mut doc = format!("# Benchmarks\n\n{}\n", header());
    for (name, title) in ALL {
        eprintln!("\n==> bench {name}: {title}");
        let started = Instant::now();
        let _ = std::fs::remove_file(dir.join(format!("{name}.md")));
        let ok = std::process::Command::new(&exe)
            .arg(name)
            .status()
            .is_ok_and(|s| s.success());
        let took = started.elapsed().as_secs_f64();
        doc.push_str(&format!("\n## {title}\n\n"));
        if name == "render" {
            if let Ok(sizes) = std::fs::read_to_string(dir.join("sizes.md")) {
                doc.push_str(&sizes);
                doc.push('\n');
            }
        }
        match std::fs::read_to_string(dir.join(format!("{name}.md"))) {
            Ok(table) => doc.push_str(&table),
            Err(_) => doc.push_str("(no result)\n"),
        }
        if !ok {
            doc.push_str(&format!("\n**`bench {name}` failed** (see its output).\n"));
            failed.push(name);
        }
        doc.push_str(&format!("\n_`bench {name}` took {took:.0} s._\n"));
        // Rewritten after each benchmark, so a run cut short keeps what it measured.
        write("results", &doc);
    }
    println!("{doc}");
    if !failed.is_empty() {
        eprintln!("FAILED: {failed:?}");
        std::process::exit(1);
    }
}

/// Date, commit and machine, for the results file.
fn header() -> String {
    let sh = |cmd: &str, args: &[&str]| {
        std::process::Command::new(cmd)
            .args(args)
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default()
    };
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let mem_gib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0 / 1024.0);
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!(
        "- date: {} (UTC)\n- commit: {}\n- machine: {cpu}, {cores} cores, {mem_gib:.0} GiB RAM; {}\n\
         - stack: `wrangler dev` (workerd + Miniflare, state on disk) and `anthropic-sim`, test \
         timing profile; debug build of the benchmark client\n",
        sh("date", &["-u", "+%Y-%m-%d %H:%M"]),
        sh("git", &["rev-parse", "--short", "HEAD"]),
        sh("uname", &["-sr"]),
    )
}
