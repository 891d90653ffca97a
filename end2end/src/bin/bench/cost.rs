//! `cargo xtask bench cost [--jobs N] [--trace]`: what one job of each kind asks of the platform
//! over its whole life, and what a million a day would cost.
//!
//! A fresh local stack with `D1_STATS = "on"`: every invocation logs one `use:` line (D1
//! statements and rows as D1 reported them, R2 operations by class, queue messages sent and
//! delivered, Durable Object requests). N jobs of each kind go through one kind at a time —
//! submitted, consumed or flushed into a Message Batch and polled, settled — and the lines of
//! that phase are summed and divided by N. The client's own status polls (`GET`s) are left out
//! (a client may poll as often as it likes) and reported once per request; an idle cron run is
//! measured on its own (it runs 1,440 times a day whatever the volume). Results: tables on
//! stdout and `target/bench/cost.md`.

use std::path::Path;
use std::time::Duration;

use end2end::{pdfs, spawn_stack_with, TestStack};
use serde_json::{json, Value};

/// Sums of the `use:` lines of one phase.
#[derive(Debug, Default, Clone, Copy)]
struct Use {
    invocations: f64,
    d1_statements: f64,
    d1_rows_read: f64,
    d1_rows_written: f64,
    r2_class_a: f64,
    r2_class_b: f64,
    queue_sent: f64,
    queue_delivered: f64,
    do_requests: f64,
}

impl Use {
    fn add(&mut self, v: &Value) {
        let f = |k: &str| v[k].as_f64().unwrap_or(0.0);
        self.invocations += 1.0;
        self.d1_statements += f("d1_statements");
        self.d1_rows_read += f("d1_rows_read");
        self.d1_rows_written += f("d1_rows_written");
        self.r2_class_a += f("r2_class_a");
        self.r2_class_b += f("r2_class_b");
        self.queue_sent += f("queue_sent");
        self.queue_delivered += f("queue_delivered");
        self.do_requests += f("do_requests");
    }

    fn per(&self, n: f64) -> Use {
        Use {
            invocations: self.invocations / n,
            d1_statements: self.d1_statements / n,
            d1_rows_read: self.d1_rows_read / n,
            d1_rows_written: self.d1_rows_written / n,
            r2_class_a: self.r2_class_a / n,
            r2_class_b: self.r2_class_b / n,
            queue_sent: self.queue_sent / n,
            queue_delivered: self.queue_delivered / n,
            do_requests: self.do_requests / n,
        }
    }

    /// Queue operations: a message is written, read and deleted (3), a redelivery reads again.
    fn queue_ops(&self) -> f64 {
        self.queue_sent + 2.0 * self.queue_delivered
    }

