//! Where else each model of the catalog is served: its id on Amazon Bedrock and on Google
//! Vertex AI (issue 36), the providers that can stand in for the Anthropic API when it is down.
//!
//! Sources (read 2026-12-07; the pages' stored copies of 2026-08-02 and 2026-09-26 where the
//! live page was out of reach):
//! - BEDROCK: platform.claude.com/docs/en/build-with-claude/claude-in-amazon-bedrock ("Model IDs
//!   in Claude in Amazon Bedrock carry an `anthropic.` provider prefix", the table of Fable 5.1 …
//!   Haiku 4.5) and …/claude-on-amazon-bedrock-legacy (the ARN-versioned base ids of Opus 4.6
//!   and earlier, "The inference profile ID is the base model ID with a prefix from a column
//!   marked \"Yes\"", and "Claude Opus 5, Claude Sonnet 5, Claude Fable 5, Claude Opus 4.8, and
//!   Claude Opus 4.7 are reachable through `InvokeModel` on `bedrock-runtime`").
//!   Sonnet 5.5: the model's what's-new page, Availability (`anthropic.claude-sonnet-5-5`).
//! - VERTEX: platform.claude.com/docs/en/build-with-claude/claude-on-vertex-ai (the "model ID"
//!   table: plain ids from Opus 4.6 on, `@YYYYMMDD` for Opus 4.5 and earlier) and Google's
//!   model cards (docs.cloud.google.com/…/partner-models/claude/sonnet-5-5, haiku-5-5:
//!   "Model ID | `claude-sonnet-5-5`", "`claude-haiku-5-5`").
//!
//! Ids no official page gave us are marked `assumed` below (Haiku 5.5 and Fable 5.2 on Bedrock
//! follow the `anthropic.` + API id pattern of every 5.x row; Fable 5.2 on Vertex the plain id
//! of every 5.x row) and are served by `GET /api/models` as such. Mythos 5.2 is on neither
//! provider by any page read, so it has no id there and its jobs never leave the Anthropic API.

use serde::{Deserialize, Serialize};

/// A provider that serves Claude: the Anthropic API itself, or a cloud that resells it.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Provider {
    #[default]
    Anthropic,
    Bedrock,
    Vertex,
}

impl Provider {
    pub const ALL: [Provider; 3] = [Provider::Anthropic, Provider::Bedrock, Provider::Vertex];

    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Anthropic => "anthropic",
            Provider::Bedrock => "bedrock",
            Provider::Vertex => "vertex",
        }
    }

    pub fn parse(s: &str) -> Option<Provider> {
        Provider::ALL.into_iter().find(|p| p.as_str() == s)
    }

    /// How people name it.
    pub fn display_name(self) -> &'static str {
        match self {
            Provider::Anthropic => "Anthropic API",
            Provider::Bedrock => "Amazon Bedrock",
            Provider::Vertex => "Google Vertex AI",
        }
    }
}

/// A model's ids off the Anthropic API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elsewhere {
    /// The catalog's id.
    pub model: &'static str,
    /// Bedrock's base model id (an inference profile's prefix goes in front of it).
    pub bedrock: Option<&'static str>,
    /// Vertex AI's model id (it goes in the URL).
    pub vertex: Option<&'static str>,
    /// Whether an id was taken from the pattern of its neighbours, not read on a page.
    pub assumed: bool,
}

const fn row(
    model: &'static str,
    bedrock: &'static str,
    vertex: &'static str,
    assumed: bool,
) -> Elsewhere {
    Elsewhere {
        model,
        bedrock: Some(bedrock),
        vertex: Some(vertex),
        assumed,
    }
}

