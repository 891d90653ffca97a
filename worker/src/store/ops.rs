//! The operator's tables: heartbeats and counters, metrics rows, alerts, per-user budgets and
//! usage, and the DLQ's triage (failure classes, audit entries, replays, discards).

use pipeline::ops::dlq::{AuditEntry, DlqFilter};
use pipeline::ops::metrics::{EndedJob, Metrics, PendingGroup};
use pipeline::ops::prometheus::Totals;
use pipeline::ops::spenders::SpenderGroup;
use pipeline::ops::usage::UsageGroup;
use pipeline::outcome::ErrorClass;
use pipeline::rollout::RolloutCall;
use pipeline::status::Status;
use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::D1Result;

use super::row::COLUMNS;
use super::sql::{self, SqlValue};
use super::{money, num, opt, JobRow, Statement, Store};
use pipeline::money::UsdMicros;

/// A background path's last heartbeat: when it ran and what it noted.
#[derive(Debug, Deserialize)]
pub struct Beat {
    pub at: f64,
    pub detail: Option<String>,
}

/// A heartbeat's upsert: ?1 name, ?2 at, ?3 detail.
const BEAT: &str = "INSERT INTO heartbeats (name, at, detail) VALUES (?1, ?2, ?3) \
     ON CONFLICT(name) DO UPDATE SET at = excluded.at, detail = excluded.detail";

/// The heartbeat whose detail says whether the dead letters are above the alert threshold.
pub const DLQ_ABOVE: &str = "dlq_above";

/// A failed job stored without a failure class.
#[derive(Debug, Deserialize)]
pub struct Unclassified {
    pub id: String,
    pub error: Option<String>,
}

/// What one cron run's metrics row reads ([`Store::cron_reads`]).
pub struct CronReads {
    pub previous: Option<Metrics>,
    pub ended: Vec<EndedJob>,
    pub pending: Vec<PendingGroup>,
    pub dead_now: u64,
    pub unclassified: Vec<Unclassified>,
    /// Whether the last run found the dead letters above the alert threshold.
    pub dlq_above: bool,
    /// The Prometheus counters so far (each run adds its window's ended jobs).
    pub totals: Totals,
}

impl CronReads {
    /// The results of [`Store::cron_reads`]' statements.
    pub fn of(r: &[D1Result]) -> worker::Result<CronReads> {
        let part = |i| super::nth(r, i, "the cron's reads");
        #[derive(Deserialize)]
        struct N {
            n: f64,
        }
        Ok(CronReads {
            previous: latest_metrics_of(part(0)?)?,
            ended: part(1)?.results()?,
            pending: part(2)?.results()?,
            dead_now: part(3)?
                .results::<N>()?
                .first()
                .map(|n| n.n as u64)
                .unwrap_or(0),
            unclassified: part(4)?.results()?,
            dlq_above: part(5)?
                .results::<Beat>()?
                .first()
                .and_then(|b| b.detail.as_deref())
                .is_some_and(|d| d == "1"),
            totals: totals_of(part(6)?)?,
        })
    }
}

/// What one cron run's metrics row writes ([`Store::cron_writes`]).
pub struct CronWrites<'a> {
    pub metrics: &'a Metrics,
    pub unclassified: &'a [Unclassified],
    /// The DLQ alert's new state, when it changed.
    pub dlq_above: Option<bool>,
    /// The cron's own heartbeat: (name, detail).
    pub beat: (&'a str, &'a str),
    /// The Prometheus counters with this window's jobs added.
    pub totals: &'a Totals,
}

/// What a replay writes: the new job from the original, guarded so that only one replay wins.
pub struct Replay<'a> {
    pub original: &'a str,
    pub id: &'a str,
    pub model: &'a str,
    pub prompt_key: Option<&'a str>,
    pub actor: &'a str,
    pub detail: &'a str,
    /// The new job's worst case, reserved against the user's caps.
    pub reserved: UsdMicros,
    pub now: i64,
}

pub(super) fn bind(values: &[SqlValue]) -> Vec<JsValue> {
    values
        .iter()
        .map(|v| match v {
            SqlValue::Text(s) => JsValue::from_str(s),
            SqlValue::Int(n) => num(*n),
        })
        .collect()
}

