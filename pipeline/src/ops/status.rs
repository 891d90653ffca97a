//! The Dashboard's status line (issue 34, part 5): is anything wrong, where, since when — one
//! line an operator reads first during an incident. Each item names the Dashboard section that
//! explains it, so the line links there.

use serde::{Deserialize, Serialize};

use super::metrics::MetricsReport;
use crate::envelope::PLAN_PCT;
use crate::pause::PauseList;

/// A Dashboard section an item points at (its anchor, `#<id>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    Paths,
    DeadLetters,
    Headroom,
    Models,
    Routes,
    Controls,
}

impl Section {
    /// The anchor of the section (or, for dead letters, the page that triages them).
    pub fn href(self) -> &'static str {
        match self {
            Section::Paths => "#paths",
            Section::DeadLetters => "/ui/dead-letters",
            Section::Headroom => "#headroom",
            Section::Models => "#models",
            Section::Routes => "#routes",
            Section::Controls => "#controls",
        }
    }
}

/// One thing that is wrong (or held back), and since when if known (epoch ms).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatusItem {
    pub section: Section,
    pub text: String,
    pub since: Option<i64>,
}

/// Each breaker not closed (issue 36): its route's calls for that model go to the next route,
/// or wait when there is none.
pub fn route_items(routes: &super::route_health::RoutesReport) -> Vec<StatusItem> {
    routes
        .routes
        .iter()
        .flat_map(|r| {
            r.breakers
                .iter()
                .filter(|b| b.phase != crate::breaker::Phase::Closed)
                .map(move |b| StatusItem {
                    section: Section::Routes,
                    text: format!(
                        "{}: breaker {} for {}",
                        r.name,
                        match b.phase {
                            crate::breaker::Phase::HalfOpen => "half-open (probing)",
                            _ => "open",
                        },
                        b.model
                    ),
                    since: b.open_since,
                })
        })
        .collect()
}

/// The line: nothing (all clear), or the items, most urgent first.
pub fn status_line(report: &MetricsReport, pauses: &PauseList) -> Vec<StatusItem> {
    let mut items = Vec::new();
    let dead = report.latest.as_ref().map_or(0, |m| m.dead_letters_now);
    if dead > 0 {
        items.push(StatusItem {
            section: Section::DeadLetters,
            text: format!(
                "{dead} open dead letter{}",
                if dead == 1 { "" } else { "s" }
            ),
            since: None,
        });
    }
    for w in &report.warnings {
        let section = match w.path.as_str() {
            "models" => Section::Models,
            _ => Section::Paths,
        };
        items.push(StatusItem {
            section,
            text: w.message.clone(),
            since: None,
        });
    }
    for p in &report.headroom {
        if p.share_pct >= PLAN_PCT as f64 {
            items.push(StatusItem {
                section: Section::Headroom,
                text: format!(
                    "{} {} at {}% of its production limit",
                    p.entry.as_str(),
                    p.figure.as_str().replace('_', " "),
                    crate::decimal::fixed(p.share_pct, 0)
                ),
                since: Some(p.at_ms),
            });
        }
    }
    for p in &pauses.items {
        items.push(StatusItem {
            section: Section::Controls,
            text: format!(
                "{} {} paused by {}{}",
                p.scope.as_str(),
                p.value,
                p.paused_by,
                p.reason
                    .as_deref()
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default()
            ),
            since: Some(p.paused_at),
        });
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::metrics::Warning;
    use crate::pause::{Pause, Scope};

    fn report() -> MetricsReport {
        serde_json::from_value(serde_json::json!({
            "latest": null, "warnings": [], "series": [], "dlq_alert_threshold": 10
        }))
        .unwrap()
    }

    #[test]
    fn all_clear_is_an_empty_line() {
        assert!(status_line(&report(), &PauseList { items: vec![] }).is_empty());
    }

    #[test]
    fn warnings_and_pauses_each_point_at_their_section() {
        let mut r = report();
        r.warnings
            .push(Warning::model("model x retires soon".into()));
        let pauses = PauseList {
            items: vec![Pause {
                scope: Scope::Lane,
                value: "bulk".into(),
                reason: Some("incident 42".into()),
                paused_by: "ana".into(),
                paused_at: 1_000,
            }],
        };
        let line = status_line(&r, &pauses);
        assert_eq!(line.len(), 2);
        assert_eq!(line[0].section, Section::Models);
        assert_eq!(line[1].section.href(), "#controls");
        assert_eq!(line[1].text, "lane bulk paused by ana: incident 42");
        assert_eq!(line[1].since, Some(1_000));
    }

    #[test]
    fn a_breaker_not_closed_is_a_status_item_linking_to_the_routes() {
        use crate::breaker::Phase;
        use crate::budget::BreakerView;
        use crate::models::providers::Provider;
        let breaker = |phase| BreakerView {
            route: Provider::Anthropic,
            model: "claude-sonnet-5-5".into(),
            phase,
            streak: 0,
            open_since: Some(7),
        };
        let routes = |phase| {
            super::super::route_health::report(
                &[(Provider::Anthropic, false)],
                &[breaker(phase)],
                &[],
                &[],
            )
        };
        assert!(route_items(&routes(Phase::Closed)).is_empty());
        let items = route_items(&routes(Phase::Open));
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].section.href(), "#routes");
        assert_eq!(
            items[0].text,
            "Anthropic API: breaker open for claude-sonnet-5-5"
        );
        assert_eq!(items[0].since, Some(7));
    }
}