/// Every catalog model served elsewhere; a model not listed is Anthropic-only.
pub const ELSEWHERE: &[Elsewhere] = &[
    row(
        "claude-fable-5-2",
        "anthropic.claude-fable-5-2",
        "claude-fable-5-2",
        true,
    ),
    row(
        "claude-opus-5-5",
        "anthropic.claude-opus-5-5",
        "claude-opus-5-5",
        false,
    ),
    row(
        "claude-sonnet-5-5",
        "anthropic.claude-sonnet-5-5",
        "claude-sonnet-5-5",
        false,
    ),
    row(
        "claude-haiku-5-5",
        "anthropic.claude-haiku-5-5",
        "claude-haiku-5-5",
        true,
    ),
    row(
        "claude-fable-5-1",
        "anthropic.claude-fable-5-1",
        "claude-fable-5-1",
        false,
    ),
    row(
        "claude-mythos-5-1",
        "anthropic.claude-mythos-5-1",
        "claude-mythos-5-1",
        false,
    ),
    row(
        "claude-fable-5",
        "anthropic.claude-fable-5",
        "claude-fable-5",
        false,
    ),
    row(
        "claude-mythos-5",
        "anthropic.claude-mythos-5",
        "claude-mythos-5",
        false,
    ),
    row(
        "claude-opus-5",
        "anthropic.claude-opus-5",
        "claude-opus-5",
        false,
    ),
    row(
        "claude-sonnet-5",
        "anthropic.claude-sonnet-5",
        "claude-sonnet-5",
        false,
    ),
    row(
        "claude-opus-4-8",
        "anthropic.claude-opus-4-8",
        "claude-opus-4-8",
        false,
    ),
    row(
        "claude-opus-4-7",
        "anthropic.claude-opus-4-7",
        "claude-opus-4-7",
        false,
    ),
    row(
        "claude-opus-4-6",
        "anthropic.claude-opus-4-6-v1",
        "claude-opus-4-6",
        false,
    ),
    row(
        "claude-sonnet-4-6",
        "anthropic.claude-sonnet-4-6",
        "claude-sonnet-4-6",
        false,
    ),
    row(
        "claude-opus-4-5-20251101",
        "anthropic.claude-opus-4-5-20251101-v1:0",
        "claude-opus-4-5@20251101",
        false,
    ),
    row(
        "claude-haiku-4-5-20251001",
        "anthropic.claude-haiku-4-5-20251001-v1:0",
        "claude-haiku-4-5@20251001",
        false,
    ),
    row(
        "claude-sonnet-4-5-20250929",
        "anthropic.claude-sonnet-4-5-20250929-v1:0",
        "claude-sonnet-4-5@20250929",
        false,
    ),
];

impl super::Model {
    /// The model's id on `provider`: its own id on the Anthropic API; `None` where the provider
    /// does not serve it.
    pub fn id_on(&self, provider: Provider) -> Option<&'static str> {
        if provider == Provider::Anthropic {
            return Some(self.id);
        }
        let row = ELSEWHERE.iter().find(|e| e.model == self.id)?;
        match provider {
            Provider::Anthropic => Some(self.id),
            Provider::Bedrock => row.bedrock,
            Provider::Vertex => row.vertex,
        }
    }

    /// Whether an id of the model off the Anthropic API is assumed rather than read.
    pub fn elsewhere_assumed(&self) -> bool {
        ELSEWHERE.iter().any(|e| e.model == self.id && e.assumed)
    }
}

/// The catalog model a provider's id names (the inverse of [`super::Model::id_on`]; an
/// inference profile's geography prefix is read past).
pub fn model_of(provider: Provider, id: &str) -> Option<&'static super::Model> {
    if provider == Provider::Anthropic {
        return super::find(id);
    }
    let base = match provider {
        Provider::Bedrock => id.split_once('.').map_or(id, |(head, rest)| {
            // `global.anthropic.…`, `us.anthropic.…`: the profile's prefix goes.
            if head == "anthropic" {
                id
            } else {
                rest
            }
        }),
        _ => id,
    };
    let row = ELSEWHERE.iter().find(|e| match provider {
        Provider::Bedrock => e.bedrock == Some(base),
        Provider::Vertex => e.vertex == Some(base),
        Provider::Anthropic => false,
    })?;
    super::find(row.model)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_names_a_catalog_model_once() {
        for e in ELSEWHERE {
            assert!(super::super::find(e.model).is_some(), "{}", e.model);
            let n = ELSEWHERE.iter().filter(|o| o.model == e.model).count();
            assert_eq!(n, 1, "{}", e.model);
        }
    }

    #[test]
    fn ids_round_trip_through_each_provider() {
        for e in ELSEWHERE {
            let m = super::super::find(e.model).unwrap();
            for p in Provider::ALL {
                let id = m.id_on(p).unwrap();
                assert_eq!(model_of(p, id).map(|m| m.id), Some(e.model), "{p:?} {id}");
            }
        }
        let m = model_of(Provider::Bedrock, "global.anthropic.claude-sonnet-5-5").unwrap();
        assert_eq!(m.id, "claude-sonnet-5-5");
        let m = model_of(Provider::Bedrock, "us.anthropic.claude-opus-4-6-v1").unwrap();
        assert_eq!(m.id, "claude-opus-4-6");
    }

    #[test]
    fn mythos_5_2_stays_on_the_anthropic_api() {
        let m = super::super::find("claude-mythos-5-2").unwrap();
        assert_eq!(m.id_on(Provider::Anthropic), Some("claude-mythos-5-2"));
        assert_eq!(m.id_on(Provider::Bedrock), None);
        assert_eq!(m.id_on(Provider::Vertex), None);
    }
}
