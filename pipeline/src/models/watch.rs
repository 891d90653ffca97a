//! The catalog watches the API (issue 33, part 6): what `GET /v1/models` lists, compared with
//! the catalog. The Models API (platform.claude.com/docs/en/api/models/list, read 2026-12-06)
//! pages with `limit` (default 20, "Ranges from `1` to `1000`") and `after_id`, newest first,
//! and answers `data`, `has_more`, `first_id` and `last_id`; each `ModelInfo` has `id`,
//! `display_name`, `created_at`, `max_input_tokens`, `max_tokens` and `capabilities`.
//!
//! A model listed there and unknown here is a notice (available, not usable until the catalog
//! knows its prices); a current catalog model no longer listed is a warning, and jobs naming it
//! are refused before any call; a model past its deprecation date is flagged with its
//! retirement date; a limit or capability the API states differently is a warning.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{find, Model, CATALOG};

/// The most models one page asks for (the API's maximum).
pub const PAGE_LIMIT: u32 = 1_000;
/// Pages one check reads at most (5,000 models).
pub const MAX_PAGES: usize = 5;
/// How often the cron checks.
pub const EVERY_MS: i64 = 24 * 3_600_000;

/// One `ModelInfo` of the list, as far as the watch reads it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ListedModel {
    pub id: String,
    #[serde(default)]
    pub display_name: Option<String>,
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub max_input_tokens: Option<u64>,
    #[serde(default)]
    pub max_tokens: Option<u64>,
    #[serde(default)]
    pub capabilities: Option<Value>,
}

/// One page of `GET /v1/models`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ModelsPage {
    pub data: Vec<ListedModel>,
    #[serde(default)]
    pub has_more: bool,
    #[serde(default)]
    pub last_id: Option<String>,
}

impl ModelsPage {
    /// The `after_id` of the next page, when there is one.
    pub fn next(&self) -> Option<&str> {
        self.last_id.as_deref().filter(|_| self.has_more)
    }
}

/// The query of a page after `after` (`None`: the first).
pub fn page_query(after: Option<&str>) -> String {
    match after {
        Some(id) => format!("limit={PAGE_LIMIT}&after_id={id}"),
        None => format!("limit={PAGE_LIMIT}"),
    }
}

/// A model the API lists and the catalog does not know.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NewModel {
    pub id: String,
    pub display_name: Option<String>,
    pub created_at: Option<String>,
}

/// A figure the API states differently from the catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Difference {
    pub model: String,
    pub field: String,
    pub catalog: String,
    pub api: String,
}

/// What one check found (kept as the `models_watch` heartbeat's detail).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WatchReport {
    /// When the list was read (epoch ms).
    pub checked_at: i64,
    /// Models the API listed.
    pub listed: u32,
    /// Listed by the API, unknown to the catalog.
    pub unknown: Vec<NewModel>,
    /// Current in the catalog, no longer listed by the API: jobs naming them are refused.
    pub missing: Vec<String>,
    /// Limits and capabilities the API states differently.
    pub differences: Vec<Difference>,
    /// Set when the list could not be read in full: nothing above is new.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Compares the models the API lists with the catalog at `now_ms`.
pub fn compare(listed: &[ListedModel], now_ms: i64) -> WatchReport {
    let unknown = listed
        .iter()
        .filter(|l| find(&l.id).is_none())
        .map(|l| NewModel {
            id: l.id.clone(),
            display_name: l.display_name.clone(),
            created_at: l.created_at.clone(),
        })
        .collect();
    let missing = CATALOG
        .iter()
        .filter(|m| !m.is_retired(now_ms))
        .filter(|m| !listed.iter().any(|l| m.is_named(&l.id)))
        .map(|m| m.id.to_owned())
        .collect();
    let differences = listed
        .iter()
        .filter_map(|l| find(&l.id).map(|m| (l, m)))
        .flat_map(|(l, m)| differences(l, m))
        .collect();
    WatchReport {
        checked_at: now_ms,
        listed: listed.len() as u32,
        unknown,
        missing,
        differences,
        error: None,
    }
}

