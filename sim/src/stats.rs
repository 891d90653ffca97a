//! What the simulator has billed (and to whom) and counted since start or the last reset, as
//! `/_sim/stats` shows it (`crate::control`).

use std::collections::BTreeMap;

use pipeline::anthropic::Usage;
use serde::Serialize;

use crate::errors::SimError;

/// Tokens and money billed on one tier (standard Messages API, or batches at half price).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Billing {
    pub messages: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub cost_micros: u64,
}

impl Billing {
    fn add(&mut self, u: &Usage, cost_micros: u64) {
        self.messages += 1;
        self.input_tokens += u.input_tokens as u64;
        self.output_tokens += u.output_tokens as u64;
        self.cache_creation_input_tokens += u.cache_creation_input_tokens as u64;
        self.cache_read_input_tokens += u.cache_read_input_tokens as u64;
        self.cost_micros += cost_micros;
    }
}

/// Counters since start or the last reset.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Stats {
    /// Calls by endpoint and outcome: `"messages 200"`, `"messages 529"`, `"messages hang"`, …
    pub calls: BTreeMap<String, u64>,
    pub standard: Billing,
    pub batch: Billing,
    /// What the other routes (`bedrock`, `vertex`) billed, each at its own price; not in the
    /// Anthropic API's cost report.
    pub clouds: BTreeMap<String, Billing>,
    /// How many times each job was billed, by `x-job-id` header or batch `custom_id`.
    pub billed_by_job: BTreeMap<String, u64>,
    /// What each job was billed in all, in micro-dollars.
    pub cost_by_job: BTreeMap<String, u64>,
    /// What was billed per UTC day (days since the epoch), model and tier (`batch`), in
    /// micro-dollars: the Admin API's cost report (`crate::admin`).
    #[serde(skip)]
    pub daily: BTreeMap<(i64, String, bool), u64>,
    /// Calls answered and billed after the client had most likely given up (hangs): the cost
    /// of a retry after a timeout.
    pub abandoned_billed: u64,
    /// What those calls cost, in micro-dollars.
    pub abandoned_cost_micros: u64,
    /// Those calls by job (`x-job-id`), so a job billed twice because its first call was
    /// abandoned can be told from one billed twice for another reason.
    pub abandoned_by_job: BTreeMap<String, u64>,
    /// Requests refused with a 400 for their shape (a setting the model refuses, a missing or
    /// extra field, a limit) — injected faults excluded. A faithful client sends none.
    pub refused_for_shape: u64,
    /// The last refusals' messages (at most [`MAX_REFUSALS_KEPT`]), to say what was refused.
    pub shape_refusals: Vec<String>,
    /// Authenticated requests by their `anthropic-version` header (every endpoint that checks
    /// it): which API version a client speaks.
    pub versions: BTreeMap<String, u64>,
    /// Document blocks read by the requests answered or counted (Messages, count_tokens, batch
    /// lines): inline base64, and by `file_id` from the Files API.
    pub base64_documents: u64,
    pub file_documents: u64,
    /// Files uploaded to and deleted from the Files API.
    pub files_uploaded: u64,
    pub files_deleted: u64,
}

/// How many refusal messages `/_sim/stats` keeps.
pub const MAX_REFUSALS_KEPT: usize = 50;

impl Stats {
    /// Counts the documents of a request that was read.
    pub fn documents(&mut self, req: &crate::request::Parsed) {
        self.base64_documents += req.base64_documents as u64;
        self.file_documents += req.file_documents as u64;
    }

    pub fn call(&mut self, endpoint: &str, outcome: impl std::fmt::Display) {
        *self
            .calls
            .entry(format!("{endpoint} {outcome}"))
            .or_default() += 1;
    }

    /// Records a billed call that the client most likely abandoned (a hang past its timeout).
    pub fn abandoned(&mut self, job: Option<&str>, cost_micros: u64) {
        self.abandoned_billed += 1;
        self.abandoned_cost_micros += cost_micros;
        if let Some(job) = job.filter(|j| !j.is_empty()) {
            *self.abandoned_by_job.entry(job.to_owned()).or_default() += 1;
        }
    }

    /// Counts a refusal for the request's shape (nothing for other errors).
    pub fn refused(&mut self, endpoint: &str, e: &SimError) {
        if e.is_shape_refusal() {
            self.refused_for_shape += 1;
            if self.shape_refusals.len() == MAX_REFUSALS_KEPT {
                self.shape_refusals.remove(0);
            }
            self.shape_refusals
                .push(format!("{endpoint}: {}", e.message));
        }
    }

    /// Counts a bill in its day's cost report.
    pub fn by_day(&mut self, now_ms: i64, model: &str, batch: bool, cost_micros: u64) {
        let day = now_ms.div_euclid(86_400_000);
        *self
            .daily
            .entry((day, model.to_owned(), batch))
            .or_default() += cost_micros;
    }

    /// Bills a call answered on another route: its own billing, and the job's.
    pub fn bill_cloud(&mut self, route: &str, u: &Usage, cost_micros: u64, job: Option<&str>) {
        self.clouds
            .entry(route.to_owned())
            .or_default()
            .add(u, cost_micros);
        self.by_job(job, cost_micros);
    }

    fn by_job(&mut self, job: Option<&str>, cost_micros: u64) {
        if let Some(job) = job.filter(|j| !j.is_empty()) {
            *self.billed_by_job.entry(job.to_owned()).or_default() += 1;
            *self.cost_by_job.entry(job.to_owned()).or_default() += cost_micros;
        }
    }

    pub fn bill(&mut self, u: &Usage, cost_micros: u64, batch: bool, job: Option<&str>) {
        if batch {
            &mut self.batch
        } else {
            &mut self.standard
        }
        .add(u, cost_micros);
        self.by_job(job, cost_micros);
    }
}
