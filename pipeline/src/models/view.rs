//! `GET /api/models`: the catalog as it stands today, with the last check of the API's own list.

use serde::Serialize;

use super::watch::WatchView;
use super::{standing, Model, Price, CATALOG, DEFAULT_MODEL};

/// `GET /api/models`: the ids a job may name today, each with its limits, what it accepts, the
/// price in force and any retirement warning.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CatalogView {
    pub default: &'static str,
    pub models: Vec<CatalogEntry>,
    /// What the last check of the API's own list found (`watch`), with the deprecated
    /// models' use; filled by the Worker.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watch: Option<WatchView>,
}

/// One model of [`CatalogView`].
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CatalogEntry {
    #[serde(flatten)]
    pub model: &'static Model,
    pub price: Option<&'static Price>,
    pub warning: Option<String>,
}

/// The catalog as it stands at `now_ms` (retired models left out).
pub fn catalog_view(now_ms: i64) -> CatalogView {
    CatalogView {
        default: DEFAULT_MODEL,
        models: CATALOG
            .iter()
            .filter(|m| !m.is_retired(now_ms))
            .map(|m| CatalogEntry {
                model: m,
                price: m.price_at(now_ms),
                warning: standing(m.id, now_ms),
            })
            .collect(),
        watch: None,
    }
}