/// The figures of `l` that differ from `m`'s.
fn differences(l: &ListedModel, m: &Model) -> Vec<Difference> {
    let mut out = Vec::new();
    let mut differ = |field: &str, catalog: String, api: Option<String>| {
        if let Some(api) = api.filter(|a| *a != catalog) {
            out.push(Difference {
                model: m.id.to_owned(),
                field: field.to_owned(),
                catalog,
                api,
            });
        }
    };
    differ(
        "max_input_tokens",
        m.context_window.to_string(),
        l.max_input_tokens.map(|n| n.to_string()),
    );
    differ(
        "max_tokens",
        m.max_output.to_string(),
        l.max_tokens.map(|n| n.to_string()),
    );
    let supported = |path: &[&str]| -> Option<bool> {
        let mut v = l.capabilities.as_ref()?;
        for p in path {
            v = v.get(p)?;
        }
        v.get("supported")?.as_bool()
    };
    differ(
        "capabilities.structured_outputs",
        m.structured_outputs.to_string(),
        supported(&["structured_outputs"]).map(|b| b.to_string()),
    );
    let efforts: Vec<&str> = m.efforts.iter().map(|e| e.as_str()).collect();
    let listed_efforts = l
        .capabilities
        .as_ref()
        .and_then(|c| c.get("effort"))
        .map(|_| {
            crate::anthropic::Effort::ALL
                .iter()
                .map(|e| e.as_str())
                .filter(|e| supported(&["effort", e]) == Some(true))
                .collect::<Vec<_>>()
                .join(",")
        });
    differ("capabilities.effort", efforts.join(","), listed_efforts);
    out
}

impl WatchReport {
    /// Whether the API stopped listing `model` (an id or alias of the catalog): the sentence to
    /// refuse its jobs with.
    pub fn refuses(&self, model: &str) -> Option<String> {
        let m = find(model)?;
        self.missing.iter().any(|id| id == m.id).then(|| {
            format!(
                "model {} is no longer listed by the API (GET /v1/models, checked {}): it has \
                 been retired or withdrawn, and its jobs are refused before any call",
                m.id,
                crate::clock::format_rfc3339(self.checked_at)
            )
        })
    }

    /// The Dashboard's notices: one line per finding, warnings first.
    pub fn notices(&self) -> Vec<Notice> {
        let mut out: Vec<Notice> = self
            .missing
            .iter()
            .map(|id| Notice {
                level: Level::Warning,
                model: id.clone(),
                text: format!(
                    "{id} is no longer listed by the API: retired or withdrawn; jobs naming it \
                     are refused"
                ),
            })
            .collect();
        out.extend(self.differences.iter().map(|d| Notice {
            level: Level::Warning,
            model: d.model.clone(),
            text: format!(
                "{}: the API states {} = {}, the catalog {}",
                d.model, d.field, d.api, d.catalog
            ),
        }));
        out.extend(self.unknown.iter().map(|n| Notice {
            level: Level::Info,
            model: n.id.clone(),
            text: format!(
                "{} ({}) is available, not usable until the catalog knows its prices",
                n.id,
                n.display_name.as_deref().unwrap_or("no display name")
            ),
        }));
        if let Some(e) = &self.error {
            out.insert(
                0,
                Notice {
                    level: Level::Warning,
                    model: String::new(),
                    text: format!("the model list could not be read: {e}"),
                },
            );
        }
        out
    }
}

/// How much a notice matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Info,
    Warning,
}

/// One line for the Dashboard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Notice {
    pub level: Level,
    pub model: String,
    pub text: String,
}

/// A deprecated model (past its deprecation date, not retired) and this week's jobs on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DeprecatedUse {
    pub model: String,
    /// `YYYY-MM-DD`, from the catalog (each date with its page there).
    pub deprecated_on: String,
    pub retires_on: Option<String>,
    /// Jobs created on it in the last 7 UTC days (the usage rollup).
    pub jobs_this_week: u64,
}

/// Every catalog model deprecated at `now_ms` and not retired, with its jobs of the week from
/// `(model, jobs)` rows (0 when none).
pub fn deprecated_use(rows: &[(String, u64)], now_ms: i64) -> Vec<DeprecatedUse> {
    CATALOG
        .iter()
        .filter(|m| !m.is_retired(now_ms) && m.is_deprecated(now_ms))
        .map(|m| DeprecatedUse {
            model: m.id.to_owned(),
            deprecated_on: m.deprecated_on.map(super::day_text).unwrap_or_default(),
            retires_on: m.retires_on.map(super::day_text),
            jobs_this_week: rows
                .iter()
                .filter(|(id, _)| m.is_named(id))
                .map(|(_, n)| n)
                .sum(),
        })
        .collect()
}