impl Store {
    /// Records that a background path (`cron`, `queue_high`, …) ran at `at`.
    pub async fn beat(&self, name: &str, at: i64, detail: &str) -> worker::Result<()> {
        self.run(BEAT, &[name.into(), num(at), detail.into()])
            .await?;
        Ok(())
    }

    /// Forgets a heartbeat (a note that has served its purpose).
    pub async fn forget_beat(&self, name: &str) -> worker::Result<()> {
        self.run("DELETE FROM heartbeats WHERE name = ?1", &[name.into()])
            .await?;
        Ok(())
    }

    /// When a background path last ran, if ever.
    pub async fn last_beat(&self, name: &str) -> worker::Result<Option<Beat>> {
        self.first(
            "SELECT at, detail FROM heartbeats WHERE name = ?1",
            &[name.into()],
        )
        .await
    }

    /// Adds one to a named counter (stored as a heartbeat whose detail is the count).
    pub async fn count(&self, name: &str, at: i64) -> worker::Result<()> {
        self.count_by(name, 1, at).await
    }

    /// Adds `n` to a named counter.
    pub async fn count_by(&self, name: &str, n: u64, at: i64) -> worker::Result<()> {
        self.run(
            "INSERT INTO heartbeats (name, at, detail) VALUES (?1, ?2, CAST(CAST(?3 AS INTEGER) AS TEXT)) \
             ON CONFLICT(name) DO UPDATE SET at = excluded.at, \
             detail = CAST(CAST(detail AS INTEGER) + ?3 AS TEXT)",
            &[name.into(), num(at), num(n as i64)],
        )
        .await?;
        Ok(())
    }

    /// A named counter's value.
    pub async fn counter(&self, name: &str) -> worker::Result<u64> {
        Ok(self
            .last_beat(name)
            .await?
            .and_then(|b| b.detail)
            .and_then(|d| d.parse().ok())
            .unwrap_or(0))
    }

    /// How many jobs are stored (the health check's D1 probe).
    pub async fn job_count(&self) -> worker::Result<u64> {
        self.n("SELECT COUNT(*) AS n FROM jobs", &[]).await
    }

    pub(super) async fn n(&self, query: &str, args: &[JsValue]) -> worker::Result<u64> {
        #[derive(Deserialize)]
        struct N {
            n: f64,
        }
        let n: Option<N> = self.first(query, args).await?;
        Ok(n.map(|n| n.n as u64).unwrap_or(0))
    }

    /// Fills `error_class` of failed and dead-lettered jobs stored without one (before classes
    /// were recorded when the failure happens); answers how many.
    pub async fn classify_legacy(&self) -> worker::Result<usize> {
        let rows: Vec<Unclassified> = self.all(&sql::unclassified(), &[]).await?;
        self.classify_these(&rows).await?;
        Ok(rows.len())
    }

    /// Gives these jobs their failure class.
    pub async fn classify_these(&self, rows: &[Unclassified]) -> worker::Result<()> {
        if !rows.is_empty() {
            self.batch(self.classify(rows)?).await?;
        }
        Ok(())
    }

    /// The writes that give these jobs their failure class.
    fn classify(&self, rows: &[Unclassified]) -> worker::Result<Vec<Statement>> {
        rows.iter()
            .map(|r| {
                let class = ErrorClass::of(r.error.as_deref().unwrap_or_default());
                self.statement(
                    "UPDATE jobs SET error_class = ?2 WHERE id = ?1",
                    &[r.id.as_str().into(), class.as_str().into()],
                )
            })
            .collect()
    }

    /// Everything the cron's metrics row and DLQ alert read: the previous row, the jobs that
    /// ended since it (at most `max_ended`, the window closing at `at`), pending work, open dead
    /// letters, failures still without a class, and whether the dead letters were above the
    /// alert threshold. Run with others in one [`Store::rounds`]; read by [`CronReads::of`].
    pub fn cron_reads(&self, at: i64, max_ended: i64) -> worker::Result<Vec<Statement>> {
        Ok(vec![
            self.latest_metrics_statement()?,
            self.statement(sql::ENDED, &[num(at), num(max_ended)])?,
            self.statement(&sql::pending(), &[])?,
            self.statement(sql::DEAD_NOW, &[])?,
            self.statement(&sql::unclassified(), &[])?,
            self.beat_read_statement(DLQ_ABOVE)?,
            self.totals_statement()?,
        ])
    }

