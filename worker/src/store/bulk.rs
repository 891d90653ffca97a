//! The bulk incident tools' statements (`pipeline::ops::bulk`): count what a filter matches,
//! end a slice of it in one set-based update, read a slice to replay, and keep the audit.

use pipeline::ops::bulk::{BulkAudit, BulkFilter};
use pipeline::status::Transition;
use serde::Deserialize;
use wasm_bindgen::JsValue;

use super::ops::bind;
use super::row::COLUMNS;
use super::sql::{self, SqlValue};
use super::{num, JobRow, Store};

impl Store {
    /// How many jobs `f` matches.
    pub async fn bulk_count(&self, f: &BulkFilter) -> worker::Result<u64> {
        let (clause, values) = sql::bulk_where(f);
        let query = format!("SELECT COUNT(*) AS n FROM jobs WHERE {clause}");
        self.n(&query, &bind(&values)).await
    }

    /// Ends at most `limit` of the jobs `f` matches (oldest first) with `t` and `reason`, in one
    /// statement; answers how many it ended (the transition's guard holds for each) — counted
    /// by the rows it returns: D1's count of changes includes what the rollups' triggers wrote.
    pub async fn bulk_end(
        &self,
        f: &BulkFilter,
        (t, reason): (Transition, &str),
        now: i64,
        limit: u32,
    ) -> worker::Result<usize> {
        let (clause, mut values) = sql::bulk_where(f);
        let n = values.len();
        let query = format!(
            "UPDATE jobs SET {}, error = ?{}, completed_at = ?{}, updated_at = ?{} \
             WHERE id IN (SELECT id FROM jobs WHERE {clause} ORDER BY created_at, id \
             LIMIT ?{}) AND {} RETURNING id",
            t.set(),
            n + 1,
            n + 2,
            n + 2,
            n + 3,
            t.guard()
        );
        values.extend([
            SqlValue::Text(reason.to_owned()),
            SqlValue::Int(now),
            SqlValue::Int(limit as i64),
        ]);
        let ended: Vec<serde::de::IgnoredAny> = self.all(&query, &bind(&values)).await?;
        Ok(ended.len())
    }

    /// At most `limit` of the jobs `f` matches, oldest first (a replay's slice).
    pub async fn bulk_rows(&self, f: &BulkFilter, limit: u32) -> worker::Result<Vec<JobRow>> {
        let (clause, mut values) = sql::bulk_where(f);
        let query = format!(
            "SELECT {COLUMNS} FROM jobs WHERE {clause} ORDER BY created_at, id LIMIT ?{}",
            values.len() + 1
        );
        values.push(SqlValue::Int(limit as i64));
        self.all(&query, &bind(&values)).await
    }

    /// Keeps a bulk request's audit entry.
    pub async fn record_bulk(&self, a: &BulkAudit) -> worker::Result<()> {
        let filter = serde_json::to_string(&a.filter).unwrap_or_default();
        self.run(
            "INSERT INTO bulk_actions (id, at, actor, action, dry_run, matched, acted, reason, \
             filter) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            &[
                a.id.as_str().into(),
                num(a.at),
                a.actor.as_str().into(),
                a.action.as_str().into(),
                JsValue::from_bool(a.dry_run),
                num(a.matched as i64),
                num(a.acted as i64),
                a.reason.as_str().into(),
                filter.into(),
            ],
        )
        .await?;
        Ok(())
    }

    /// The newest `limit` audit entries.
    pub async fn bulk_audits(&self, limit: u32) -> worker::Result<Vec<BulkAudit>> {
        #[derive(Deserialize)]
        struct Row {
            id: String,
            at: i64,
            actor: String,
            action: String,
            dry_run: i64,
            matched: i64,
            acted: i64,
            reason: String,
            filter: String,
        }
        let rows: Vec<Row> = self
            .all(
                "SELECT id, at, actor, action, dry_run, matched, acted, reason, filter \
                 FROM bulk_actions ORDER BY at DESC, id DESC LIMIT ?1",
                &[num(limit as i64)],
            )
            .await?;
        Ok(rows
            .into_iter()
            .filter_map(|r| {
                Some(BulkAudit {
                    action: serde_json::from_value(r.action.into()).ok()?,
                    filter: serde_json::from_str(&r.filter).ok()?,
                    id: r.id,
                    at: r.at,
                    actor: r.actor,
                    dry_run: r.dry_run != 0,
                    matched: r.matched.max(0) as u64,
                    acted: r.acted.max(0) as u64,
                    reason: r.reason,
                })
            })
            .collect())
    }
}
