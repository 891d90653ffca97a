//! The usage rollup (migration 0012) against the jobs it sums: the admin's consistency check
//! and rebuild, one day range at a time.

use pipeline::ops::rollups::{DayRange, RollupRow};

use super::sql;
use super::{num, Store};

impl Store {
    /// The rollup's groups of the range.
    pub async fn rollup_rows(&self, r: DayRange) -> worker::Result<Vec<RollupRow>> {
        self.all(sql::USAGE_ROWS, &[num(r.from_day), num(r.to_day)])
            .await
    }

    /// The same groups computed from the jobs (a scan of the range's jobs).
    pub async fn rollup_scan(&self, r: DayRange) -> worker::Result<Vec<RollupRow>> {
        self.all(sql::USAGE_SCAN, &[num(r.from_day), num(r.to_day)])
            .await
    }

    /// Replaces the range's rollup with the scan, in one transaction (the one-off backfill of
    /// jobs stored before the rollup, or a repair). Answers the groups written.
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
            ])
            .await?;
        match results.get(1) {
            Some(r) => super::changes(r),
            None => Ok(0),
        }
    }
}