    /// One heartbeat's row (`at`, `detail`), to run with others.
    fn beat_read_statement(&self, name: &str) -> worker::Result<Statement> {
        self.statement(
            "SELECT at, detail FROM heartbeats WHERE name = ?1",
            &[name.into()],
        )
    }

    /// The Prometheus counters' row (read by [`totals_of`]).
    pub fn totals_statement(&self) -> worker::Result<Statement> {
        self.beat_read_statement(Totals::ROW)
    }

    /// The latest metrics row (read by [`latest_metrics_of`]).
    pub fn latest_metrics_statement(&self) -> worker::Result<Statement> {
        self.statement(sql::METRICS_SERIES, &[num(0), num(1)])
    }

    /// Jobs now by status, lane and mode (the counts rollup), for a scrape.
    pub fn job_counts_statement(&self) -> worker::Result<Statement> {
        self.statement("SELECT status, lane, mode, n FROM job_counts", &[])
    }

    /// Everything the cron's metrics row writes: the row, the classes of `unclassified`, the
    /// DLQ alert's state when it changed, and the cron's heartbeat (to run in one transaction
    /// with the cron's other writes).
    pub fn cron_writes(&self, w: &CronWrites<'_>) -> worker::Result<Vec<Statement>> {
        let body = serde_json::to_string(w.metrics)
            .map_err(|e| worker::Error::RustError(e.to_string()))?;
        let mut statements = vec![
            self.statement(
                "INSERT OR REPLACE INTO metrics (at, body) VALUES (?1, ?2)",
                &[num(w.metrics.at), body.into()],
            )?,
            self.beat_statement(w.beat.0, w.metrics.at, w.beat.1)?,
        ];
        let totals =
            serde_json::to_string(w.totals).map_err(|e| worker::Error::RustError(e.to_string()))?;
        statements.push(self.beat_statement(Totals::ROW, w.metrics.at, &totals)?);
        if let Some(above) = w.dlq_above {
            statements.push(self.beat_statement(
                DLQ_ABOVE,
                w.metrics.at,
                if above { "1" } else { "0" },
            )?);
        }
        statements.extend(self.classify(w.unclassified)?);
        Ok(statements)
    }

    /// A heartbeat's write, to run with others.
    pub fn beat_statement(&self, name: &str, at: i64, detail: &str) -> worker::Result<Statement> {
        self.statement(BEAT, &[name.into(), num(at), detail.into()])
    }

    /// Metrics rows since `from`, at most `limit`, newest first.
    pub async fn metrics_since(&self, from: i64, limit: i64) -> worker::Result<Vec<Metrics>> {
        #[derive(Deserialize)]
        struct Row {
            body: String,
        }
        let rows: Vec<Row> = self
            .all(sql::METRICS_SERIES, &[num(from), num(limit)])
            .await?;
        Ok(rows
            .iter()
            .filter_map(|r| serde_json::from_str(&r.body).ok())
            .collect())
    }

    /// Records an alert under `key`, once: answers whether it is new.
    pub async fn record_alert(
        &self,
        key: &str,
        at: i64,
        kind: &str,
        detail: &str,
    ) -> worker::Result<bool> {
        let n = self
            .run(
                "INSERT INTO alerts (key, at, kind, detail) VALUES (?1, ?2, ?3, ?4) \
                 ON CONFLICT(key) DO NOTHING",
                &[key.into(), num(at), kind.into(), detail.into()],
            )
            .await?;
        Ok(n > 0)
    }

    /// The `POST /api/claude` calls made in `[from, to)`, for the rollout view.
    pub async fn rollout_calls(&self, from: i64, to: i64) -> worker::Result<Vec<RolloutCall>> {
        self.all(sql::ROLLOUT, &[num(from), num(to)]).await
    }

