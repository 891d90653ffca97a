//! The Message Batches API: create, retrieve, list, cancel, delete, and results as JSONL.
//!
//! A batch is processed when its processing time has passed (lazily, on the next look at it):
//! each request is validated and answered like a Messages call — markers included, random faults
//! not — and billed at half price under its `custom_id`. A canceled batch ends with `canceled`
//! results; a `[[sim:hang]]` request ends `expired`.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::anthropic::ErrorType;
use pipeline::clock::format_rfc3339;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::errors::{new_id, with_headers, SimError};
use crate::faults::{self, Fault, Rng};
use crate::messages::{check_headers, commit, json_body, message, plan};
use crate::request::{self, fnv};
use crate::{now_ms, Inner, Sim};

/// At most 100,000 requests…
pub const MAX_REQUESTS: usize = 100_000;
/// …and 256 MB per batch.
pub const MAX_BATCH_BYTES: usize = 256 * 1024 * 1024;
/// Results are kept (and the batch listed) for 29 days; it expires after 24 hours.
const EXPIRES_MS: i64 = 24 * 3600 * 1000;
/// A canceled batch takes this long to go from `canceling` to `ended`.
const CANCEL_MS: i64 = 200;

/// One Message Batch.
#[derive(Debug, Clone)]
pub struct Batch {
    pub id: String,
    pub created_at: i64,
    pub ends_at: i64,
    pub cancel_initiated_at: Option<i64>,
    pub ended_at: Option<i64>,
    /// `(custom_id, params)`, emptied once processed.
    pub requests: Vec<(String, Value)>,
    pub total: u64,
    /// JSONL lines, once ended.
    pub results: Vec<Value>,
    pub counts: Counts,
    /// The `anthropic-version` of the create call: each request is read under it.
    pub version: String,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub succeeded: u64,
    pub errored: u64,
    pub canceled: u64,
    pub expired: u64,
}

impl Batch {
    fn status(&self) -> &'static str {
        match (self.ended_at, self.cancel_initiated_at) {
            (Some(_), _) => "ended",
            (None, Some(_)) => "canceling",
            (None, None) => "in_progress",
        }
    }

    /// The Message Batch object; `base` is the simulator's own URL, for `results_url`.
    fn view(&self, base: &str) -> Value {
        let processing = if self.ended_at.is_some() {
            0
        } else {
            self.total
        };
        let ts = |t: Option<i64>| t.map(format_rfc3339);
        json!({
            "id": self.id,
            "type": "message_batch",
            "processing_status": self.status(),
            "request_counts": {
                "processing": processing,
                "succeeded": self.counts.succeeded,
                "errored": self.counts.errored,
                "canceled": self.counts.canceled,
                "expired": self.counts.expired,
            },
            "ended_at": ts(self.ended_at),
            "created_at": format_rfc3339(self.created_at),
            "expires_at": format_rfc3339(self.created_at + EXPIRES_MS),
            "archived_at": null,
            "cancel_initiated_at": ts(self.cancel_initiated_at),
            "results_url": self.ended_at.map(|_| format!("{base}/v1/messages/batches/{}/results", self.id)),
        })
    }
}

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
    let req = match request::parse(params, true, version, now) {
        Ok(r) => r,
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
            commit(inner, &req, &usage, now, true, Some(custom_id));
            json!({"type": "succeeded", "message": message(&req, answer, usage, true)})
        }
    }
}

fn base_url(headers: &HeaderMap) -> String {
    let host = headers
        .get("host")
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1:8788");
    format!("http://{host}")
}

fn ok(v: Value) -> Response {
    with_headers(Json(v).into_response(), vec![])
}

