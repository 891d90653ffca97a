//! `GET /api/metrics/prometheus`: the pipeline in the Prometheus text exposition format
//! (https://prometheus.io/docs/instrumenting/exposition_formats/, format 0.0.4), for a scraper.
//!
//! Gauges come from what is true now (the job counts rollup, the latest metrics row). Counters
//! and histograms must only grow, so the cron keeps them: each run adds the jobs that ended in
//! its window to [`Totals`] (one stored row), the same jobs its metrics row is made of. A scrape
//! reads a few dozen rows whatever the history's size.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::{Deserialize, Serialize};

use super::metrics::{EndedJob, Metrics};
use crate::identity::KeyHash;

/// The histograms' upper bounds, in seconds: a sync call's fractions of a second up to a
/// Message Batch's 24 hours.
pub const BOUNDS_S: [f64; 17] = [
    0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0, 7200.0,
    14400.0, 43200.0, 86400.0,
];

/// A cumulative histogram: `buckets[i]` counts samples at or under `BOUNDS_S[i]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Histogram {
    pub buckets: Vec<u64>,
    pub count: u64,
    pub sum_ms: u64,
}

impl Histogram {
    fn observe(&mut self, ms: i64) {
        let ms = ms.max(0);
        self.buckets.resize(BOUNDS_S.len(), 0);
        for (b, bound) in self.buckets.iter_mut().zip(BOUNDS_S) {
            if ms as f64 <= bound * 1000.0 {
                *b += 1;
            }
        }
        self.count += 1;
        self.sum_ms += ms as u64;
    }
}

/// The counters the cron keeps. Keys join labels with `|`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    /// `path|model|outcome` → jobs ended.
    #[serde(default)]
    pub ended: BTreeMap<String, u64>,
    /// `model|kind` → tokens (`input`, `output`, `cache_write`, `cache_read`).
    #[serde(default)]
    pub tokens: BTreeMap<String, u64>,
    /// model → micro-dollars.
    #[serde(default)]
    pub cost_micros: BTreeMap<String, u64>,
    /// path → completed − created of completed jobs.
    #[serde(default)]
    pub end_to_end: BTreeMap<String, Histogram>,
    /// path → completed − started (the call, or the time inside the Message Batch).
    #[serde(default)]
    pub run: BTreeMap<String, Histogram>,
}

impl Totals {
    /// The name of the store's row that holds them.
    pub const ROW: &'static str = "prometheus_totals";

    /// Adds the jobs that ended in one window, from `since` (the previous row's time) on: a
    /// metrics window covers at least a minute, so two runs within one overlap, and a counter
    /// must count each job once.
    pub fn add(&mut self, ended: &[EndedJob], since: Option<i64>) {
        for j in ended
            .iter()
            .filter(|j| since.is_none_or(|s| j.completed_at >= s))
        {
            let path = if j.mode == "batch" { "batch" } else { "sync" };
            let model = j.model.as_deref().unwrap_or("unknown");
            *self
                .ended
                .entry(format!("{path}|{model}|{}", j.status))
                .or_default() += 1;
            for (kind, n) in [
                ("input", j.columns.input_tokens),
                ("output", j.columns.output_tokens),
                ("cache_write", j.columns.cache_write_tokens),
                ("cache_read", j.columns.cache_read_tokens),
            ] {
                if n > 0 {
                    *self.tokens.entry(format!("{model}|{kind}")).or_default() += n;
                }
            }
            if j.columns.cost_micros.micros() > 0 {
                *self.cost_micros.entry(model.to_owned()).or_default() +=
                    j.columns.cost_micros.micros();
            }
            if j.status == "completed" {
                self.end_to_end
                    .entry(path.into())
                    .or_default()
                    .observe(j.completed_at - j.created_at);
                if let Some(s) = j.started_at {
                    self.run
                        .entry(path.into())
                        .or_default()
                        .observe(j.completed_at - s);
                }
            }
        }
    }
}

/// Jobs now by status, lane and mode, as the counts rollup holds them.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct JobCount {
    pub status: String,
    pub lane: String,
    pub mode: String,
    pub n: i64,
}

/// Everything one scrape shows.
pub struct Scrape<'a> {
    pub totals: &'a Totals,
    pub counts: &'a [JobCount],
    pub latest: Option<&'a Metrics>,
    pub pauses: &'a [crate::pause::Pause],
    /// Each entry point's peaks over the last day (`envelope::headroom::current`).
    pub headroom: &'a [crate::envelope::headroom::Peak],
}