    /// US dollars a month for `jobs_per_month` jobs with this use each, before the included
    /// allowances of the Workers Paid plan. Prices:
    /// - Workers requests $0.30 / million (developers.cloudflare.com/workers/platform/pricing/);
    /// - D1 rows read $0.001 / million, rows written $1.00 / million
    ///   (developers.cloudflare.com/d1/platform/pricing/);
    /// - R2 Class A $4.50 / million, Class B $0.36 / million, deletes free
    ///   (developers.cloudflare.com/r2/pricing/);
    /// - Queues $0.40 / million operations, 3 per message
    ///   (developers.cloudflare.com/queues/platform/pricing/);
    /// - Durable Objects requests $0.15 / million
    ///   (developers.cloudflare.com/durable-objects/platform/pricing/).
    fn monthly_usd(&self, jobs_per_month: f64) -> [(&'static str, f64); 5] {
        let m = jobs_per_month / 1e6;
        [
            ("Workers requests", self.invocations * m * 0.30),
            (
                "D1",
                self.d1_rows_read * m * 0.001 + self.d1_rows_written * m * 1.00,
            ),
            (
                "R2",
                self.r2_class_a * m * 4.50 + self.r2_class_b * m * 0.36,
            ),
            ("Queues", self.queue_ops() * m * 0.40),
            ("Durable Objects", self.do_requests * m * 0.15),
        ]
    }
}

/// The `use:` lines of the log from byte `from` on, except the client's `GET`s (summed apart).
fn sum_since(log: &Path, from: usize) -> (Use, Use) {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let (mut work, mut reads) = (Use::default(), Use::default());
    for line in text.get(from..).unwrap_or_default().lines() {
        let Some(rest) = line.split("use: ").nth(1) else {
            continue;
        };
        let Some((what, json)) = rest.split_once(": {") else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<Value>(&format!("{{{json}")) else {
            continue;
        };
        if what.starts_with("fetch GET") {
            reads.add(&v);
        } else {
            work.add(&v);
        }
    }
    (work, reads)
}

fn log_len(log: &Path) -> usize {
    std::fs::metadata(log)
        .map(|m| m.len() as usize)
        .unwrap_or(0)
}

#[derive(Debug, Clone, Copy)]
enum Phase {
    FeedbackSync,
    PromptHigh,
    PromptBatch,
    PdfSync,
    PdfBatch,
}

impl Phase {
    fn label(self) -> &'static str {
        match self {
            Phase::FeedbackSync => "feedback analysis, sync",
            Phase::PromptHigh => "prompt job, high lane",
            Phase::PromptBatch => "prompt job, Message Batch",
            Phase::PdfSync => "PDF (uploads of 4), sync",
            Phase::PdfBatch => "PDF (uploads of 4), Message Batch",
        }
    }
}

pub fn run(args: &[String]) {
    let jobs = (crate::common::arg(args, "--jobs", 40) as usize / 4).max(1) * 4;
    let rt = crate::common::runtime();
    let knobs = crate::common::instant_sim();
    // Batch jobs wait for the flush the benchmark asks for. `--trace` logs every D1 statement
    // with its rows (`D1_STATS = "trace"`) in the stack's wrangler.log.
    let mut vars = vec![("BATCH_FLUSH_AGE_S".into(), "3600".into())];
    if args.iter().any(|a| a == "--trace") {
        vars.push(("D1_STATS".into(), "trace".into()));
    }
    let stack = std::sync::Arc::new(spawn_stack_with("bench-cost", &rt, knobs, vars));
    let log = stack
        .artifacts
        .parent()
        .expect("state dir")
        .join("wrangler.log");
    let mut rows = Vec::new();
    let idle = rt.block_on(async {
        // Warm-up, then an idle cron run on its own.
        run_phase(&stack, Phase::PromptHigh, 4).await;
        tokio::time::sleep(Duration::from_secs(2)).await;
        let from = log_len(&log);
        stack.cron().await;
        tokio::time::sleep(Duration::from_secs(1)).await;
        let (idle, _) = sum_since(&log, from);
        for phase in [
            Phase::FeedbackSync,
            Phase::PromptHigh,
            Phase::PromptBatch,
            Phase::PdfSync,
            Phase::PdfBatch,
        ] {
            let from = log_len(&log);
            run_phase(&stack, phase, jobs).await;
            // The last consumer's line is written after its acks.
            tokio::time::sleep(Duration::from_secs(3)).await;
            let (work, reads) = sum_since(&log, from);
            eprintln!("==> {}: {work:?}", phase.label());
            rows.push((phase, work.per(jobs as f64), reads));
        }
        idle
    });
    let db_bytes = db_size(&stack);
    let stored: f64 = stack.d1("SELECT COUNT(*) AS n FROM jobs")[0]["n"]
        .as_f64()
        .unwrap_or(1.0);
    drop(stack);
    rt.shutdown_timeout(Duration::from_secs(5));
    let table = render(jobs, &rows, &idle, db_bytes / stored.max(1.0));
    println!("{table}");
    crate::common::write("cost", &table);
}

