//! The dashboard's metrics rows turned into what its charts and cards draw.

use pipeline::ops::metrics::Metrics;

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

/// End-to-end latency: p50, p95 and p99.
pub fn latency(rows: &[Metrics]) -> Vec<Series> {
    let ms = |v: Option<i64>| v.map(|v| v as f64);
    vec![
        line("p50", rows, |r| ms(r.end_to_end_ms.p50)),
        line("p95", rows, |r| ms(r.end_to_end_ms.p95)),
        line("p99", rows, |r| ms(r.end_to_end_ms.p99)),
    ]
}

/// Input plus output tokens per model, summed over the series, by model name.
pub fn tokens(rows: &[Metrics]) -> Vec<Bar> {
    let mut per_model: Vec<(String, u64, u64)> = Vec::new();
    for m in rows.iter().flat_map(|r| &r.models) {
        match per_model.iter_mut().find(|(name, ..)| *name == m.model) {
            Some((_, i, o)) => {
                *i += m.input_tokens;
                *o += m.output_tokens;
            }
            None => per_model.push((m.model.clone(), m.input_tokens, m.output_tokens)),
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
        v if v >= 1e6 => format!("{:.1}M", v / 1e6),
        v if v >= 1e3 => format!("{:.1}k", v / 1e3),
        v => format!("{v:.0}"),
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
        assert_eq!(latency(&[]).len(), 3);
        assert!(tokens(&[]).is_empty());
    }
}
