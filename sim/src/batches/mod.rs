//! The Message Batches API: create, retrieve, list, cancel, delete, and results as JSONL.
//!
//! A batch is processed when its processing time has passed (lazily, on the next look at it):
//! each request is validated and answered like a Messages call — markers included, random faults
//! not — and billed at half price under its `custom_id`. A canceled batch ends with `canceled`
//! results; a `[[sim:hang]]` request ends `expired`.
//!
//! # Layout
//! - `process`: a batch processed once its time has come ([`settle`]).
//! - `endpoints`: the HTTP handlers (create, retrieve, list, cancel, delete, results).

mod endpoints;
mod process;

pub use endpoints::{cancel, create, delete, list, results, retrieve, ListQuery};
pub use process::settle;

pub use crate::batch::{Batch, Counts, MAX_BATCH_BYTES, MAX_REQUESTS};
