//! The dashboard's metrics rows turned into what its charts and cards draw.

use pipeline::decimal::fixed;
use pipeline::ops::metrics::{span, Metrics, Percentiles, BATCH_EXPIRY_MS};

use crate::components::chart::{Bar, Series};
use crate::components::format::seconds;

/// One line of the series: `(at, value)` where the row has a value.
pub fn line(label: &str, rows: &[Metrics], value: impl Fn(&Metrics) -> Option<f64>) -> Series {
    let points = rows
        .iter()
        .filter_map(|r| value(r).map(|v| (r.at as f64, v)))
        .collect();
    (label.to_string(), points)
}

fn ms(v: Option<i64>) -> Option<f64> {
    v.map(|v| v as f64)
}

/// The sync path's latency: end-to-end p50, p95 and p99, and the call's own p95 (the run,
/// completed − started). Rows from before per-path figures draw the whole pipeline's.
pub fn latency(rows: &[Metrics]) -> Vec<Series> {
    let e2e = |r: &Metrics| r.sync.as_ref().map_or(r.end_to_end_ms, |s| s.end_to_end_ms);
    vec![
        line("p50", rows, |r| ms(e2e(r).p50)),
        line("p95", rows, |r| ms(e2e(r).p95)),
        line("p99", rows, |r| ms(e2e(r).p99)),
        line("call p95", rows, |r| {
            ms(r.sync.as_ref().map_or(r.run_ms, |s| s.run_ms).p95)
        }),
    ]
}

/// The batch path's p95s: until sent in a Message Batch, inside it, and end to end.
pub fn batch_latency(rows: &[Metrics]) -> Vec<Series> {
    vec![
        line("to submission p95", rows, |r| {
            ms(r.batch.as_ref()?.to_submission_ms.p95)
        }),
        line("inside the batch p95", rows, |r| {
            ms(r.batch.as_ref()?.in_batch_ms.p95)
        }),
        line("end-to-end p95", rows, |r| {
            ms(r.batch.as_ref()?.end_to_end_ms.p95)
        }),
    ]
}

/// One figure of a path's panel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub label: String,
    pub value: String,
    /// Past its SLO.
    pub over: bool,
    /// The warning's metric name, for tests and for the eye (`p95_end_to_end_ms`).
    pub metric: &'static str,
}

fn row(label: String, value: String, over: bool, metric: &'static str) -> Row {
    Row {
        label,
        value,
        over,
        metric,
    }
}

fn three(p: Percentiles) -> String {
    format!(
        "{} / {} / {}",
        ms_or_dash(p.p50),
        ms_or_dash(p.p95),
        ms_or_dash(p.p99)
    )
}

fn past(v: Option<i64>, threshold: i64) -> bool {
    v.is_some_and(|v| v > threshold)
}

/// The sync path's panel: what ended in the window, what waits now, against its SLOs.
pub fn sync_rows(m: &Metrics) -> Vec<Row> {
    let (Some(s), slo) = (m.sync.clone(), m.slo.unwrap_or_default()) else {
        return vec![row(
            "No per-path figures in this row".into(),
            "—".into(),
            false,
            "",
        )];
    };
    vec![
        row(
            "Completed · failed or dead-lettered".into(),
            format!("{} · {}", s.completed, s.failed),
            false,
            "ended",
        ),
        row(
            "Call p50 / p95 / p99".into(),
            three(s.run_ms),
            false,
            "run_ms",
        ),
        row(
            format!(
                "End-to-end p50 / p95 / p99 (p95 SLO {})",
                span(slo.sync_p95_ms)
            ),
            three(s.end_to_end_ms),
            past(s.end_to_end_ms.p95, slo.sync_p95_ms),
            "p95_end_to_end_ms",
        ),
        row(
            "Waiting for a call · running".into(),
            format!("{} · {}", s.waiting, s.running),
            false,
            "pending",
        ),
        row(
            format!(
                "Oldest waiting for its call (SLO {})",
                span(slo.sync_wait_ms)
            ),
            ms_or_dash(s.oldest_waiting_ms),
            past(s.oldest_waiting_ms, slo.sync_wait_ms),
            "oldest_waiting_ms",
        ),
    ]
}