    /// A user's usage by day, model and mode in `[from, to)`.
    pub async fn usage(&self, user: &str, from: i64, to: i64) -> worker::Result<Vec<UsageGroup>> {
        let day = |ms: i64| num(ms.div_euclid(pipeline::clock::DAY_MS));
        self.all(sql::USAGE, &[user.into(), day(from), day(to)])
            .await
    }

    /// Jobs per model created on `from_day` (days since the epoch) or later.
    pub async fn jobs_by_model_since(&self, from_day: i64) -> worker::Result<Vec<(String, u64)>> {
        #[derive(Deserialize)]
        struct Row {
            model: String,
            jobs: f64,
        }
        let rows: Vec<Row> = self.all(sql::JOBS_BY_MODEL, &[num(from_day)]).await?;
        Ok(rows
            .into_iter()
            .map(|r| (r.model, r.jobs.max(0.0) as u64))
            .collect())
    }

    /// Every user's usage by model in `[from, to)`, for the spenders view.
    pub async fn spenders(&self, from: i64, to: i64) -> worker::Result<Vec<SpenderGroup>> {
        let day = |ms: i64| num(ms.div_euclid(pipeline::clock::DAY_MS));
        self.all(sql::SPENDERS, &[day(from), day(to)]).await
    }

    /// Cost by tag and model over [from, to), of one user or (`None`) every user.
    pub async fn tag_usage(
        &self,
        user: Option<&str>,
        from: i64,
        to: i64,
    ) -> worker::Result<Vec<SpenderGroup>> {
        let day = |ms: i64| num(ms.div_euclid(pipeline::clock::DAY_MS));
        self.all(sql::TAG_USAGE, &[day(from), day(to), opt(user)])
            .await
    }

    /// The jobs a bulk replay takes (one row more than `limit`), oldest first.
    pub async fn dlq_to_replay(&self, f: &DlqFilter, limit: u32) -> worker::Result<Vec<JobRow>> {
        let (query, values) = sql::dlq_replay(f, COLUMNS, limit);
        self.all(&query, &bind(&values)).await
    }

    /// The audit entries of these jobs (at most 100), by job and oldest first, to run with
    /// others (read by [`audit_of`]).
    pub fn audit_statement(&self, job_ids: &[String]) -> worker::Result<Statement> {
        let (marks, args) = super::with_ids(Vec::new(), job_ids);
        self.statement(
            &format!(
                "SELECT job_id, at, actor, action, detail FROM job_audit \
                 WHERE job_id IN ({marks}) ORDER BY job_id, at"
            ),
            &args,
        )
    }

    /// A DLQ page's rows (one more than `limit`) and the open dead letters, with the failures
    /// still without a class, to run in one round trip (read by [`dlq_page_of`]).
    pub fn dlq_page(
        &self,
        f: &DlqFilter,
        cursor: Option<&pipeline::jobs::Cursor>,
        limit: u32,
    ) -> worker::Result<Vec<Statement>> {
        let (query, values) = sql::dlq_list(f, COLUMNS, cursor, limit);
        Ok(vec![
            self.statement(&sql::unclassified(), &[])?,
            self.statement(&query, &bind(&values))?,
            self.statement(sql::DEAD_NOW, &[])?,
        ])
    }