/// Whether `authorization` carries the scrape token (compared as digests, so the comparison
/// takes the same time however much of it matches). No token configured: never.
pub fn is_scrape_token(authorization: Option<&str>, token: Option<&str>) -> bool {
    let (Some(header), Some(token)) = (authorization, token.filter(|t| !t.is_empty())) else {
        return false;
    };
    let Some(given) = header.strip_prefix("Bearer ") else {
        return false;
    };
    KeyHash::of(given.trim()) == KeyHash::of(token)
}

/// A label value as the text format writes it: `\`, `"` and newlines escaped.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

struct Out(String);

impl Out {
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.0, "# HELP {name} {help}");
        let _ = writeln!(self.0, "# TYPE {name} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: impl std::fmt::Display) {
        self.0.push_str(name);
        if !labels.is_empty() {
            self.0.push('{');
            for (i, (k, v)) in labels.iter().enumerate() {
                if i > 0 {
                    self.0.push(',');
                }
                let _ = write!(self.0, "{k}=\"{}\"", label(v));
            }
            self.0.push('}');
        }
        let _ = writeln!(self.0, " {value}");
    }

    fn histogram(&mut self, name: &str, help: &str, by_path: &BTreeMap<String, Histogram>) {
        self.family(name, "histogram", help);
        for (path, h) in by_path {
            for (i, bound) in BOUNDS_S.iter().enumerate() {
                let le = bound.to_string();
                let n = h.buckets.get(i).copied().unwrap_or(0);
                self.sample(&format!("{name}_bucket"), &[("path", path), ("le", &le)], n);
            }
            self.sample(
                &format!("{name}_bucket"),
                &[("path", path), ("le", "+Inf")],
                h.count,
            );
            self.sample(
                &format!("{name}_sum"),
                &[("path", path)],
                h.sum_ms as f64 / 1000.0,
            );
            self.sample(&format!("{name}_count"), &[("path", path)], h.count);
        }
    }
}

/// Micro-dollars as dollars, exactly (`1234567` → `1.234567`).
fn dollars(micros: u64) -> String {
    format!("{}.{:06}", micros / 1_000_000, micros % 1_000_000)
}

/// Each entry point's peak of each production limit over the last day, and the limit.
fn headroom(o: &mut Out, peaks: &[crate::envelope::headroom::Peak]) {
    o.family(
        "claude_pipeline_envelope_peak_ratio",
        "gauge",
        "Highest use of each per-invocation production limit over the last day, by entry point (fetch, queue, cron) and figure (1 = at the limit).",
    );
    for p in peaks {
        let labels = [("entry", p.entry.as_str()), ("figure", p.figure.as_str())];
        o.sample(
            "claude_pipeline_envelope_peak_ratio",
            &labels,
            p.peak as f64 / p.limit.max(1) as f64,
        );
    }
    o.family(
        "claude_pipeline_envelope_limit",
        "gauge",
        "The per-invocation limit each peak is measured against (calls, connections, milliseconds or bytes).",
    );
    for p in peaks {
        let labels = [("entry", p.entry.as_str()), ("figure", p.figure.as_str())];
        o.sample("claude_pipeline_envelope_limit", &labels, p.limit);
    }
}

