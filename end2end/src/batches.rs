//! Message Batches made in the simulator the way the Worker's flush makes them, with their jobs
//! waiting for them in D1 (`submitted`, with the batch's id and a flush row): the state a poll
//! starts from, at any size, without the flushes that would take minutes to make it.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::api::send_json;
use crate::stack::TestStack;

/// One batch to make: `jobs` prompt jobs of `user`, ids [`fixture_id`]`(tag, i)`, in flush
/// `flush`.
#[derive(Debug, Clone, Copy)]
pub struct Submitted<'a> {
    pub flush: &'a str,
    pub user: &'a str,
    /// Tells this batch's job ids from every other fixture's.
    pub tag: u32,
    pub jobs: usize,
    pub model: &'a str,
}

/// A job id for rows a suite writes straight into D1: shaped as the Worker issues them (a
/// lowercase hyphenated UUID, `pipeline::jobs::JobId`), so the Worker reads them as its own;
/// `tag` keeps one fixture's ids apart from another's.
pub fn fixture_id(tag: u32, i: u64) -> String {
    format!("{tag:08x}-0000-4000-8000-{i:012x}")
}

/// [`fixture_id`] in SQLite's `printf`, of the tag and the row's number.
pub const FIXTURE_ID_SQL: &str = "%08x-0000-4000-8000-%012x";

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// Creates the batch in the simulator (as the Worker's flush would) and the jobs waiting for it
/// in D1; answers the batch's id.
pub async fn submitted(s: &Arc<TestStack>, b: Submitted<'_>) -> String {
    let Submitted {
        flush,
        user,
        tag,
        jobs: n,
        model,
    } = b;
    let requests: Vec<Value> = (0..n)
        .map(|i| {
            json!({
                "custom_id": fixture_id(tag, i as u64),
                "params": {
                    "model": model,
                    "max_tokens": 200,
                    "output_config": {"effort": "low"},
                    "messages": [{"role": "user", "content": format!("Say hello to number {i}")}]
                }
            })
        })
        .collect();
    let (status, batch) = send_json(
        s.sim_api(reqwest::Method::POST, "/v1/messages/batches")
            .header("content-type", "application/json")
            .body(json!({ "requests": requests }).to_string()),
    )
    .await;
    assert_eq!(status, 200, "{batch}");
    let id = batch["id"].as_str().unwrap().to_string();
    let now = now_ms();
    s.d1_now(&format!(
        "INSERT INTO flushes (id, state, jobs, anthropic_batch_id, claimed_at, updated_at) \
         VALUES ('{flush}', 'created', {n}, '{id}', {now}, {now})"
    ))
    .await;
    s.d1_now(&format!(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < {n}) \
         INSERT INTO jobs (id, user_id, kind, status, lane, mode, model, input_text, attempts, \
         anthropic_batch_id, flush_id, created_at, started_at, updated_at) \
         SELECT printf('{FIXTURE_ID_SQL}', {tag}, i), '{user}', 'prompt', 'submitted', 'bulk', 'batch', \
         '{model}', 'Say hello to number ' || i, 1, '{id}', '{flush}', {now}, {now}, {now} FROM n"
    ))
    .await;
    id
}