/// The local D1 database's size on disk: its SQLite file (tables and indexes; the write-ahead
/// log, preallocated and not yet checkpointed, is left out).
fn db_size(stack: &TestStack) -> f64 {
    let dir = stack
        .artifacts
        .parent()
        .expect("state dir")
        .join("wrangler-state/v3/d1/miniflare-D1DatabaseObject");
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            !name.starts_with("metadata") && name.ends_with(".sqlite")
        })
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len() as f64)
        .sum()
}

async fn run_phase(s: &std::sync::Arc<TestStack>, phase: Phase, n: usize) {
    let client = s.user("cost-user");
    match phase {
        Phase::FeedbackSync => {
            let mut ids = Vec::new();
            for i in 0..n {
                ids.push(
                    client
                        .submit_feedback(&json!({"text": format!("The export button does nothing on page {i}."), "mode": "sync"}))
                        .await,
                );
            }
            for id in ids {
                client
                    .feedback_reaches(&id, "completed", Duration::from_secs(120), false)
                    .await;
            }
        }
        Phase::PromptHigh | Phase::PromptBatch => {
            let batch = matches!(phase, Phase::PromptBatch);
            let mut ids = Vec::new();
            for i in 0..n {
                let body = if batch {
                    json!({"prompt": format!("Summarise item {i} in one line."), "priority": "bulk", "mode": "batch", "max_tokens": 200, "output_config": {"effort": "low"}})
                } else {
                    json!({"prompt": format!("Summarise item {i} in one line."), "priority": "high", "max_tokens": 200, "output_config": {"effort": "low"}})
                };
                ids.push(client.submit_job(&body).await);
            }
            if batch {
                flush_and_poll(s, &ids).await;
            }
            client
                .all_reach(&ids, "completed", Duration::from_secs(180))
                .await;
        }
        Phase::PdfSync | Phase::PdfBatch => {
            let mode = if matches!(phase, Phase::PdfBatch) {
                "batch"
            } else {
                "sync"
            };
            let mut uploads = Vec::new();
            for u in 0..n / 4 {
                let files: Vec<(String, Vec<u8>)> = (0..4)
                    .map(|f| {
                        (
                            format!("r{u}-{f}.pdf"),
                            pdfs::make(&format!("Report {u}.{f}"), 2),
                        )
                    })
                    .collect();
                uploads.push(client.submit_upload(&files, &[("mode", mode)]).await);
            }
            if mode == "batch" {
                let mut ids = Vec::new();
                for u in &uploads {
                    let b = client.batch(u).await;
                    for f in b["files"].as_array().into_iter().flatten() {
                        ids.push(f["job_id"].as_str().unwrap_or_default().to_string());
                    }
                }
                flush_and_poll(s, &ids).await;
            }
            for u in &uploads {
                client.upload_finished(u, Duration::from_secs(180)).await;
            }
        }
    }
}