    /// A replay, all or nothing: the original's guarded `replayed_to`, the new job copied from
    /// it, and both audit entries. Answers whether this replay won (the original was still
    /// replayable and not replayed meanwhile).
    pub async fn replay(&self, r: &Replay<'_>) -> Result<bool, super::StoreError> {
        let replayable = Status::sql_in(&[
            Status::DeadLettered,
            Status::Failed,
            Status::Expired,
            Status::Canceled,
        ]);
        let results = self
            .commit(vec![
                self.statement(
                    &format!(
                        "UPDATE jobs SET replayed_to = ?2, updated_at = ?3 WHERE id = ?1 \
                         AND replayed_to IS NULL AND {replayable}"
                    ),
                    &[r.original.into(), r.id.into(), num(r.now)],
                )?,
                self.statement(
                    &format!(
                        "INSERT INTO jobs (id, user_id, kind, status, lane, mode, model, source, \
                         file_name, file_size, input_text, prompt_key, template, replay_of, \
                         created_at, updated_at, reserved_micros, tags, file_id) \
                         SELECT ?2, user_id, kind, {}, lane, mode, ?3, source, file_name, \
                         file_size, input_text, ?4, template, id, ?5, ?5, ?6, tags, file_id \
                         FROM jobs \
                         WHERE id = ?1 AND replayed_to = ?2",
                        Status::Queued.sql()
                    ),
                    &[
                        r.original.into(),
                        r.id.into(),
                        r.model.into(),
                        opt(r.prompt_key),
                        num(r.now),
                        money(r.reserved),
                    ],
                )?,
                self.statement(
                    "INSERT INTO job_audit (job_id, at, actor, action, detail) \
                     SELECT ?1, ?3, ?4, 'replay', ?5 FROM jobs WHERE id = ?1 AND replayed_to = ?2",
                    &[
                        r.original.into(),
                        r.id.into(),
                        num(r.now),
                        r.actor.into(),
                        r.detail.into(),
                    ],
                )?,
                self.statement(
                    "INSERT INTO job_audit (job_id, at, actor, action, detail) \
                     SELECT ?2, ?3, ?4, 'created', 'a replay of ' || ?1 FROM jobs \
                     WHERE id = ?1 AND replayed_to = ?2",
                    &[r.original.into(), r.id.into(), num(r.now), r.actor.into()],
                )?,
            ])
            .await?;
        Ok(match results.first() {
            Some(first) => super::changes(first)? > 0,
            None => false,
        })
    }

    /// Takes a dead letter off the triage list, with an audit entry.
    pub async fn discard(&self, id: &str, actor: &str, now: i64) -> worker::Result<()> {
        self.batch(vec![
            self.statement(
                "UPDATE jobs SET discarded_at = COALESCE(discarded_at, ?2), updated_at = ?2 \
                 WHERE id = ?1",
                &[id.into(), num(now)],
            )?,
            self.statement(
                "INSERT INTO job_audit (job_id, at, actor, action, detail) \
                 VALUES (?1, ?2, ?3, 'discard', NULL)",
                &[id.into(), num(now), actor.into()],
            )?,
        ])
        .await?;
        Ok(())
    }
}

/// The audit entries [`Store::audit_statement`] read: (job, entry) pairs.
pub fn audit_of(r: &D1Result) -> worker::Result<Vec<(String, AuditEntry)>> {
    #[derive(Deserialize)]
    struct Row {
        job_id: String,
        at: f64,
        actor: String,
        action: String,
        detail: Option<String>,
    }
    Ok(r.results::<Row>()?
        .into_iter()
        .map(|r| {
            let entry = AuditEntry {
                at: r.at as i64,
                actor: r.actor,
                action: r.action,
                detail: r.detail,
            };
            (r.job_id, entry)
        })
        .collect())
}

/// What [`Store::dlq_page`] read: the failures without a class, the page's rows, the open
/// dead letters.
pub fn dlq_page_of(r: &[D1Result]) -> worker::Result<(Vec<Unclassified>, Vec<JobRow>, u64)> {
    #[derive(Deserialize)]
    struct N {
        n: f64,
    }
    Ok((
        super::nth(r, 0, "the DLQ page")?.results()?,
        super::nth(r, 1, "the DLQ page")?.results()?,
        super::nth(r, 2, "the DLQ page")?
            .results::<N>()?
            .first()
            .map(|n| n.n as u64)
            .unwrap_or(0),
    ))
}

/// The Prometheus counters from [`Store::totals_statement`]'s result (none yet: all zero; a
/// row that does not parse starts them again rather than stopping the cron).
pub fn totals_of(r: &D1Result) -> worker::Result<Totals> {
    Ok(r.results::<Beat>()?
        .first()
        .and_then(|b| b.detail.as_deref())
        .and_then(|d| serde_json::from_str(d).ok())
        .unwrap_or_default())
}

/// The latest metrics row from [`Store::latest_metrics_statement`]'s result.
pub fn latest_metrics_of(r: &D1Result) -> worker::Result<Option<Metrics>> {
    #[derive(Deserialize)]
    struct Body {
        body: String,
    }
    Ok(r.results::<Body>()?
        .first()
        .and_then(|b| serde_json::from_str(&b.body).ok()))
}
