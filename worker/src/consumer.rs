//! Queue consumers. Every message is handled and acked or retried on its own: returning an error
//! from `queue()` would make the runtime retry the whole batch.

use pipeline::dto::QueueMessage;
use worker::{Env, MessageBatch, MessageExt};

use crate::config::{now_ms, DB};
use crate::db;

/// Which consumer a batch belongs to, from its queue name (`…-high`, `…-bulk`, `…-dlq`).
fn heartbeat_name(queue: &str) -> &'static str {
    if queue.ends_with("-dlq") {
        "queue_dlq"
    } else if queue.ends_with("-bulk") {
        "queue_bulk"
    } else {
        "queue_high"
    }
}

pub async fn handle_batch(batch: MessageBatch<serde_json::Value>, env: &Env) {
    let beat = heartbeat_name(&batch.queue());
    let messages = match batch.messages() {
        Ok(m) => m,
        Err(e) => {
            worker::console_error!("queue {}: cannot read the batch: {e}", batch.queue());
            batch.retry_all();
            return;
        }
    };
    for msg in messages {
        match serde_json::from_value::<QueueMessage>(msg.body().clone()) {
            Ok(QueueMessage::Ping { sent_at }) => {
                // The detail is the ping's send time: health reports it, so a caller can tell
                // that *its* ping went through the queue, not an earlier one.
                let detail = sent_at.to_string();
                match async { db::beat(&env.d1(DB)?, beat, now_ms(), &detail).await }.await {
                    Ok(()) => msg.ack(),
                    Err(e) => {
                        worker::console_error!("queue heartbeat failed: {e}");
                        msg.retry();
                    }
                }
            }
            Err(e) => {
                // A message we cannot read will never become readable: ack it and say so.
                worker::console_error!("queue {}: unreadable message acked: {e}", batch.queue());
                msg.ack();
            }
        }
    }
}