/// The exposition text.
pub fn render(s: &Scrape<'_>) -> String {
    let mut o = Out(String::new());
    o.family(
        "claude_pipeline_jobs",
        "gauge",
        "Jobs stored now, by status, lane and path (sync: Messages API, batch: Message Batches).",
    );
    let mut dead_open = 0;
    for c in s.counts {
        if c.status == "dead_open" {
            dead_open = c.n.max(0);
            continue;
        }
        if c.n > 0 {
            o.sample(
                "claude_pipeline_jobs",
                &[("status", &c.status), ("lane", &c.lane), ("path", &c.mode)],
                c.n,
            );
        }
    }
    o.family(
        "claude_pipeline_dead_letters",
        "gauge",
        "Dead-lettered jobs neither replayed nor discarded.",
    );
    o.sample("claude_pipeline_dead_letters", &[], dead_open);

    o.family(
        "claude_pipeline_paused",
        "gauge",
        "1 for each lane, model or user an admin (or the DLQ alert) paused.",
    );
    for p in s.pauses {
        o.sample(
            "claude_pipeline_paused",
            &[("scope", p.scope.as_str()), ("value", &p.value)],
            1,
        );
    }
    headroom(&mut o, s.headroom);
    let t = s.totals;
    o.family(
        "claude_pipeline_jobs_ended_total",
        "counter",
        "Jobs that ended, by path, model and outcome (completed, failed, dead_lettered, expired, canceled).",
    );
    for (key, n) in &t.ended {
        let mut parts = key.splitn(3, '|');
        let (path, model, outcome) = (
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
        );
        o.sample(
            "claude_pipeline_jobs_ended_total",
            &[("path", path), ("model", model), ("outcome", outcome)],
            n,
        );
    }
    o.histogram(
        "claude_pipeline_job_latency_seconds",
        "Completed jobs, created to completed, by path.",
        &t.end_to_end,
    );
    o.histogram(
        "claude_pipeline_job_run_seconds",
        "Completed jobs, started to completed (the call, or the time inside the Message Batch), by path.",
        &t.run,
    );
    o.family(
        "claude_pipeline_tokens_total",
        "counter",
        "Tokens of ended jobs, by model and kind (input, output, cache_write, cache_read).",
    );
    for (key, n) in &t.tokens {
        let (model, kind) = key.rsplit_once('|').unwrap_or((key, ""));
        o.sample(
            "claude_pipeline_tokens_total",
            &[("model", model), ("kind", kind)],
            n,
        );
    }
    o.family(
        "claude_pipeline_cost_usd_total",
        "counter",
        "What ended jobs cost, in US dollars (the catalog's prices), by model.",
    );
    for (model, micros) in &t.cost_micros {
        o.sample(
            "claude_pipeline_cost_usd_total",
            &[("model", model)],
            dollars(*micros),
        );
    }
    if let Some(m) = s.latest {
        o.family(
            "claude_pipeline_budget_use_ratio",
            "gauge",
            "Share of each per-minute limit the token budget charged over the last metrics window (1 = at the limit).",
        );
        for b in &m.budget {
            for (limit, v) in [("rpm", b.rpm), ("itpm", b.itpm), ("otpm", b.otpm)] {
                o.sample(
                    "claude_pipeline_budget_use_ratio",
                    &[("class", &b.class), ("limit", limit)],
                    v,
                );
            }
        }
        o.family(
            "claude_pipeline_oldest_pending_seconds",
            "gauge",
            "Age of the oldest job waiting, by path and state (sync: waiting for its call; batch: accumulating, or inside a Message Batch).",
        );
        let mut oldest = |path: &str, state: &str, ms: Option<i64>| {
            o.sample(
                "claude_pipeline_oldest_pending_seconds",
                &[("path", path), ("state", state)],
                ms.unwrap_or(0) as f64 / 1000.0,
            );
        };
        if let Some(sync) = &m.sync {
            oldest("sync", "waiting", sync.oldest_waiting_ms);
        }
        if let Some(batch) = &m.batch {
            oldest("batch", "accumulating", batch.oldest_accumulating_ms);
            oldest("batch", "submitted", batch.oldest_submitted_ms);
        }
        o.family(
            "claude_pipeline_slo_warning",
            "gauge",
            "1 for each per-path SLO the latest metrics row crosses.",
        );
        for w in m.warnings() {
            o.sample(
                "claude_pipeline_slo_warning",
                &[("path", &w.path), ("metric", &w.metric)],
                1,
            );
        }
        o.family(
            "claude_pipeline_metrics_timestamp_seconds",
            "gauge",
            "When the cron wrote the latest metrics row (a stale value means the cron stopped).",
        );
        o.sample(
            "claude_pipeline_metrics_timestamp_seconds",
            &[],
            m.at as f64 / 1000.0,
        );
    }
    o.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dto::SpendColumns;
    use crate::money::UsdMicros;

    fn ended(status: &str, mode: &str, e2e_ms: i64, cost: u64) -> EndedJob {
        EndedJob {
            status: status.into(),
            mode: mode.into(),
            model: Some("claude-sonnet-5-5".into()),
            created_at: 0,
            started_at: Some(e2e_ms / 2),
            completed_at: e2e_ms,
            columns: SpendColumns {
                input_tokens: 10,
                output_tokens: 4,
                cache_write_tokens: 0,
                cache_read_tokens: 2,
                cost_micros: UsdMicros::new(cost),
            },
        }
    }

    #[test]
    fn totals_grow_by_each_window_and_buckets_are_cumulative() {
        let mut t = Totals::default();
        t.add(
            &[
                ended("completed", "sync", 400, 1_500_000),
                ended("failed", "sync", 10, 0),
            ],
            None,
        );
        // The next window overlaps the first: what ended before the previous row is not added
        // again.
        t.add(
            &[
                ended("completed", "sync", 400, 1_500_000),
                ended("completed", "batch", 2 * 3_600_000, 250),
            ],
            Some(401),
        );
        assert_eq!(t.ended["sync|claude-sonnet-5-5|completed"], 1);
        assert_eq!(t.ended["sync|claude-sonnet-5-5|failed"], 1);
        assert_eq!(t.tokens["claude-sonnet-5-5|input"], 30);
        assert_eq!(t.tokens["claude-sonnet-5-5|cache_read"], 6);
        assert_eq!(t.cost_micros["claude-sonnet-5-5"], 1_500_250);
        let sync = &t.end_to_end["sync"];
        assert_eq!((sync.count, sync.sum_ms), (1, 400));
        assert_eq!(sync.buckets[0], 0, "0.4 s is over 0.25 s");
        assert!(sync.buckets[1..].iter().all(|b| *b == 1));
        let batch = &t.end_to_end["batch"];
        assert_eq!(
            batch.buckets.iter().filter(|b| **b == 1).count(),
            4,
            "≤ 2 h and up"
        );
        // What the cron stores reads back the same.
        let back: Totals = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        assert_eq!(back, t);
    }

    #[test]
    fn the_text_has_help_and_type_for_every_family_and_escaped_labels() {
        let mut t = Totals::default();
        t.add(&[ended("completed", "sync", 1_200, 1_234_567)], None);
        t.ended.insert("sync|we\"ird\\model\nx|completed".into(), 2);
        let counts = [
            JobCount {
                status: "queued".into(),
                lane: "bulk".into(),
                mode: "batch".into(),
                n: 7,
            },
            JobCount {
                status: "dead_open".into(),
                lane: "all".into(),
                mode: "all".into(),
                n: 3,
            },
        ];
        let text = render(&Scrape {
            totals: &t,
            counts: &counts,
            latest: None,
            pauses: &[],
            headroom: &[crate::envelope::headroom::Peak::new(
                crate::envelope::Entry::Cron,
                crate::envelope::Figure::Subrequests,
                2_500,
                10_000,
                0,
            )],
        });
        assert!(text.contains(
            "claude_pipeline_envelope_peak_ratio{entry=\"cron\",figure=\"subrequests\"} 0.25\n"
        ));
        assert!(text.contains(
            "claude_pipeline_envelope_limit{entry=\"cron\",figure=\"subrequests\"} 10000\n"
        ));
        assert!(text
            .contains("claude_pipeline_jobs{status=\"queued\",lane=\"bulk\",path=\"batch\"} 7\n"));
        assert!(text.contains("claude_pipeline_dead_letters 3\n"));
        assert!(
            text.contains("claude_pipeline_cost_usd_total{model=\"claude-sonnet-5-5\"} 1.234567\n")
        );
        assert!(text.contains("model=\"we\\\"ird\\\\model\\nx\""), "{text}");
        assert!(text
            .contains("claude_pipeline_job_latency_seconds_bucket{path=\"sync\",le=\"+Inf\"} 1\n"));
        assert!(text.contains("claude_pipeline_job_latency_seconds_sum{path=\"sync\"} 1.2\n"));
        // Every sample's family was announced first, once.
        let mut announced = Vec::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let name = rest.split(' ').next().unwrap();
                assert!(!announced.contains(&name.to_string()), "{name} twice");
                announced.push(name.to_string());
            } else if !line.starts_with("# HELP ") {
                let name = line.split(['{', ' ']).next().unwrap();
                let family = ["_bucket", "_sum", "_count"]
                    .iter()
                    .find_map(|s| name.strip_suffix(s))
                    .filter(|f| announced.iter().any(|a| a == f))
                    .unwrap_or(name);
                assert_eq!(announced.last().map(String::as_str), Some(family), "{line}");
            }
        }
    }

    #[test]
    fn only_the_configured_token_scrapes() {
        assert!(is_scrape_token(Some("Bearer s3cret"), Some("s3cret")));
        assert!(!is_scrape_token(Some("Bearer s3cret2"), Some("s3cret")));
        assert!(!is_scrape_token(Some("s3cret"), Some("s3cret")));
        assert!(!is_scrape_token(None, Some("s3cret")));
        assert!(!is_scrape_token(Some("Bearer "), Some("")));
        assert!(!is_scrape_token(Some("Bearer x"), None));
    }
}
