//! Sending jobs to their lane, and the randomness job ids are made from.

use pipeline::dto::QueueMessage;
use pipeline::status::Lane;
use worker::{Env, MessageBuilder};

use crate::config::{Config, QUEUE_BULK, QUEUE_HIGH};

/// Sends a job to its lane: the high lane delivers at once, the bulk lane after `BULK_DELAY_S`.
pub async fn send_job(env: &Env, config: &Config, lane: Lane, id: &str) -> worker::Result<()> {
    send_job_after(env, config, lane, id, None).await
}

/// As [`send_job`], with an explicit delivery delay (for deferrals).
pub async fn send_job_after(
    env: &Env,
    config: &Config,
    lane: Lane,
    id: &str,
    delay_s: Option<u32>,
) -> worker::Result<()> {
    let msg = QueueMessage::Job { id: id.to_owned() };
    let (binding, default_delay) = match lane {
        Lane::High => (QUEUE_HIGH, 0),
        Lane::Bulk => (QUEUE_BULK, config.timing.bulk_delay_s),
    };
    let delay = delay_s.unwrap_or(default_delay);
    let mut builder = MessageBuilder::new(msg);
    if delay > 0 {
        builder = builder.delay_seconds(delay);
    }
    env.queue(binding)?.send(builder.build()).await
}

/// Sends many jobs to the bulk lane with `sendBatch`, 100 messages per call (the queue's limit;
/// id-only messages stay far below its 256 KB). Answers the ids whose chunk could not be sent.
pub async fn send_bulk_jobs(env: &Env, config: &Config, ids: &[String]) -> Vec<String> {
    let mut unsent = Vec::new();
    let queue = match env.queue(QUEUE_BULK) {
        Ok(q) => q,
        Err(e) => {
            worker::console_error!("no bulk queue binding: {e}");
            return ids.to_vec();
        }
    };
    for chunk in ids.chunks(100) {
        let mut batch = worker::BatchMessageBuilder::new()
            .messages(chunk.iter().map(|id| QueueMessage::Job { id: id.clone() }));
        if config.timing.bulk_delay_s > 0 {
            batch = batch.delay_seconds(config.timing.bulk_delay_s);
        }
        if let Err(e) = queue.send_batch(batch.build()).await {
            worker::console_error!("sending {} jobs to the bulk lane failed: {e}", chunk.len());
            unsent.extend(chunk.iter().cloned());
        }
    }
    unsent
}

/// 16 bytes from the platform's CSPRNG (`crypto.getRandomValues`).
pub fn random_bytes() -> worker::Result<[u8; 16]> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(|e| worker::Error::RustError(format!("no randomness: {e}")))?;
    Ok(b)
}
