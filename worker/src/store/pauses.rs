//! Pauses (`pipeline::pause`): the table of what is paused, the jobs a pause holds back
//! (`held_at`), and their release once no pause holds them.

use pipeline::pause::{Pause, Scope};
use pipeline::status::{Lane, Status};
use serde::Deserialize;

use super::{num, Statement, Store};

/// A held job, as the release reads it.
#[derive(Debug, Clone, Deserialize)]
pub struct Held {
    pub id: String,
    pub lane: Lane,
    pub model: Option<String>,
    pub user_id: String,
    pub status: Status,
}

#[derive(Deserialize)]
struct PauseRow {
    scope: String,
    value: String,
    reason: Option<String>,
    paused_by: String,
    paused_at: f64,
}

/// The held jobs one release reads at most (the cron releases the rest in later runs).
pub const RELEASE_SLICE: u32 = 500;

/// `jobs.<column> = ?` for a pause's scope.
fn column(scope: Scope) -> &'static str {
    match scope {
        Scope::Lane => "lane",
        Scope::Model => "model",
        Scope::User => "user_id",
    }
}

impl Store {
    /// Every pause, oldest first.
    pub async fn pauses(&self) -> worker::Result<Vec<Pause>> {
        pauses_of(&[self.result(PAUSES, &[]).await?])
    }

    /// [`Store::pauses`]' statement, to run with others (read by [`pauses_of`]).
    pub fn pauses_statement(&self) -> worker::Result<Statement> {
        self.statement(PAUSES, &[])
    }

    /// Pauses (or updates the reason of) a scope and value, and holds back the jobs of it that
    /// wait for a flush, in one transaction: the flush then never sends them.
    pub async fn pause(&self, p: &Pause) -> worker::Result<()> {
        let hold = format!(
            "UPDATE jobs INDEXED BY idx_jobs_waiting SET held_at = ?2, accumulated_at = NULL, \
             updated_at = ?2 WHERE {} AND accumulated_at IS NOT NULL AND flush_id IS NULL \
             AND {} = ?1",
            Status::sql_in(&[Status::Queued]),
            column(p.scope)
        );
        self.batch(vec![
            self.statement(
                "INSERT INTO pauses (scope, value, reason, paused_by, paused_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (scope, value) DO UPDATE SET \
                 reason = excluded.reason",
                &[
                    p.scope.as_str().into(),
                    p.value.as_str().into(),
                    super::opt(p.reason.as_deref()),
                    p.paused_by.as_str().into(),
                    num(p.paused_at),
                ],
            )?,
            self.statement(&hold, &[p.value.as_str().into(), num(p.paused_at)])?,
        ])
        .await?;
        Ok(())
    }

    /// Lifts a pause; answers it, or `None` when there was none.
    pub async fn resume(&self, scope: Scope, value: &str) -> worker::Result<Option<Pause>> {
        let rows = pauses_of(&[self
            .result(
                "DELETE FROM pauses WHERE scope = ?1 AND value = ?2 \
                 RETURNING scope, value, reason, paused_by, paused_at",
                &[scope.as_str().into(), value.into()],
            )
            .await?])?;
        Ok(rows.into_iter().next())
    }

    /// Holds a delivered job back (it stays `queued`; its message is acked). Answers whether
    /// it was still queued.
    pub async fn hold(&self, id: &str, now: i64) -> worker::Result<bool> {
        let sql = format!(
            "UPDATE jobs SET held_at = ?2, updated_at = ?2 WHERE id = ?1 AND {}",
            Status::sql_in(&[Status::Queued])
        );
        Ok(self.run(&sql, &[id.into(), num(now)]).await? > 0)
    }

    /// The lanes that have open dead letters (neither replayed nor discarded).
    pub async fn dead_letter_lanes(&self) -> worker::Result<Vec<Lane>> {
        #[derive(Deserialize)]
        struct Row {
            lane: Lane,
        }
        let rows: Vec<Row> = self
            .all(
                "SELECT DISTINCT lane FROM jobs INDEXED BY idx_jobs_dead_open \
                 WHERE status = 'dead_lettered' AND discarded_at IS NULL AND replayed_to IS NULL",
                &[],
            )
            .await?;
        Ok(rows.into_iter().map(|r| r.lane).collect())
    }

    /// Up to [`RELEASE_SLICE`] held jobs, oldest hold first.
    pub fn held_statement(&self) -> worker::Result<Statement> {
        self.statement(
            &format!(
                "SELECT id, lane, model, user_id, status FROM jobs INDEXED BY idx_jobs_held \
                 WHERE held_at IS NOT NULL ORDER BY held_at LIMIT {RELEASE_SLICE}"
            ),
            &[],
        )
    }

    /// Releases these held jobs: answers the rows released (the queued ones are to be sent to
    /// their lanes; one that ended while held — canceled, expired — only stops being held).
    pub async fn release(&self, ids: &[String], now: i64) -> worker::Result<Vec<Held>> {
        let mut out = Vec::new();
        for chunk in ids.chunks(super::IDS_PER_STATEMENT) {
            let marks = super::marks_from(2, chunk.len());
            let sql = format!(
                "UPDATE jobs SET held_at = NULL, updated_at = ?1 WHERE id IN ({marks}) \
                 AND held_at IS NOT NULL RETURNING id, lane, model, user_id, status"
            );
            let mut args = vec![num(now)];
            args.extend(chunk.iter().map(|id| id.as_str().into()));
            out.extend(self.all::<Held>(&sql, &args).await?);
        }
        Ok(out)
    }
}

const PAUSES: &str =
    "SELECT scope, value, reason, paused_by, paused_at FROM pauses ORDER BY paused_at";

/// The result of [`Store::pauses_statement`] (rows of an unknown scope are left out).
pub fn pauses_of(r: &[worker::D1Result]) -> worker::Result<Vec<Pause>> {
    let rows: Vec<PauseRow> = super::nth(r, 0, "the pauses")?.results()?;
    Ok(rows
        .into_iter()
        .filter_map(|p| {
            Some(Pause {
                scope: Scope::parse(&p.scope)?,
                value: p.value,
                reason: p.reason,
                paused_by: p.paused_by,
                paused_at: p.paused_at as i64,
            })
        })
        .collect())
}

/// The result of [`Store::held_statement`].
pub fn held_of(r: &worker::D1Result) -> worker::Result<Vec<Held>> {
    r.results()
}