/// The batch path's panel: time to submission and inside the batch, what accumulates now,
/// against the flush age and the API's 24-hour expiry.
pub fn batch_rows(m: &Metrics) -> Vec<Row> {
    let (Some(b), slo) = (m.batch.clone(), m.slo.unwrap_or_default()) else {
        return vec![row(
            "No per-path figures in this row".into(),
            "—".into(),
            false,
            "",
        )];
    };
    let long = |v: Option<i64>| v.map_or_else(|| "—".into(), span);
    let two = |p: Percentiles| format!("{} / {}", long(p.p50), long(p.p95));
    let submitted_slo = slo.batch_submit_ms + slo.batch_in_batch_ms;
    vec![
        row(
            "Completed · failed or dead-lettered".into(),
            format!("{} · {}", b.completed, b.failed),
            false,
            "ended",
        ),
        row(
            "To submission p50 / p95".into(),
            two(b.to_submission_ms),
            false,
            "to_submission_ms",
        ),
        row(
            "Inside the batch p50 / p95".into(),
            two(b.in_batch_ms),
            false,
            "in_batch_ms",
        ),
        row(
            "End-to-end p50 / p95".into(),
            two(b.end_to_end_ms),
            false,
            "end_to_end_ms",
        ),
        row(
            "Accumulating · inside a batch".into(),
            format!("{} · {}", b.accumulating, b.submitted),
            false,
            "pending",
        ),
        row(
            format!(
                "Oldest accumulating (flush at {}, SLO {})",
                span(slo.batch_flush_age_ms),
                span(slo.batch_submit_ms)
            ),
            long(b.oldest_accumulating_ms),
            past(b.oldest_accumulating_ms, slo.batch_submit_ms),
            "oldest_accumulating_ms",
        ),
        row(
            format!(
                "Oldest inside a batch, since created (SLO {}, expiry {})",
                span(submitted_slo),
                span(BATCH_EXPIRY_MS)
            ),
            long(b.oldest_submitted_ms),
            past(b.oldest_submitted_ms, submitted_slo),
            "oldest_submitted_ms",
        ),
    ]
}

/// Input plus output tokens per model, summed over the series, by model name.
pub fn tokens(rows: &[Metrics]) -> Vec<Bar> {
    let mut per_model: Vec<(String, u64, u64)> = Vec::new();
    for m in rows.iter().flat_map(|r| &r.models) {
        match per_model.iter_mut().find(|(name, ..)| *name == m.model) {
            Some((_, i, o)) => {
                *i += m.spend.input_tokens;
                *o += m.spend.output_tokens;
            }
            None => per_model.push((m.model.clone(), m.spend.input_tokens, m.spend.output_tokens)),
        }
    }
    per_model.sort();
    per_model
        .into_iter()
        .map(|(model, i, o)| Bar {
            title: format!("{model}: {i} input + {o} output tokens"),
            label: model,
            value: (i + o) as f64,
        })
        .collect()
}

/// `950`, `12.3k`, `4.5M`.
pub fn compact(v: f64) -> String {
    match v {
        v if v >= 1e6 => format!("{}M", fixed(v / 1e6, 1)),
        v if v >= 1e3 => format!("{}k", fixed(v / 1e3, 1)),
        v => fixed(v, 0),
    }
}

/// A duration, or a dash when there is none.
pub fn ms_or_dash(v: Option<i64>) -> String {
    v.map_or_else(|| "—".into(), seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_counts_read_compactly_and_missing_durations_as_a_dash() {
        assert_eq!(compact(950.0), "950");
        assert_eq!(compact(12_300.0), "12.3k");
        assert_eq!(compact(4_500_000.0), "4.5M");
        assert_eq!(ms_or_dash(None), "—");
        assert_eq!(ms_or_dash(Some(1_500)), "1.5 s");
    }

    #[test]
    fn no_rows_draw_empty_lines_and_no_bars() {
        assert!(latency(&[]).iter().all(|(_, points)| points.is_empty()));
        assert_eq!(latency(&[]).len(), 4);
        assert_eq!(batch_latency(&[]).len(), 3);
        assert!(tokens(&[]).is_empty());
    }

    #[test]
    fn each_panel_marks_only_its_own_figures_past_their_slo() {
        use pipeline::ops::metrics::{BatchPath, SyncPath};
        use pipeline::timing::Slo;
        let slo = Slo::default();
        let mut m: Metrics = serde_json::from_value(serde_json::json!({
            "at": 0, "window_ms": 60000, "completed": 0, "failed": 0, "dead_lettered": 0,
            "other_ended": 0, "failed_rate": 0.0, "dead_letter_rate": 0.0,
            "throughput_per_min": 0.0, "run_ms": {"p50": null, "p95": null, "p99": null},
            "end_to_end_ms": {"p50": null, "p95": null, "p99": null}, "lanes": [], "models": [],
            "dead_letters_now": 0, "budget": []
        }))
        .unwrap();
        assert_eq!(sync_rows(&m).len(), 1, "an old row has no per-path figures");
        m.slo = Some(slo);
        m.sync = Some(SyncPath {
            oldest_waiting_ms: Some(slo.sync_wait_ms + 1),
            ..SyncPath::default()
        });
        m.batch = Some(BatchPath {
            oldest_accumulating_ms: Some(slo.batch_submit_ms - 1),
            ..BatchPath::default()
        });
        let over = |rows: Vec<Row>| -> Vec<&'static str> {
            rows.into_iter()
                .filter(|r| r.over)
                .map(|r| r.metric)
                .collect()
        };
        assert_eq!(over(sync_rows(&m)), ["oldest_waiting_ms"]);
        assert!(over(batch_rows(&m)).is_empty());
    }
}
