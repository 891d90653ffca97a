//! A producer's job on its way in: its bodies in R2 first, then its rows (with the claim of its
//! `Idempotency-Key`) in one transaction, then the queue send. Every producer and the replay
//! stage through [`Staged`], whose two ends are [`Staged::commit`] and [`Staged::abandon`]:
//! what was put in R2 stays only when the rows committed, so no refusal, replay or lost race
//! can leave an object behind.

use pipeline::money::UsdMicros;
use pipeline::status::Lane;

use super::admission::commit_job;
use super::common::enqueue_failed;
use crate::error::AppError;
use crate::services::AppState;
use crate::store::Statement;

/// What a producer has put in R2 for a job (or an upload's jobs) that is not yet committed.
pub struct Staged<'a> {
    state: &'a AppState,
    keys: Vec<String>,
}

/// How a commit ended when it did not fail.
pub enum Committed {
    /// The rows are ours: the job exists.
    Made,
    /// A concurrent request with the same key committed first: this is its job (answer its
    /// acknowledgement); nothing of this request was kept.
    Replay(String),
}

impl<'a> Staged<'a> {
    pub fn new(state: &'a AppState) -> Staged<'a> {
        Staged {
            state,
            keys: Vec::new(),
        }
    }

    /// Writes `bytes` at `key`, to be deleted if the job is abandoned.
    pub async fn put(&mut self, key: &str, bytes: Vec<u8>) -> worker::Result<()> {
        self.state.blobs.put(key, bytes).await?;
        self.keys.push(key.to_owned());
        Ok(())
    }

    /// Objects already written for the job (an upload's files, stored as they streamed in).
    pub fn hold(&mut self, keys: impl IntoIterator<Item = String>) {
        self.keys.extend(keys);
    }

    /// Deletes everything staged, in one R2 call per 1,000 keys (R2's limit per call) — best
    /// effort: a leftover object is only storage.
    pub async fn abandon(self) {
        if let Err(e) = self.state.blobs.delete_many(&self.keys).await {
            worker::console_error!("abandoning {} staged objects failed: {e}", self.keys.len());
        }
    }

    /// Ends a staged job with the outcome of the steps between staging and committing: an
    /// error abandons it.
    pub async fn or_abandon<T>(self, result: Result<T, AppError>) -> Result<(T, Self), AppError> {
        match result {
            Ok(v) => Ok((v, self)),
            Err(e) => {
                self.abandon().await;
                Err(e)
            }
        }
    }

    /// Commits the rows ([`commit_job`]: the key's claim first, a cap's refusal a 429); the
    /// staged objects stay only when the job was made.
    pub async fn commit(
        self,
        (user, claim): (&str, Option<&(String, String)>),
        id: &str,
        statements: Vec<Statement>,
        (now, need, tags): (i64, UsdMicros, &[String]),
    ) -> Result<Committed, AppError> {
        let committed =
            commit_job(self.state, user, claim, id, statements, (now, need, tags)).await;
        match committed {
            Ok(None) => Ok(Committed::Made),
            Ok(Some(winner)) => {
                self.abandon().await;
                Ok(Committed::Replay(winner))
            }
            Err(e) => {
                self.abandon().await;
                Err(e)
            }
        }
    }
}

/// Sends a made job to its lane; a failed send marks its row `enqueue_failed` (it will never
/// run) and answers the 503 that says so.
pub async fn enqueue(state: &AppState, lane: Lane, id: &str) -> Result<(), AppError> {
    match state.lanes.send(lane, id).await {
        Ok(()) => Ok(()),
        Err(e) => Err(enqueue_failed(state, id, "job", e).await),
    }
}
