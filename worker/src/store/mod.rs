//! The one store layer: every SQL statement of the Worker is here, and nothing outside calls
//! `prepare`. Route handlers, consumers and the cron call typed functions; status changes are
//! written with the guards of `pipeline::status::Transition`, so a write that a retry repeats
//! changes nothing the second time.
//!
//! # Layout
//! - [`row`]: `JobRow`, a job as stored (enums that fail loudly), and its API views.
//! - [`jobs`]: job rows as the producers and the API see them — insert (with idempotency
//!   records), read, list, cancel, expire, reconcile.
//! - [`lifecycle`]: what the consumers and the poller write — claim, settle, fail, retry,
//!   dead-letter, resubmit — and the attempt log.
//! - [`batch_results`]: the poller's side — open Message Batches, their jobs, how each ends.
//! - [`uploads`]: PDF uploads and their files.
//! - [`flushes`]: the bulk lane's accumulation and the flushes into Message Batches.
//! - [`keys`]: API keys.
//! - [`ops`]: heartbeats and counters, metrics rows, alerts, usage, DLQ triage.
//! - [`retention`]: finished jobs and their logs, oldest first, in bounded slices.
//! - [`rollups`]: the usage rollup's consistency check and rebuild.
//! - [`budgets`]: per-user caps, spend and commitments, share weights, load on the producers.
//! - [`peaks`]: the headroom, each entry point's highest use of each production limit.
//! - [`sql`]: the query text the plan test checks.

pub mod batch_results;
pub mod budgets;
pub mod bulk;
mod error;
pub mod files;
pub mod flushes;
pub mod jobs;
pub mod keys;
pub mod lifecycle;
pub mod ops;
pub mod pauses;
pub mod peaks;
pub mod retention;
pub mod rollups;
pub mod route_health;
pub mod routing;
pub mod row;
pub mod sql;
#[cfg(test)]
mod sql_tests;
pub mod uploads;
pub mod webhooks;

use std::sync::Arc;

use pipeline::money::UsdMicros;
use serde::de::DeserializeOwned;
use wasm_bindgen::JsValue;
use worker::{D1Database, D1PreparedStatement, D1Result};

pub use error::StoreError;
pub use row::JobRow;

use crate::meter::Meter;

/// The D1 database, resolved once per invocation, with the invocation's [`Meter`].
#[derive(Clone)]
pub struct Store {
    db: Arc<D1Database>,
    meter: Arc<Meter>,
    /// `D1_STATS = "trace"`: one log line per statement.
    trace: bool,
}

/// Counts one D1 result on the meter (and, when tracing, logs it with the head of its SQL).
fn record(meter: &Meter, trace: bool, sql: &str, r: &D1Result) {
    let (read, written) = match r.meta() {
        Ok(Some(m)) => (m.rows_read, m.rows_written),
        _ => (None, None),
    };
    meter.d1(read, written);
    if trace {
        worker::console_log!(
            "d1: {} written, {} read: {sql}",
            written.unwrap_or(0),
            read.unwrap_or(0)
        );
    }
}

/// The first words of a statement, on one line (what a trace line shows).
fn head(sql: &str) -> String {
    sql.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(90)
        .collect()
}

impl Store {
    pub fn new(db: D1Database, meter: Arc<Meter>, trace: bool) -> Store {
        Store {
            db: Arc::new(db),
            meter,
            trace,
        }
    }

    /// A statement to run with others in one [`Store::batch`].
    fn statement(&self, sql: &str, args: &[JsValue]) -> worker::Result<Statement> {
        let shown = if self.trace { head(sql) } else { String::new() };
        Ok(Statement(self.stmt(sql, args)?, shown))
    }

    /// A statement with its parameters bound.
    fn stmt(&self, sql: &str, args: &[JsValue]) -> worker::Result<D1PreparedStatement> {
        self.db.prepare(sql).bind(args)
    }

    /// Runs one write; answers how many rows it changed.
    async fn run(&self, sql: &str, args: &[JsValue]) -> worker::Result<usize> {
        self.meter.d1_call()?;
        let r = self.stmt(sql, args)?.run().await?;
        self.record(sql, &r);
        changes(&r)
    }

    /// Runs one statement and answers its whole result (for the readers that also read it out
    /// of a batch).
    async fn result(&self, sql: &str, args: &[JsValue]) -> worker::Result<D1Result> {
        self.meter.d1_call()?;
        let r = self.stmt(sql, args)?.all().await?;
        self.record(sql, &r);
        Ok(r)
    }

    async fn all<T: DeserializeOwned>(
        &self,
        sql: &str,
        args: &[JsValue],
    ) -> worker::Result<Vec<T>> {
        self.meter.d1_call()?;
        let r = self.stmt(sql, args)?.all().await?;
        self.record(sql, &r);
        r.results()
    }

