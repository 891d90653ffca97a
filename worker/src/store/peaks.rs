//! The headroom's peaks (migration 0022, `pipeline::envelope::headroom`).

use pipeline::envelope::headroom::{Peak, WINDOW_MS};
use pipeline::envelope::{Entry, Figure};
use serde::Deserialize;
use worker::D1Result;

use super::{num, Statement, Store};

/// A higher peak replaces the stored one; so does any once the stored one is a day old.
const RECORD: &str = "INSERT INTO envelope_peaks (entry, figure, peak, limit_value, at_ms) \
     VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (entry, figure) DO UPDATE SET \
     peak = excluded.peak, limit_value = excluded.limit_value, at_ms = excluded.at_ms \
     WHERE excluded.peak >= envelope_peaks.peak OR envelope_peaks.at_ms <= excluded.at_ms - ?6";

const SINCE: &str = "SELECT entry, figure, peak, limit_value, at_ms FROM envelope_peaks \
     WHERE at_ms > ?1";

#[derive(Deserialize)]
struct PeakRow {
    entry: Entry,
    figure: Figure,
    peak: f64,
    limit_value: f64,
    at_ms: f64,
}

impl Store {
    /// Records the peaks an invocation raised, in one call.
    pub async fn record_peaks(&self, peaks: &[Peak]) -> worker::Result<()> {
        let statements = peaks
            .iter()
            .map(|p| {
                self.statement(
                    RECORD,
                    &[
                        p.entry.as_str().into(),
                        p.figure.as_str().into(),
                        num(p.peak as i64),
                        num(p.limit as i64),
                        num(p.at_ms),
                        num(WINDOW_MS),
                    ],
                )
            })
            .collect::<worker::Result<Vec<_>>>()?;
        if !statements.is_empty() {
            self.batch(statements).await?;
        }
        Ok(())
    }

    /// The peaks of the day before `at`, to run with others (read by [`peaks_of`]).
    pub fn peaks_statement(&self, at: i64) -> worker::Result<Statement> {
        self.statement(SINCE, &[num(at - WINDOW_MS)])
    }

    /// The peaks of the day before `at`.
    pub async fn peaks(&self, at: i64) -> worker::Result<Vec<Peak>> {
        peaks_of(&self.result(SINCE, &[num(at - WINDOW_MS)]).await?, at)
    }
}

/// The peaks a [`Store::peaks_statement`] read, the tightest first.
pub fn peaks_of(r: &D1Result, at: i64) -> worker::Result<Vec<Peak>> {
    let rows: Vec<PeakRow> = r.results()?;
    let peaks = rows
        .into_iter()
        .map(|r| {
            Peak::new(
                r.entry,
                r.figure,
                r.peak as u64,
                r.limit_value as u64,
                r.at_ms as i64,
            )
        })
        .collect();
    Ok(pipeline::envelope::headroom::current(peaks, at))
}