/// Flushes the accumulated bulk jobs into a Message Batch, then polls until they are settled
/// (what the cron does every minute).
async fn flush_and_poll(s: &std::sync::Arc<TestStack>, ids: &[String]) {
    let admin = s.user("cost-admin");
    // The bulk lane delivers after its delay; the consumer accumulates, then a flush takes them.
    tokio::time::sleep(Duration::from_secs(5)).await;
    for _ in 0..60 {
        admin.post_ok("/api/batches/flush").await;
        admin.post_ok("/api/batches/poll").await;
        let mut done = 0;
        for id in ids {
            let j = s.user("cost-user").get(&format!("/jobs/{id}")).await.1;
            if j["status"] == "completed" {
                done += 1;
            }
        }
        if done == ids.len() {
            return;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

fn render(jobs: usize, rows: &[(Phase, Use, Use)], idle: &Use, bytes_per_job: f64) -> String {
    let mut t = format!(
        "What one job asks of the platform over its whole life (local stack, simulator, {jobs} \
         jobs per kind; the client's status polls left out). D1 figures are as D1 reported them \
         to the Worker.\n\n\
         | job | invocations | D1 statements | D1 rows read | D1 rows written | R2 class A | R2 class B | queue messages sent / delivered | DO requests |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    );
    for (phase, u, _) in rows {
        t.push_str(&format!(
            "| {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2} | {:.2} | {:.2} / {:.2} | {:.2} |\n",
            phase.label(),
            u.invocations,
            u.d1_statements,
            u.d1_rows_read,
            u.d1_rows_written,
            u.r2_class_a,
            u.r2_class_b,
            u.queue_sent,
            u.queue_delivered,
            u.do_requests
        ));
    }
    t.push_str(&format!(
        "| an idle cron run (1,440 a day) | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} / {:.0} | {:.0} |\n",
        idle.invocations,
        idle.d1_statements,
        idle.d1_rows_read,
        idle.d1_rows_written,
        idle.r2_class_a,
        idle.r2_class_b,
        idle.queue_sent,
        idle.queue_delivered,
        idle.do_requests
    ));
    if let Some((_, _, reads)) = rows.first() {
        if reads.invocations > 0.0 {
            t.push_str(&format!(
                "\nA status poll (`GET /jobs/:id` and the like) costs {:.1} D1 statements and {:.1} rows read.\n",
                reads.d1_statements / reads.invocations,
                reads.d1_rows_read / reads.invocations
            ));
        }
    }
    let per_month = 30e6;
    t.push_str(
        "\nA million jobs a day (30 million a month) of one kind, US dollars a month before the \
         Workers Paid plan's included allowances (prices in `bench/cost.rs`):\n\n\
         | job | Workers requests | D1 | R2 | Queues | Durable Objects | total |\n\
         |---|---:|---:|---:|---:|---:|---:|\n",
    );
    for (phase, u, _) in rows {
        let parts = u.monthly_usd(per_month);
        let total: f64 = parts.iter().map(|p| p.1).sum();
        t.push_str(&format!("| {} |", phase.label()));
        for (_, usd) in &parts {
            t.push_str(&format!(" {usd:.2} |"));
        }
        t.push_str(&format!(" {total:.2} |\n"));
    }
    // Which limit binds first at a million a day (11.6 a second on average; peaks at 10×).
    let peak = 1e6 / 86_400.0 * 10.0;
    let worst = rows
        .iter()
        .map(|(_, u, _)| u)
        .fold(Use::default(), |a, u| Use {
            d1_statements: a.d1_statements.max(u.d1_statements),
            do_requests: a.do_requests.max(u.do_requests),
            queue_delivered: a.queue_delivered.max(u.queue_delivered),
            ..a
        });
    let kept = 90.0 * 1e6;
    t.push_str(&format!(
        "\nLimits at a million jobs a day, at a peak of 10× the average ({peak:.0} jobs/s), for \
         the kind that asks most of each:\n\n\
         | limit | published | needed | share |\n|---|---|---:|---:|\n\
         | one D1 database's queries (≈ 1,000/s at 1 ms each; developers.cloudflare.com/d1/platform/limits/ FAQ) | 1,000 /s | {:.0} /s | {:.0}% |\n\
         | one D1 database's size (10 GB; same page), jobs kept 90 days | 10 GB | {:.1} GB | {:.0}% |\n\
         | the budget Durable Object (≈ 1,000 requests/s soft limit; developers.cloudflare.com/durable-objects/platform/limits/) | 1,000 /s | {:.0} /s | {:.0}% |\n\
         | one queue's throughput (5,000 messages/s; developers.cloudflare.com/queues/platform/limits/) | 5,000 /s | {:.0} /s | {:.0}% |\n",
        worst.d1_statements * peak,
        worst.d1_statements * peak / 10.0,
        kept * bytes_per_job / 1e9,
        kept * bytes_per_job / 1e9 / 10.0 * 100.0,
        worst.do_requests * peak,
        worst.do_requests * peak / 10.0,
        worst.queue_delivered * peak,
        worst.queue_delivered * peak / 50.0,
    ));
    t.push_str(&format!(
        "\nThe local database held {bytes_per_job:.0} bytes per stored job (tables and indexes: \
         its file on disk over the jobs stored; the prompts and answers are in R2).\n"
    ));
    t
}