    /// The first row (the queries that use it select by a key or end in LIMIT 1).
    async fn first<T: DeserializeOwned>(
        &self,
        sql: &str,
        args: &[JsValue],
    ) -> worker::Result<Option<T>> {
        Ok(self.all(sql, args).await?.into_iter().next())
    }

    /// [`Store::batch`] for a write the database may refuse on purpose (a cap's trigger, a
    /// uniqueness constraint): the refusal comes back as its [`StoreError`].
    pub async fn commit(&self, statements: Vec<Statement>) -> Result<Vec<D1Result>, StoreError> {
        Ok(self.batch(statements).await?)
    }

    /// Runs statements in one transaction (`db.batch()`): all or nothing.
    pub async fn batch(&self, statements: Vec<Statement>) -> worker::Result<Vec<D1Result>> {
        let (prepared, shown): (Vec<_>, Vec<_>) =
            statements.into_iter().map(|s| (s.0, s.1)).unzip();
        self.meter.d1_call()?;
        let results = self.db.batch(prepared).await?;
        for (r, sql) in results.iter().zip(&shown) {
            record(&self.meter, self.trace, sql, r);
        }
        Ok(results)
    }

    /// Counts one result of a statement run alone.
    fn record(&self, sql: &str, r: &D1Result) {
        let shown = if self.trace { head(sql) } else { String::new() };
        record(&self.meter, self.trace, &shown, r);
    }
}

impl Store {
    /// Runs groups of statements in one round trip and one transaction (`db.batch()`), and
    /// answers each group's results apart: how the cron asks for everything it needs at once
    /// while each part keeps its own statements and its own reading of their results.
    pub async fn rounds(&self, groups: Vec<Vec<Statement>>) -> worker::Result<Vec<Vec<D1Result>>> {
        let lens: Vec<usize> = groups.iter().map(Vec::len).collect();
        let mut results = self
            .batch(groups.into_iter().flatten().collect())
            .await?
            .into_iter();
        Ok(lens
            .into_iter()
            .map(|n| results.by_ref().take(n).collect())
            .collect())
    }
}

/// The `i`-th group of a [`Store::rounds`]' results, or an error naming what is missing.
pub fn group<'a>(
    found: &'a [Vec<D1Result>],
    i: usize,
    what: &str,
) -> worker::Result<&'a [D1Result]> {
    found
        .get(i)
        .map(Vec::as_slice)
        .ok_or_else(|| worker::Error::RustError(format!("{what}: group {i} is missing")))
}

/// The `i`-th result of a group, or an error naming what is missing.
fn nth<'a>(results: &'a [D1Result], i: usize, what: &str) -> worker::Result<&'a D1Result> {
    results
        .get(i)
        .ok_or_else(|| worker::Error::RustError(format!("{what}: result {i} is missing")))
}

/// A prepared write, to be run in one [`Store::batch`] with others.
/// (When tracing, the head of its SQL.)
pub struct Statement(D1PreparedStatement, String);

impl Store {
    /// Runs a prepared write alone.
    pub async fn run_one(&self, s: Statement) -> worker::Result<usize> {
        self.meter.d1_call()?;
        let r = s.0.run().await?;
        record(&self.meter, self.trace, &s.1, &r);
        changes(&r)
    }
}

/// Rows a write changed.
pub fn changes(r: &D1Result) -> worker::Result<usize> {
    Ok(r.meta()?.and_then(|m| m.changes).unwrap_or(0))
}

/// A number bound into a statement.
fn num(v: i64) -> JsValue {
    JsValue::from_f64(v as f64)
}

/// An amount bound into a statement.
fn money(m: UsdMicros) -> JsValue {
    num(m.micros() as i64)
}

/// An amount as D1 answers it (a JavaScript number, never negative in our columns).
fn micros(v: f64) -> UsdMicros {
    UsdMicros::new(v.max(0.0) as u64)
}

/// Optional text bound into a statement (NULL when absent).
fn opt(v: Option<&str>) -> JsValue {
    v.map(JsValue::from_str).unwrap_or(JsValue::NULL)
}

/// `?1, ?2, …, ?n`.
fn marks(n: usize) -> String {
    marks_from(1, n)
}

/// `?first, …, ?(first + n − 1)`.
fn marks_from(first: usize, n: usize) -> String {
    (first..first + n)
        .map(|i| format!("?{i}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Ids bound in one statement at most (D1 binds at most 100 parameters per statement).
const IDS_PER_STATEMENT: usize = 90;

/// The marks of `ids` numbered after `before` (the statement's other parameters, which come
/// first), and all of them to bind.
fn with_ids(before: Vec<JsValue>, ids: &[String]) -> (String, Vec<JsValue>) {
    let marks = marks_from(before.len() + 1, ids.len());
    let mut args = before;
    args.extend(ids.iter().map(|i| JsValue::from_str(i)));
    (marks, args)
}
