//! The HTTP handlers of the Message Batches API: each checks the headers, settles the batches
//! that are due, and is counted in the stats; with `batch_faults`, each may fail on its own.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::anthropic::ErrorType;
use serde::Deserialize;
use serde_json::{json, Value};

use super::process::settle;
use crate::answering::json_body;
use crate::auth::check_headers;
use crate::batch::{Batch, Counts, CANCEL_MS, MAX_BATCH_BYTES, MAX_REQUESTS};
use crate::clock::now_ms;
use crate::errors::{new_id, with_headers, SimError};
use crate::faults::{self, Fault};
use crate::state::{Inner, Sim};

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
    sim.lock().counted(name, result)
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
            version: crate::auth::version(&headers).to_owned(),
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
        // Streamed a few hundred lines at a time, as the real endpoint "streams the results of a
        // Message Batch as a .jsonl file" (docs.anthropic.com/en/api/retrieving-message-batch-results):
        // the headers go out at once, and a reader that stops early costs only what it read.
        // Request order is one order the docs allow ("not guaranteed to be in the same order").
        let lines = std::sync::Arc::new(b.results.clone());
        let chunks = futures_util::stream::unfold(0usize, move |at| {
            let lines = lines.clone();
            async move {
                if at >= lines.len() {
                    return None;
                }
                let end = (at + 500).min(lines.len());
                let mut chunk = String::new();
                for line in &lines[at..end] {
                    chunk.push_str(&line.to_string());
                    chunk.push('\n');
                }
                Some((Ok::<_, std::convert::Infallible>(chunk), end))
            }
        });
        let resp = (
            [("content-type", "application/x-jsonl")],
            axum::body::Body::from_stream(chunks),
        )
            .into_response();
        Ok(with_headers(resp, vec![]))
    })
    .await
}
