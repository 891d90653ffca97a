//! Waiting for the pipeline: polls with a deadline, and between looks the nudges the dev
//! tooling would give (the cron, or the batch endpoints it runs), so a test waits seconds for
//! what the demo does in a minute.

use std::future::Future;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::client::Client;

/// Polls `probe` until it returns `Some`, or panics with `what` after `timeout`.
pub async fn eventually<T, F, Fut>(what: &str, timeout: Duration, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let started = Instant::now();
    let deadline = started + timeout;
    loop {
        if let Some(v) = probe().await {
            crate::timing::add_waiting(started.elapsed());
            return v;
        }
        if Instant::now() >= deadline {
            panic!("{what}: not within {timeout:?}");
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The statuses in which a job is still on its way.
const OPEN: [&str; 3] = ["queued", "running", "submitted"];

impl Client {
    /// `GET path` made while waiting: a 5xx is a look that saw nothing yet, as a polling
    /// client would retry it (the local runtime's D1 answers "internal error" now and then
    /// under load: seen once on a `GET /jobs/:id` in a fresh clone's full run, 2026-12-03);
    /// any other status but 200 fails the test at once.
    async fn look(&self, path: &str) -> Option<Value> {
        let (status, body) = self.get(path).await;
        if status >= 500 {
            eprintln!("GET {path} answered {status} while waiting (looked again): {body}");
            return None;
        }
        assert_eq!(status, 200, "GET {path}: {body}");
        Some(body)
    }

    /// Polls `GET path` until the job it answers has `status`, running the cron (at its
    /// period, [`crate::TestStack::cron_paced`]) between looks when `cron` is set. Answers the
    /// job.
    pub async fn until(&self, path: &str, status: &str, timeout: Duration, cron: bool) -> Value {
        eventually(&format!("{path} becomes {status}"), timeout, || async {
            if cron {
                self.stack().cron_paced().await;
            }
            let job = self.look(path).await?;
            (job["status"] == status).then_some(job)
        })
        .await
    }

    /// Waits until the prompt job `id` has `status` (nothing nudged); answers it.
    pub async fn job_reaches(&self, id: &str, status: &str, timeout: Duration) -> Value {
        self.until(&format!("/jobs/{id}"), status, timeout, false)
            .await
    }

    /// Waits until the feedback `id` has `status`, running the cron while waiting when `cron`
    /// is set; answers it.
    pub async fn feedback_reaches(
        &self,
        id: &str,
        status: &str,
        timeout: Duration,
        cron: bool,
    ) -> Value {
        self.until(&format!("/api/feedback/{id}"), status, timeout, cron)
            .await
    }

    /// Waits for every job of `ids` to reach `status`, running the batch machinery (flush if
    /// due, recover, poll: `POST /api/batches/poll`) between looks, as the cron does.
    pub async fn all_reach(&self, ids: &[String], status: &str, timeout: Duration) {
        eventually(
            &format!("{} job(s) of {} become {status}", ids.len(), self.who()),
            timeout,
            || async {
                let mut pending = 0;
                for id in ids {
                    let job = self.look(&format!("/jobs/{id}")).await;
                    if job.is_none_or(|j| j["status"] != status) {
                        pending += 1;
                    }
                }
                if pending > 0 {
                    self.stack().anon().post_ok("/api/batches/poll").await;
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                (pending == 0).then_some(())
            },
        )
        .await
    }

    /// Runs the cron until this caller has `expected` jobs and every one has ended; answers
    /// them.
    pub async fn all_end(&self, expected: usize) -> Vec<Value> {
        eventually(
            &format!("the {expected} jobs of {} end", self.who()),
            Duration::from_secs(150),
            || async {
                self.stack().cron_paced().await;
                let jobs = self.all_jobs().await;
                let ended = jobs
                    .iter()
                    .all(|j| !OPEN.contains(&j["status"].as_str().unwrap_or_default()));
                (jobs.len() == expected && ended).then_some(jobs)
            },
        )
        .await
    }

    /// Flushes what waits (due or not: `POST /api/batches/flush`) until `ids` are all inside a
    /// Message Batch; answers their batch ids.
    pub async fn flushed(&self, ids: &[String]) -> Vec<String> {
        eventually(
            "the jobs are in a batch",
            Duration::from_secs(60),
            || async {
                self.stack().anon().post_ok("/api/batches/flush").await;
                let mut batches = Vec::new();
                for id in ids {
                    let j = self.job(id).await;
                    if j["status"] != "submitted" {
                        tokio::time::sleep(Duration::from_millis(500)).await;
                        return None;
                    }
                    batches.push(j["anthropic_batch_id"].as_str().unwrap().to_string());
                }
                Some(batches)
            },
        )
        .await
    }

    /// Waits until every file of the upload `id` has ended, running the batch machinery
    /// between looks (batch mode is flushed and polled by it); answers the upload.
    pub async fn upload_finished(&self, id: &str, timeout: Duration) -> Value {
        eventually(&format!("upload {id} finishes"), timeout, || async {
            let b = self.batch(id).await;
            if b["done"] == b["total"] {
                return Some(b);
            }
            self.stack().anon().post_ok("/api/batches/poll").await;
            tokio::time::sleep(Duration::from_millis(500)).await;
            None
        })
        .await
    }
}
