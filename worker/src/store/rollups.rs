//! The usage rollup (migration 0012) against the jobs it sums: the admin's consistency check
//! and rebuild, one day range at a time.

use pipeline::ops::rollups::{DayRange, RollupRow};

use super::sql;
use super::{num, Store};

impl Store {
    /// The rollups' groups of the range: the per-user rollup's, then the tag rollup's.
    pub async fn rollup_rows(&self, r: DayRange) -> worker::Result<Vec<RollupRow>> {
        let days = [num(r.from_day), num(r.to_day)];
        let mut rows: Vec<RollupRow> = self.all(sql::USAGE_ROWS, &days).await?;
        rows.extend(self.all::<RollupRow>(sql::TAG_ROWS, &days).await?);
        Ok(rows)
    }

    /// The same groups computed from the jobs (scans of the range's jobs).
    pub async fn rollup_scan(&self, r: DayRange) -> worker::Result<Vec<RollupRow>> {
        let days = [num(r.from_day), num(r.to_day)];
        let mut rows: Vec<RollupRow> = self.all(sql::USAGE_SCAN, &days).await?;
        rows.extend(self.all::<RollupRow>(sql::TAG_SCAN, &days).await?);
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
                        "INSERT INTO usage_days (user_id, day, model, mode, jobs, input_tokens, \
                         output_tokens, cache_write_tokens, cache_read_tokens, cost_micros, \
                         unknown_cost_micros, cost_unknown, failures) {}",
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
                        "INSERT INTO usage_tag_days (tag, user_id, day, model, mode, jobs, \
                         input_tokens, output_tokens, cache_write_tokens, cache_read_tokens, \
                         cost_micros, unknown_cost_micros, cost_unknown, failures) {}",
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