/// The catalog watch as the API and the Dashboard show it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WatchView {
    /// The last check (`None` before the first).
    pub report: Option<WatchReport>,
    pub notices: Vec<Notice>,
    pub deprecated: Vec<DeprecatedUse>,
}

impl WatchView {
    pub fn new(report: Option<WatchReport>, deprecated: Vec<DeprecatedUse>) -> WatchView {
        WatchView {
            notices: report
                .as_ref()
                .map(WatchReport::notices)
                .unwrap_or_default(),
            report,
            deprecated,
        }
    }
}

/// Whether a check is due at `now_ms` after the last one (none: due).
pub fn due(last: Option<&WatchReport>, now_ms: i64) -> bool {
    last.is_none_or(|r| now_ms - r.checked_at >= EVERY_MS)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_796_560_000_000; // 2026-12-06

    fn listed(id: &str) -> ListedModel {
        let m = find(id).unwrap();
        ListedModel {
            id: m.id.into(),
            display_name: Some(m.display_name.into()),
            created_at: None,
            max_input_tokens: Some(m.context_window.into()),
            max_tokens: Some(m.max_output.into()),
            capabilities: None,
        }
    }

    fn everything() -> Vec<ListedModel> {
        CATALOG
            .iter()
            .filter(|m| !m.is_retired(NOW))
            .map(|m| listed(m.id))
            .collect()
    }

    #[test]
    fn the_catalog_as_listed_is_quiet() {
        let r = compare(&everything(), NOW);
        assert!(r.unknown.is_empty() && r.missing.is_empty() && r.differences.is_empty());
        assert!(r.notices().is_empty());
        assert!(r.refuses("claude-sonnet-5-5").is_none());
    }

    #[test]
    fn a_new_model_is_a_notice_and_a_dropped_one_refuses_its_jobs() {
        let mut list: Vec<_> = everything()
            .into_iter()
            .filter(|l| l.id != "claude-sonnet-5")
            .collect();
        list.push(ListedModel {
            id: "claude-nova-6".into(),
            display_name: Some("Claude Nova 6".into()),
            ..listed("claude-opus-5-5")
        });
        let r = compare(&list, NOW);
        assert_eq!(r.unknown.len(), 1);
        assert_eq!(r.unknown[0].id, "claude-nova-6");
        assert_eq!(r.missing, ["claude-sonnet-5"]);
        let why = r.refuses("claude-sonnet-5").unwrap();
        assert!(why.contains("no longer listed"), "{why}");
        let notices = r.notices();
        assert_eq!(notices[0].level, Level::Warning);
        assert!(notices
            .iter()
            .any(|n| n.level == Level::Info && n.text.contains("not usable until the catalog")));
    }

    #[test]
    fn an_alias_listed_counts_and_a_changed_limit_is_a_difference() {
        let mut list = everything();
        let haiku = list
            .iter_mut()
            .find(|l| l.id == "claude-haiku-4-5-20251001")
            .unwrap();
        haiku.id = "claude-haiku-4-5".into();
        let opus = list.iter_mut().find(|l| l.id == "claude-opus-5-5").unwrap();
        opus.max_tokens = Some(256_000);
        opus.capabilities = Some(serde_json::json!({
            "structured_outputs": {"supported": true},
            "effort": {"supported": true, "low": {"supported": true},
                "medium": {"supported": true}, "high": {"supported": true},
                "xhigh": {"supported": true}, "max": {"supported": true}}
        }));
        let r = compare(&list, NOW);
        assert!(r.missing.is_empty(), "{r:?}");
        assert_eq!(r.differences.len(), 1, "{r:?}");
        assert_eq!(r.differences[0].field, "max_tokens");
        assert_eq!(r.differences[0].api, "256000");
    }

    #[test]
    fn pages_follow_last_id_while_there_are_more_and_a_check_is_daily() {
        let page: ModelsPage = serde_json::from_value(serde_json::json!({
            "data": [{"type": "model", "id": "claude-opus-5-5"}],
            "has_more": true, "first_id": "claude-opus-5-5", "last_id": "claude-opus-5-5"
        }))
        .unwrap();
        assert_eq!(page.next(), Some("claude-opus-5-5"));
        assert_eq!(
            page_query(page.next()),
            "limit=1000&after_id=claude-opus-5-5"
        );
        assert!(due(None, NOW));
        let last = compare(&everything(), NOW);
        assert!(!due(Some(&last), NOW + 3_600_000));
        assert!(due(Some(&last), NOW + EVERY_MS));
    }
}
