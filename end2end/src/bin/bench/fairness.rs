//! `bench fairness`: one whale and five small users on one lane under tight provider limits.
//! The whale queues its whole backlog at once; each small user then sends a job every 20 s.
//! Measured side by side: each side's throughput and its jobs' waits (created → completed), and
//! how much of the binding provider limit the run used while the backlog lasted — fairness must
//! reorder the lane, not leave capacity idle.

use std::sync::Arc;
use std::time::{Duration, Instant};

use end2end::TestStack;
use serde_json::{json, Value};

use crate::budget::{limited_stack, limits_use, sample, Sample};
use crate::common::{arg, write};

const RPM: u32 = 120;
const ITPM: u32 = 60_000;
const OTPM: u32 = 20_000;
const SMALL_USERS: usize = 5;
const SMALL_EVERY: Duration = Duration::from_secs(20);

/// One job: about 1,300 input tokens on the 5.x tokenizer, 100 of output at most — the input
/// tokens per minute bind first (about 45 jobs a minute).
fn body(who: &str, i: usize) -> Value {
    let words = "the quarterly report shows steady growth in every region and a few risks ";
    json!({"prompt": format!("{who} {i}: {}", words.repeat(60)), "priority": "high",
           "max_tokens": 100, "output_config": {"effort": "low"}})
}

pub fn run(args: &[String]) {
    let whale_jobs = arg(args, "--jobs", 150) as usize;
    let rt = crate::common::runtime();
    let stack = Arc::new(limited_stack("bench-fairness", &rt, [RPM, ITPM, OTPM], &[]));
    let table = rt.block_on(pass(&stack, whale_jobs));
    drop(stack);
    rt.shutdown_timeout(Duration::from_secs(5));
    println!("{table}");
    write("fairness", &table);
}

/// A side's figures: jobs completed, per minute over the backlog, and their waits.
fn side(name: &str, jobs: &[Value], minutes: f64) -> String {
    let mut waits: Vec<i64> = jobs
        .iter()
        .filter(|j| j["status"] == "completed")
        .filter_map(|j| j["elapsed_ms"].as_i64())
        .collect();
    waits.sort_unstable();
    let at = |q: f64| {
        waits
            .get(((waits.len() as f64 - 1.0) * q).round() as usize)
            .map_or("–".into(), |w| format!("{:.1}", *w as f64 / 1000.0))
    };
    format!(
        "| {name} | {} of {} | {:.1} | {} | {} | {} |\n",
        waits.len(),
        jobs.len(),
        waits.len() as f64 / minutes.max(1e-9),
        at(0.5),
        at(0.95),
        waits
            .last()
            .map_or("–".into(), |w| format!("{:.1}", *w as f64 / 1000.0)),
    )
}

async fn pass(s: &Arc<TestStack>, whale_jobs: usize) -> String {
    let whale = s.user("whale");
    for chunk in (0..whale_jobs).collect::<Vec<_>>().chunks(25) {
        let mut set = tokio::task::JoinSet::new();
        for &i in chunk {
            let (whale, b) = (whale.clone(), body("whale", i));
            set.spawn(async move { whale.submit_job(&b).await });
        }
        set.join_all().await;
    }
    let started = Instant::now();
    let mut samples: Vec<Sample> = vec![sample(s, 0.0, 0)];
    let mut sent_small = 0;
    let mut next_small = Duration::ZERO;
    loop {
        if started.elapsed() >= next_small && sent_small < 4 {
            for u in 0..SMALL_USERS {
                let b = body(&format!("small-{u}"), sent_small);
                s.user(&format!("small-{u}")).submit_job(&b).await;
            }
            sent_small += 1;
            next_small += SMALL_EVERY;
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
        let done = done_of(s, "whale").await;
        let at = started.elapsed().as_secs_f64();
        samples.push(sample(s, at, done));
        eprintln!("    {at:>6.0} s: the whale has {done} of {whale_jobs} completed");
        if done >= whale_jobs || started.elapsed() > Duration::from_secs(30 * 60) {
            break;
        }
        if started.elapsed().as_secs() % 60 < 2 {
            let _ = s.trigger_cron();
        }
    }
    // The saturated stretch: from 30 s in until 95% of the whale's backlog is done.
    let [rpm, itpm, otpm] = limits_use(&samples, whale_jobs, 30.0, [RPM, ITPM, OTPM]);
    let stretch_min = samples
        .iter()
        .find(|x| x.done * 100 >= whale_jobs * 95)
        .map_or(0.0, |x| (x.at - 30.0).max(0.0) / 60.0);
    let whole = started.elapsed().as_secs_f64() / 60.0;
    let whale_jobs_now = s.user("whale").all_jobs().await;
    let mut small = Vec::new();
    for u in 0..SMALL_USERS {
        small.extend(s.user(&format!("small-{u}")).all_jobs().await);
    }
    format!(
        "Fairness: one whale queues {whale_jobs} jobs at once; {SMALL_USERS} small users then send one job \
         each every {} s (4 rounds); one high lane, simulator at {RPM} RPM / {ITPM} ITPM / {OTPM} OTPM, \
         0-latency answers; waits are created → completed.\n\n\
         | user | completed | per minute | wait p50 s | wait p95 s | wait max s |\n\
         |---|---|---|---|---|---|\n{}{}\n\
         Use of the limits while the backlog lasted ({:.1} min): requests {rpm:.3}, input tokens \
         {itpm:.3}, output tokens {otpm:.3} — binding limit use **{:.3}**.\n",
        SMALL_EVERY.as_secs(),
        side("whale", &whale_jobs_now, whole),
        side("5 small users", &small, whole),
        stretch_min,
        rpm.max(itpm).max(otpm),
    )
}

/// Completed jobs of `user`.
async fn done_of(s: &Arc<TestStack>, user: &str) -> usize {
    s.user(user)
        .all_jobs()
        .await
        .iter()
        .filter(|j| j["status"] == "completed")
        .count()
}