/// Runs a batch endpoint: headers checked, batches settled, the call counted. With
/// `batch_faults`, a random fault of the endpoint itself is drawn once the headers are good.
async fn endpoint(
    sim: &Sim,
    headers: &HeaderMap,
    name: &str,
    f: impl FnOnce(&mut Inner, i64) -> Result<Response, SimError>,
) -> Response {
    let drawn = check_headers(sim, headers).map(|_| {
        let mut guard = sim.lock();
        let inner = &mut *guard;
        let fault = faults::endpoint_fault(&inner.knobs, &mut inner.rng);
        (fault, inner.knobs.hang_ms, inner.knobs.retry_after_s)
    });
    let result = match drawn {
        Err(e) => Err(e),
        Ok((Fault::Status(status), _, retry_after_s)) => {
            Err(SimError::injected(status, retry_after_s))
        }
        Ok((Fault::Hang, hang_ms, _)) => {
            // A hung create still makes its batch: the client cannot tell it exists.
            if name == "batches.create" {
                let _ = settled(sim, f);
            }
            sim.lock().stats.call(name, "hang");
            tokio::time::sleep(std::time::Duration::from_millis(hang_ms)).await;
            return SimError::new(ErrorType::TimeoutError, "Request timed out").into_response();
        }
        Ok(_) => settled(sim, f),
    };
    let mut inner = sim.lock();
    match result {
        Ok(r) => {
            inner.stats.call(name, 200);
            r
        }
        Err(e) => {
            inner.stats.call(name, e.status);
            e.into_response()
        }
    }
}

/// Settles the batches that are due, then runs `f` on the state.
fn settled(
    sim: &Sim,
    f: impl FnOnce(&mut Inner, i64) -> Result<Response, SimError>,
) -> Result<Response, SimError> {
    let mut inner = sim.lock();
    let now = now_ms();
    settle(&mut inner, now);
    f(&mut inner, now)
}

fn find<'a>(inner: &'a mut Inner, id: &str) -> Result<&'a mut Batch, SimError> {
    inner
        .batches
        .iter_mut()
        .find(|b| b.id == id)
        .ok_or_else(|| SimError::not_found(format!("batch {id} not found")))
}

/// `POST /v1/messages/batches`.
pub async fn create(
    State(sim): State<Sim>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let base = base_url(&headers);
    let delay_ms = sim.lock().knobs.create_batch_delay_ms;
    let answer = endpoint(&sim, &headers, "batches.create", |inner, now| {
        let v = json_body(body, MAX_BATCH_BYTES)?;
        let list = match v.get("requests") {
            Some(Value::Array(a)) => a,
            Some(_) => return Err(SimError::invalid("requests: Input should be a valid list")),
            None => return Err(SimError::invalid("requests: Field required")),
        };
        if list.is_empty() {
            return Err(SimError::invalid(
                "requests: List should have at least 1 item after validation, not 0",
            ));
        }
        if list.len() > MAX_REQUESTS {
            return Err(SimError::invalid(format!(
                "requests: List should have at most {MAX_REQUESTS} items after validation, not {}",
                list.len()
            )));
        }
        let mut requests = Vec::with_capacity(list.len());
        let mut seen = std::collections::HashSet::with_capacity(list.len());
        for (i, r) in list.iter().enumerate() {
            let custom_id = r.get("custom_id").and_then(Value::as_str).ok_or_else(|| {
                SimError::invalid(format!("requests.{i}.custom_id: Field required"))
            })?;
            let valid = !custom_id.is_empty()
                && custom_id.len() <= 64
                && custom_id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !valid {
                return Err(SimError::invalid(format!(
                    "requests.{i}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
                )));
            }
            if !seen.insert(custom_id) {
                return Err(SimError::invalid(format!(
                    "requests: custom_id values must be unique within a batch; '{custom_id}' is repeated"
                )));
            }
            let params = match r.get("params") {
                Some(p @ Value::Object(_)) => p.clone(),
                Some(_) => {
                    return Err(SimError::invalid(format!(
                        "requests.{i}.params: Input should be a valid dictionary"
                    )))
                }
                None => {
                    return Err(SimError::invalid(format!(
                        "requests.{i}.params: Field required"
                    )))
                }
            };
            requests.push((custom_id.to_owned(), params));
        }
        let batch = Batch {
            id: new_id("msgbatch"),
            created_at: now,
            ends_at: now + inner.knobs.batch_ms as i64,
            cancel_initiated_at: None,
            ended_at: None,
            total: requests.len() as u64,
            requests,
            results: Vec::new(),
            counts: Counts::default(),
            version: crate::messages::version(&headers).to_owned(),
        };
        let view = batch.view(&base);
        inner.batches.push(batch);
        Ok(ok(view))
    }).await;
    if delay_ms > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(delay_ms)).await;
    }
    answer
}

