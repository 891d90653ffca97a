//! What the simulator saw, for the checks no API answer can make: how often a job was billed
//! and for how much, the calls by endpoint and status, the webhooks it received, the requests
//! it refused for their shape, and a Message Batch as the provider holds it.

use std::sync::Arc;

use serde_json::Value;

use crate::api::{client, send_json};
use crate::stack::{TestStack, SIM_KEY};

/// [`TestStack::sim_files`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimFiles {
    pub base64_documents: u64,
    pub file_documents: u64,
    pub uploaded: u64,
    pub deleted: u64,
    pub stored: u64,
}

impl TestStack {
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

    /// Calls the simulator answered, by `"<endpoint> <status>"` (e.g. `"batches.create 200"`).
    pub fn sim_calls(&self, key: &str) -> u64 {
        self.sim.lock().stats.calls.get(key).copied().unwrap_or(0)
    }

    /// The Files API as the simulator saw it: document blocks read inline (base64) and by
    /// `file_id`, files uploaded, deleted, and stored now.
    pub fn sim_files(&self) -> SimFiles {
        let sim = self.sim.lock();
        SimFiles {
            base64_documents: sim.stats.base64_documents,
            file_documents: sim.stats.file_documents,
            uploaded: sim.stats.files_uploaded,
            deleted: sim.stats.files_deleted,
            stored: sim.files.len() as u64,
        }
    }

    /// Calls the simulator answered whose `"<endpoint> <status>"` key `keep` selects.
    pub fn sim_calls_where(&self, keep: impl Fn(&str) -> bool) -> u64 {
        let sim = self.sim.lock();
        sim.stats
            .calls
            .iter()
            .filter(|(k, _)| keep(k))
            .map(|(_, n)| n)
            .sum()
    }

    /// Every webhook the simulator's sink received, in order.
    pub fn webhooks(&self) -> Vec<Value> {
        self.sim.lock().webhooks.clone()
    }

    /// The webhooks of one `event` (e.g. `"dlq.threshold"`).
    pub fn webhooks_of(&self, event: &str) -> Vec<Value> {
        self.webhooks()
            .into_iter()
            .filter(|h| h["event"] == event)
            .collect()
    }

    /// The simulator's count of requests refused for their shape, and the last messages.
    pub fn shape_refusals(&self) -> (u64, Vec<String>) {
        let sim = self.sim.lock();
        (
            sim.stats.refused_for_shape,
            sim.stats.shape_refusals.clone(),
        )
    }

    /// Requests the simulator authenticated, by their `anthropic-version` header.
    pub fn sim_versions(&self) -> std::collections::BTreeMap<String, u64> {
        self.sim.lock().stats.versions.clone()
    }

    /// A request to the simulator's API, as the Worker authenticates it (key and version).
    pub fn sim_api(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        client()
            .request(method, format!("{}{path}", self.sim_url))
            .header("x-api-key", SIM_KEY)
            .header("anthropic-version", pipeline::anthropic::API_VERSION)
    }

    /// Time under the test's control: Message Batches created from now on keep processing
    /// until [`Self::release_batches`]. A test that must act, or see something happen, while a
    /// batch runs holds it, instead of racing its few seconds of processing time.
    pub fn hold_batches(&self) {
        // A day: longer than any test, within the API's 24-hour expiry.
        self.sim.lock().knobs.batch_ms = HELD_MS;
    }

    /// Ends every held batch now (its requests answered on the next read of it), and gives
    /// batches made from now on the suite's processing time again.
    pub fn release_batches(&self) {
        let usual = self.sim.config.knobs.batch_ms;
        let mut sim = self.sim.lock();
        sim.knobs.batch_ms = usual;
        let now = sim::now_ms();
        for b in sim.batches.iter_mut() {
            if b.ended_at.is_none() && b.ends_at > now + usual as i64 {
                b.ends_at = now;
            }
        }
    }

    /// A Message Batch as the simulator holds it (`GET /v1/messages/batches/:id`).
    pub async fn sim_batch(self: &Arc<Self>, id: &str) -> Value {
        let path = format!("/v1/messages/batches/{id}");
        let (status, b) = send_json(self.sim_api(reqwest::Method::GET, &path)).await;
        assert_eq!(status, 200, "{b}");
        b
    }
}

/// The processing time of a held batch.
const HELD_MS: u64 = 86_000_000;

/// A user whose `POST /api/claude` calls take the queue path (`inside`) or the direct one, at
/// the test stacks' rollout of 50%.
pub fn rollout_user(prefix: &str, inside: bool) -> String {
    (0..1000)
        .map(|i| format!("{prefix}-{i}"))
        .find(|u| pipeline::rollout::in_rollout(u, 50) == inside)
        .expect("a user on each side of the rollout")
}
