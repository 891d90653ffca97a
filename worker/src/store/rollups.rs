//! The usage rollup (migration 0012) against the jobs it sums: the admin's consistency check
//! and rebuild, one day range at a time.

use pipeline::ops::rollups::{DayRange, RollupRow};

use super::sql;
use super::{num, Store};

impl Store {
    /// The rollups' groups of the range: the per-user rollup's, then the tag rollup's.
    pub async fn rollup_rows(&self, r: DayRange) -> worker::Result<Vec<RollupRow>> {
        self.both(r, sql::USAGE_ROWS, sql::TAG_ROWS).await
    }

    /// The same groups computed from the jobs (scans of the range's jobs).
    pub async fn rollup_scan(&self, r: DayRange) -> worker::Result<Vec<RollupRow>> {
        self.both(r, sql::USAGE_SCAN, sql::TAG_SCAN).await
    }

    /// The rows of a per-user query, then of its tag twin, over the range's days.
    async fn both(
        &self,
        r: DayRange,
        per_user: &str,
        per_tag: &str,
    ) -> worker::Result<Vec<RollupRow>> {
        let days = [num(r.from_day), num(r.to_day)];
        let mut rows: Vec<RollupRow> = self.all(per_user, &days).await?;
        rows.extend(self.all::<RollupRow>(per_tag, &days).await?);
        Ok(rows)
    }

    /// Replaces the range's rollups with the scans, in one transaction (the one-off backfill of
    /// jobs stored before a rollup, or a repair). Answers the groups written.
    pub async fn rebuild_rollup(&self, r: DayRange) -> worker::Result<usize> {
        let results = self
            .batch(vec![
                self.statement(
                    "DELETE FROM usage_days WHERE day >= ?1 AND day < ?2",
                    &[num(r.from_day), num(r.to_day)],
                )?,
                self.statement(
                    &format!(
                        "INSERT INTO usage_days (user_id, day, model, mode, {}) {}",
                        sql::ROLLUP_SUMS,
                        sql::USAGE_SCAN
                    ),
                    &[num(r.from_day), num(r.to_day)],
                )?,
                self.statement(
                    "DELETE FROM usage_tag_days WHERE day >= ?1 AND day < ?2",
                    &[num(r.from_day), num(r.to_day)],
                )?,
                self.statement(
                    &format!(
                        "INSERT INTO usage_tag_days (tag, user_id, day, model, mode, {}) {}",
                        sql::ROLLUP_SUMS,
                        sql::TAG_SCAN
                    ),
                    &[num(r.from_day), num(r.to_day)],
                )?,
            ])
            .await?;
        let mut groups = 0;
        for i in [1, 3] {
            if let Some(r) = results.get(i) {
                groups += super::changes(r)?;
            }
        }
        Ok(groups)
    }
}
