//! What a job's run answers to: the queue message it was delivered with, or only its lane.

use pipeline::status::Lane;
use serde_json::Value;
use worker::{Message, MessageExt, QueueRetryOptionsBuilder};

use crate::services::AppState;

/// What a sync call answers to: the queue message it was delivered with, or — when a fairer
/// job took that message ([`fair_shares`]) — only its lane: its own message is still queued,
/// and a retry or deferral is a new message.
pub enum Handle {
    Message(Message<Value>),
    Swapped { lane: Lane, id: String },
}

impl Handle {
    pub fn ack(&self) {
        if let Handle::Message(m) = self {
            m.ack();
        }
    }

    /// Delivers the job again at once in a new message, spending none of the queue's retries
    /// (a job this invocation has no time left for); the queue retries it if the send fails.
    pub async fn deliver_again(&self, state: &AppState, lane: Lane, id: &str) {
        match state.lanes.send_after(lane, id, None).await {
            Ok(()) => self.ack(),
            Err(e) => {
                worker::console_error!("job {id}: cannot be sent again ({e}); retried");
                if let Handle::Message(m) = self {
                    m.retry();
                }
            }
        }
    }

    /// Delivers the job again after `delay_s` (0: the queue's own retry delay).
    pub async fn retry(&self, state: &AppState, delay_s: u32) {
        match self {
            Handle::Message(m) if delay_s == 0 => m.retry(),
            Handle::Message(m) => retry_after(m, delay_s),
            Handle::Swapped { lane, id } => {
                let delay = (delay_s > 0).then_some(delay_s);
                if let Err(e) = state.lanes.send_after(*lane, id, delay).await {
                    // The reconciler re-sends a queued job whose message was lost.
                    worker::console_error!("job {id}: its retry could not be sent: {e}");
                }
            }
        }
    }
}

/// Retries the message after `delay_s` (counting a retry).
pub fn retry_after(msg: &Message<Value>, delay_s: u32) {
    msg.retry_with_options(
        &QueueRetryOptionsBuilder::new()
            .with_delay_seconds(delay_s)
            .build(),
    );
}
