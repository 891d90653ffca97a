//! Each entry point's peak use of each production limit, read from the Worker's `use:` lines
//! (one per invocation in the local stacks, `D1_STATS = "on"`): the figures of
//! `pipeline::envelope::Used` — subrequests, D1 queries, fetches, connections waiting at once,
//! wall time, the wasm memory — as shares of the limits of Cloudflare's plan. The `envelope`
//! suite prints them as the README's "Production limits" table and holds every share to
//! `pipeline::envelope::PLAN_PCT`.

use std::collections::BTreeMap;

use pipeline::envelope::{Entry, Figure, Limits, PLAN_PCT};
use serde_json::Value;

/// The highest value of one figure over an entry point's invocations, and which one it was.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Peak {
    pub value: u64,
    /// The invocation (`fetch POST /jobs`, `cron`, `queue claude-pipeline-bulk`).
    pub what: String,
}

/// One entry point's invocations and the peak of each figure.
#[derive(Debug, Clone, Default)]
pub struct Peaks {
    pub invocations: u64,
    pub figures: BTreeMap<Figure, Peak>,
}

/// The `use:` line's field for a figure.
fn field(figure: Figure) -> &'static str {
    match figure {
        Figure::Subrequests => "subrequests",
        Figure::Fetches => "fetches",
        Figure::D1Queries => "d1_queries",
        Figure::Connections => "connections_peak",
        Figure::WallMs => "wall_ms",
        Figure::MemoryBytes => "wasm_memory_bytes",
    }
}

/// One `use: {what}: {json}` line: (what, entry, the JSON).
fn parse(line: &str) -> Option<(String, Entry, Value)> {
    let rest = &line[line.find("use: ")? + "use: ".len()..];
    let brace = rest.find('{')?;
    let what = rest[..brace].trim_end().trim_end_matches(':').to_string();
    let json: Value = serde_json::from_str(&rest[brace..]).ok()?;
    let entry: Entry = serde_json::from_value(json["entry"].clone()).ok()?;
    Some((what, entry, json))
}

/// The peaks of every entry point in `lines`.
pub fn peaks(lines: &[String]) -> BTreeMap<Entry, Peaks> {
    let mut all: BTreeMap<Entry, Peaks> = BTreeMap::new();
    for (what, entry, json) in lines.iter().filter_map(|l| parse(l)) {
        let p = all.entry(entry).or_default();
        p.invocations += 1;
        for figure in Figure::ALL {
            let value = json[field(figure)].as_u64().unwrap_or(0);
            let peak = p.figures.entry(figure).or_default();
            if value > peak.value || peak.what.is_empty() {
                *peak = Peak {
                    value,
                    what: what.clone(),
                };
            }
        }
    }
    all
}

/// A figure's peak as a share of its limit, in per cent (`None`: the entry has no such limit).
pub fn share(limits: &Limits, figure: Figure, value: u64) -> Option<f64> {
    let limit = limits.get(figure)?;
    Some(100.0 * value as f64 / limit.max(1) as f64)
}

fn shown(figure: Figure, value: u64) -> String {
    match figure {
        Figure::WallMs => format!("{:.1} s", value as f64 / 1000.0),
        Figure::MemoryBytes => format!("{:.1} MiB", value as f64 / (1024.0 * 1024.0)),
        _ => value.to_string(),
    }
}

fn limit_shown(figure: Figure, limit: Option<u64>) -> String {
    match limit {
        None => "none".into(),
        Some(l) => match figure {
            Figure::WallMs => format!("{} min", l / 60_000),
            Figure::MemoryBytes => format!("{} MB", l / 1_000_000),
            _ => l.to_string(),
        },
    }
}

/// The table (markdown: a row per entry point and figure) and every share past
/// [`PLAN_PCT`], as messages.
pub fn table(
    peaks: &BTreeMap<Entry, Peaks>,
    limits: impl Fn(Entry) -> Limits,
) -> (String, Vec<String>) {
    let mut out = String::from(
        "| entry point (invocations) | figure | peak | limit | share | the invocation at the peak |\n\
         |---|---|---:|---:|---:|---|\n",
    );
    let mut over = Vec::new();
    for (entry, p) in peaks {
        let l = limits(*entry);
        for (figure, peak) in &p.figures {
            let share = share(&l, *figure, peak.value);
            out.push_str(&format!(
                "| {} ({}) | {} | {} | {} | {} | {} |\n",
                entry.as_str(),
                p.invocations,
                figure.as_str(),
                shown(*figure, peak.value),
                limit_shown(*figure, l.get(*figure)),
                share.map_or("—".into(), |s| format!("{s:.1}%")),
                peak.what,
            ));
            if share.is_some_and(|s| s > PLAN_PCT as f64) {
                over.push(format!(
                    "{} {}: {} of {} ({:.1}%, plan {PLAN_PCT}%) in {}",
                    entry.as_str(),
                    figure.as_str(),
                    peak.value,
                    l.get(*figure).unwrap_or(0),
                    share.unwrap_or(0.0),
                    peak.what
                ));
            }
        }
    }
    (out, over)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pipeline::envelope::{Configured, Plan};

    fn line(what: &str, entry: &str, subrequests: u64, conns: u64) -> String {
        format!(
            "[wrangler:info] use: {what}: {{\"entry\":\"{entry}\",\"subrequests\":{subrequests},\
             \"d1_queries\":3,\"fetches\":1,\"connections_peak\":{conns},\"wall_ms\":1200,\
             \"wasm_memory_bytes\":1310720}}"
        )
    }

    #[test]
    fn the_peak_of_each_figure_is_kept_with_its_invocation() {
        let lines = vec![
            line("cron", "cron", 700, 2),
            line("cron", "cron", 9_000, 4),
            line("fetch GET /api/health", "fetch", 5, 0),
            "use: not json".to_string(),
        ];
        let p = peaks(&lines);
        assert_eq!(p[&Entry::Cron].invocations, 2);
        assert_eq!(p[&Entry::Cron].figures[&Figure::Subrequests].value, 9_000);
        assert_eq!(
            p[&Entry::Fetch].figures[&Figure::Subrequests].what,
            "fetch GET /api/health"
        );
        let limits = |e| Limits::of(Plan::Paid, e, Configured::default()).unwrap();
        let (table, over) = table(&p, limits);
        assert!(
            table.contains("| cron (2) | subrequests | 9000 | 10000 | 90.0% | cron |"),
            "{table}"
        );
        assert!(
            table.contains("| fetch (1) | wall_ms | 1.2 s | none | — |"),
            "{table}"
        );
        assert_eq!(over.len(), 1, "{over:?}");
        assert!(
            over[0].starts_with("cron subrequests: 9000 of 10000"),
            "{over:?}"
        );
    }
}
