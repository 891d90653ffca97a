//! The bindings, resolved once per invocation into typed services, and the state every handler,
//! consumer and cron step shares: the configuration, the store (D1), the blobs (R2), the lanes
//! (Queues), the budget (the Durable Object) and the Anthropic client.

use std::sync::Arc;

use pipeline::dto::QueueMessage;
use pipeline::envelope::Entry;
use pipeline::status::Lane;
use worker::{Env, MessageBuilder, Queue};

use crate::anthropic::Anthropic;
use crate::config::{Config, ASSETS, BUDGET, DB, QUEUE_BULK, QUEUE_HIGH, RESULTS};
use crate::meter::{Meter, Op};
use crate::store::Store;

/// What every entry point works with.
#[derive(Clone)]
pub struct AppState {
    pub config: Arc<Config>,
    pub store: Store,
    pub blobs: crate::blobs::Blobs,
    pub lanes: Lanes,
    pub budget: crate::budget_client::BudgetClient,
    pub anthropic: Arc<Anthropic>,
    /// What this invocation asked of D1, R2, the queues and the Durable Object.
    pub meter: Arc<Meter>,
    /// The static assets, when the config binds them (`[assets] binding`).
    pub assets: Option<Assets>,
}

/// The assets binding: the SPA's files and the OpenAPI document `cargo xtask build` writes.
#[derive(Clone)]
pub struct Assets(pub worker::Fetcher);

// SAFETY: as for the other bindings — one isolate, one thread; the handle never crosses threads.
unsafe impl Send for Assets {}
unsafe impl Sync for Assets {}

impl AppState {
    /// Reads the configuration and resolves every binding; a missing binding or a malformed
    /// var is an error that names it.
    pub fn from_env(env: &Env, entry: Entry) -> Result<AppState, String> {
        let config = Config::from_env(env)?;
        let bind = |what: &str, e: worker::Error| format!("binding {what}: {e}");
        let meter = Arc::new(Meter::new(
            entry,
            config.limits(entry),
            config.envelope_strict,
        ));
        Ok(AppState {
            store: Store::new(
                env.d1(DB).map_err(|e| bind(DB, e))?,
                meter.clone(),
                config.d1_trace,
            ),
            blobs: crate::blobs::Blobs::new(
                env.bucket(RESULTS).map_err(|e| bind(RESULTS, e))?,
                meter.clone(),
            ),
            lanes: Lanes {
                high: env.queue(QUEUE_HIGH).map_err(|e| bind(QUEUE_HIGH, e))?,
                bulk: env.queue(QUEUE_BULK).map_err(|e| bind(QUEUE_BULK, e))?,
                bulk_delay_s: config.timing.bulk_delay_s,
                meter: meter.clone(),
            },
            budget: crate::budget_client::BudgetClient::new(
                env.durable_object(BUDGET).map_err(|e| bind(BUDGET, e))?,
                meter.clone(),
            ),
            anthropic: Arc::new(Anthropic::new(&config, meter.clone())),
            config: Arc::new(config),
            meter,
            assets: env.assets(ASSETS).ok().map(Assets),
        })
    }
}

/// The two queue lanes: `high` delivers at once, `bulk` after `BULK_DELAY_S`.
#[derive(Clone)]
pub struct Lanes {
    high: Queue,
    bulk: Queue,
    bulk_delay_s: u32,
    meter: Arc<Meter>,
}

impl Lanes {
    fn queue(&self, lane: Lane) -> &Queue {
        match lane {
            Lane::High => &self.high,
            Lane::Bulk => &self.bulk,
        }
    }

    /// Sends a job to its lane, after the lane's own delay.
    pub async fn send(&self, lane: Lane, id: &str) -> worker::Result<()> {
        self.send_after(lane, id, None).await
    }

    /// Sends a job to its lane after `delay_s` (deferrals, paced replays), or the lane's delay.
    pub async fn send_after(
        &self,
        lane: Lane,
        id: &str,
        delay_s: Option<u32>,
    ) -> worker::Result<()> {
        let default = match lane {
            Lane::High => 0,
            Lane::Bulk => self.bulk_delay_s,
        };
        let delay = delay_s.unwrap_or(default);
        let mut builder = MessageBuilder::new(QueueMessage::Job { id: id.to_owned() });
        if delay > 0 {
            builder = builder.delay_seconds(delay);
        }
        self.meter.count(Op::QueueSent, 1)?;
        self.queue(lane).send(builder.build()).await
    }

    /// Sends many jobs to `lane` with `sendBatch`, 100 messages per call (the queue's limit;
    /// id-only messages stay far below its 256 KB), after the lane's own delay. Answers the ids
    /// whose chunk could not be sent.
    pub async fn send_many(&self, lane: Lane, ids: &[String]) -> Vec<String> {
        let delay = match lane {
            Lane::High => 0,
            Lane::Bulk => self.bulk_delay_s,
        };
        let mut unsent = Vec::new();
        for chunk in ids.chunks(100) {
            let mut batch = worker::BatchMessageBuilder::new()
                .messages(chunk.iter().map(|id| QueueMessage::Job { id: id.clone() }));
            if delay > 0 {
                batch = batch.delay_seconds(delay);
            }
            let sent = match self.meter.count(Op::QueueSent, chunk.len() as u64) {
                Ok(()) => self.queue(lane).send_batch(batch.build()).await,
                Err(e) => Err(e),
            };
            if let Err(e) = sent {
                worker::console_error!(
                    "sending {} jobs to the {} lane failed: {e}",
                    chunk.len(),
                    lane.as_str()
                );
                unsent.extend(chunk.iter().cloned());
            }
        }
        unsent
    }

    /// A health ping through the high lane.
    pub async fn ping(&self, sent_at: i64) -> worker::Result<()> {
        self.meter.count(Op::QueueSent, 1)?;
        self.high.send(QueueMessage::Ping { sent_at }).await
    }
}

/// 16 bytes from the platform's CSPRNG (`crypto.getRandomValues`).
pub fn random_bytes() -> worker::Result<[u8; 16]> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(|e| worker::Error::RustError(format!("no randomness: {e}")))?;
    Ok(b)
}

/// A fresh job (or upload, or flush) id.
pub fn new_id() -> worker::Result<String> {
    Ok(pipeline::jobs::JobId::new(random_bytes()?).to_string())
}