/// `GET /v1/messages/batches/{id}`.
pub async fn retrieve(
    State(sim): State<Sim>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let base = base_url(&headers);
    endpoint(&sim, &headers, "batches.retrieve", |inner, _| {
        Ok(ok(find(inner, &id)?.view(&base)))
    })
    .await
}

#[derive(Debug, Deserialize)]
pub struct ListQuery {
    limit: Option<usize>,
    before_id: Option<String>,
    after_id: Option<String>,
}

/// `GET /v1/messages/batches`: newest first, paged with `limit`, `after_id`, `before_id`.
pub async fn list(
    State(sim): State<Sim>,
    Query(q): Query<ListQuery>,
    headers: HeaderMap,
) -> Response {
    let base = base_url(&headers);
    endpoint(&sim, &headers, "batches.list", |inner, _| {
        let limit = q.limit.unwrap_or(20);
        if !(1..=1000).contains(&limit) {
            return Err(SimError::invalid(
                "limit: Input should be between 1 and 1000",
            ));
        }
        let newest_first: Vec<&Batch> = inner.batches.iter().rev().collect();
        let position = |id: &str| {
            newest_first
                .iter()
                .position(|b| b.id == id)
                .ok_or_else(|| SimError::invalid(format!("no batch {id} to page from")))
        };
        let (page, has_more): (Vec<&Batch>, bool) = match (&q.after_id, &q.before_id) {
            (Some(_), Some(_)) => {
                return Err(SimError::invalid("give after_id or before_id, not both"))
            }
            (Some(after), None) => {
                let rest = &newest_first[position(after)? + 1..];
                (
                    rest.iter().take(limit).copied().collect(),
                    rest.len() > limit,
                )
            }
            (None, Some(before)) => {
                let head = &newest_first[..position(before)?];
                let start = head.len().saturating_sub(limit);
                (head[start..].to_vec(), start > 0)
            }
            (None, None) => (
                newest_first.iter().take(limit).copied().collect(),
                newest_first.len() > limit,
            ),
        };
        Ok(ok(json!({
            "data": page.iter().map(|b| b.view(&base)).collect::<Vec<_>>(),
            "has_more": has_more,
            "first_id": page.first().map(|b| b.id.clone()),
            "last_id": page.last().map(|b| b.id.clone()),
        })))
    })
    .await
}

/// `POST /v1/messages/batches/{id}/cancel`: `canceling`, then `ended` with canceled results.
pub async fn cancel(
    State(sim): State<Sim>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let base = base_url(&headers);
    endpoint(&sim, &headers, "batches.cancel", |inner, now| {
        let b = find(inner, &id)?;
        if b.ended_at.is_none() && b.cancel_initiated_at.is_none() {
            b.cancel_initiated_at = Some(now);
            b.ends_at = b.ends_at.min(now + CANCEL_MS);
        }
        Ok(ok(b.view(&base)))
    })
    .await
}

/// `DELETE /v1/messages/batches/{id}`: only once it has ended.
pub async fn delete(
    State(sim): State<Sim>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    endpoint(&sim, &headers, "batches.delete", |inner, _| {
        if find(inner, &id)?.ended_at.is_none() {
            return Err(SimError::invalid(format!(
                "Batch {id} cannot be deleted while it is still processing; cancel it first."
            )));
        }
        inner.batches.retain(|b| b.id != id);
        Ok(ok(json!({"id": id, "type": "message_batch_deleted"})))
    })
    .await
}

/// `GET /v1/messages/batches/{id}/results`: one JSON line per request, once ended.
pub async fn results(
    State(sim): State<Sim>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    endpoint(&sim, &headers, "batches.results", |inner, _| {
        let b = find(inner, &id)?;
        if b.ended_at.is_none() {
            return Err(SimError::invalid(format!(
                "Batch {id} has not finished processing; its results are not available yet."
            )));
        }
        let mut body = String::new();
        for line in &b.results {
            body.push_str(&line.to_string());
            body.push('\n');
        }
        let resp = ([("content-type", "application/x-jsonl")], body).into_response();
        Ok(with_headers(resp, vec![]))
    })
    .await
}
