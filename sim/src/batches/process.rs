//! A Message Batch processed once its processing time has passed: each request validated and
//! answered like a Messages call, billed under its `custom_id`, the results shuffled.

use pipeline::anthropic::ErrorType;
use serde_json::{json, Value};

use crate::answering::{commit, message, plan};
use crate::batch::Counts;
use crate::errors::SimError;
use crate::faults::{self, Fault, Rng};
use crate::fingerprint::fnv;
use crate::request;
use crate::state::Inner;

/// Processes every batch whose time has come.
pub fn settle(inner: &mut Inner, now: i64) {
    for i in 0..inner.batches.len() {
        let b = &inner.batches[i];
        if b.ended_at.is_some() || b.ends_at > now {
            continue;
        }
        let ended = b.ends_at;
        let canceled = b.cancel_initiated_at.is_some();
        let version = b.version.clone();
        let id_hash = fnv(b.id.as_bytes());
        let requests = std::mem::take(&mut inner.batches[i].requests);
        let mut counts = Counts::default();
        let mut results = Vec::with_capacity(requests.len());
        for (custom_id, params) in &requests {
            let result = if canceled {
                json!({"type": "canceled"})
            } else {
                run_one(inner, custom_id, params, &version, ended)
            };
            match result["type"].as_str() {
                Some("succeeded") => counts.succeeded += 1,
                Some("errored") => counts.errored += 1,
                Some("canceled") => counts.canceled += 1,
                _ => counts.expired += 1,
            }
            results.push(json!({"custom_id": custom_id, "result": result}));
        }
        // Results come back in no particular order, as the API warns: shuffle them.
        let mut rng = Rng::new(id_hash);
        for k in (1..results.len()).rev() {
            let j = (rng.next_u64() % (k as u64 + 1)) as usize;
            results.swap(k, j);
        }
        let b = &mut inner.batches[i];
        b.results = results;
        b.counts = counts;
        b.ended_at = Some(ended);
    }
}

fn run_one(inner: &mut Inner, custom_id: &str, params: &Value, version: &str, now: i64) -> Value {
    let errored = |kind: ErrorType, message: String| json!({"type": "errored", "error": {"type": "error", "error": {"type": kind, "message": message}}});
    let files = inner.knobs.files_api.then_some(&inner.files);
    let parsed = request::parse(params, true, version, now, files)
        .and_then(|r| crate::models::refuse_dropped((r.spec, &r.model), &inner.knobs).map(|()| r));
    let req = match parsed {
        Ok(r) => {
            inner.stats.documents(&r);
            r
        }
        Err(e) => {
            inner.stats.refused("batch request", &e);
            return errored(e.kind, e.message);
        }
    };
    let fault = faults::decide(
        &req.markers,
        &req.model,
        req.prompt_hash,
        &mut inner.counters,
        &inner.knobs,
        &mut inner.rng,
        inner.knobs.batch_faults,
    );
    match fault {
        Fault::Status(s) => {
            let e = SimError::injected(s, 0);
            errored(e.kind, e.message)
        }
        Fault::Hang => json!({"type": "expired"}),
        Fault::None | Fault::Slow(_) => {
            let (answer, usage) = plan(inner, &req, now);
            commit(
                inner,
                &req,
                &usage,
                (now, true),
                (Some(custom_id), crate::answering::Payer::Anthropic),
            );
            json!({"type": "succeeded", "message": message(&req, answer, usage, true)})
        }
    }
}
