//! A route: which provider, where it is reached, what it calls a model and where, what a request
//! must not need of it, what it adds to the price — and the body it is sent (`super` has the
//! pages read).

use serde::{Deserialize, Serialize};

use crate::anthropic::MessagesRequest;
use crate::models::providers::Provider;
use crate::models::Model;

/// `anthropic_version` in a Bedrock body.
pub const BEDROCK_VERSION: &str = "bedrock-2023-05-31";
/// `anthropic_version` in a Vertex AI body.
pub const VERTEX_VERSION: &str = "vertex-2023-10-16";
/// The signing name of Bedrock's runtime (botocore's service model: `"signingName":"bedrock"`).
pub const BEDROCK_SERVICE: &str = "bedrock";
/// Bedrock refuses request payloads over 20 MB (claude-on-amazon-bedrock-legacy).
pub const BEDROCK_MAX_BYTES: u64 = 20 * 1000 * 1000;
/// Vertex AI, over 30 MB (claude-on-vertex-ai: "limits request payloads to 30 MB").
pub const VERTEX_MAX_BYTES: u64 = 30 * 1000 * 1000;

/// Where a provider is reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "provider", rename_all = "snake_case")]
pub enum Endpoint {
    Anthropic,
    /// `profile`: the inference profile's geography (`global`, `us`, `eu`, `jp`, `apac`, `au`).
    Bedrock {
        region: String,
        profile: String,
    },
    /// `location`: `global`, a multi-region (`us`, `eu`) or a region (`us-east5`).
    Vertex {
        project: String,
        location: String,
    },
}

/// One route: a provider's endpoint and the base URL its calls go to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Route {
    pub endpoint: Endpoint,
    /// Scheme and host (no trailing slash): the provider's own unless configured (the
    /// simulator's, locally).
    pub base_url: String,
}

impl Route {
    pub fn provider(&self) -> Provider {
        match self.endpoint {
            Endpoint::Anthropic => Provider::Anthropic,
            Endpoint::Bedrock { .. } => Provider::Bedrock,
            Endpoint::Vertex { .. } => Provider::Vertex,
        }
    }

    /// Priced at the 10% premium of regional and multi-region endpoints (PRICING).
    pub fn regional(&self) -> bool {
        match &self.endpoint {
            Endpoint::Anthropic => false,
            Endpoint::Bedrock { profile, .. } => profile != "global",
            Endpoint::Vertex { location, .. } => location != "global",
        }
    }

    /// Thousandths of the Anthropic API's list price this route charges.
    pub fn price_permille(&self) -> u64 {
        if self.regional() {
            1_100
        } else {
            1_000
        }
    }

    /// The id `model` is called by here (Bedrock's behind its inference profile's prefix).
    pub fn model_id(&self, model: &Model) -> Option<String> {
        let id = model.id_on(self.provider())?;
        Some(match &self.endpoint {
            Endpoint::Bedrock { profile, .. } => format!("{profile}.{id}"),
            _ => id.to_owned(),
        })
    }

    /// The path of a Messages call for `model_id` (not yet percent-encoded).
    pub fn messages_path(&self, model_id: &str) -> String {
        match &self.endpoint {
            Endpoint::Anthropic => "/v1/messages".into(),
            Endpoint::Bedrock { .. } => format!("/model/{model_id}/invoke"),
            Endpoint::Vertex { project, location } => format!(
                "/v1/projects/{project}/locations/{location}/publishers/anthropic/models/\
                 {model_id}:rawPredict"
            ),
        }
    }

    /// A settlement of a call answered here: the route recorded, the cost at its price
    /// (the list price times [`Route::price_permille`], rounded half up).
    pub fn settled(&self, mut s: crate::answer::Settled) -> crate::answer::Settled {
        s.route = self.provider();
        let permille = self.price_permille();
        s.cost_micros = s
            .cost_micros
            .map(|c| crate::money::UsdMicros::new((c.micros() * permille + 500) / 1_000));
        s
    }

    /// The largest request body the route takes, where it has its own limit.
    pub fn max_body_bytes(&self) -> Option<u64> {
        match self.provider() {
            Provider::Anthropic => None,
            Provider::Bedrock => Some(BEDROCK_MAX_BYTES),
            Provider::Vertex => Some(VERTEX_MAX_BYTES),
        }
    }

    /// Whether the route takes a request carrying `inline_pdf` bytes of PDF inline (0: none),
    /// by [`inline_body_bytes`].
    pub fn takes_inline(&self, inline_pdf: u64) -> bool {
        self.max_body_bytes()
            .is_none_or(|max| inline_body_bytes(inline_pdf) <= max)
    }
}

/// What the rest of a request weighs beside an inline PDF, at most (the prompt, the system
/// prompt and the JSON around them).
pub const REQUEST_BESIDE_PDF_BYTES: u64 = 64 * 1024;

/// The body of a request carrying `pdf` bytes inline: their base64 (4 characters per 3 bytes)
/// and the rest of the request.
pub fn inline_body_bytes(pdf: u64) -> u64 {
    pdf.div_ceil(3) * 4 + REQUEST_BESIDE_PDF_BYTES
}

/// Something a route lacks that a request needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Lack {
    /// The provider does not serve the model.
    Model,
    /// The request reads a file uploaded to the Files API.
    FilesApi,
    /// The request asks for fast mode.
    FastMode,
}

/// What a request needs of a route beyond its model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Needs {
    pub files_api: bool,
    pub fast_mode: bool,
}

impl Needs {
    /// What `request` needs as it is written.
    pub fn of(request: &MessagesRequest) -> Needs {
        Needs {
            files_api: crate::anthropic::files::reads_a_file(request),
            fast_mode: request.speed == Some(crate::anthropic::Speed::Fast),
        }
    }
}

/// What `provider` lacks for a request for `model` that needs `needs`; `None`: it can serve it.
pub fn lacks(provider: Provider, model: &Model, needs: Needs) -> Option<Lack> {
    if provider == Provider::Anthropic {
        return None;
    }
    if model.id_on(provider).is_none() {
        return Some(Lack::Model);
    }
    if needs.files_api {
        return Some(Lack::FilesApi);
    }
    if needs.fast_mode {
        return Some(Lack::FastMode);
    }
    None
}

/// A Messages body for `route`: the Anthropic API's as it is; elsewhere without `model` and
/// with the provider's `anthropic_version`.
pub fn body_for(route: &Route, json: &str) -> Result<String, String> {
    let version = match route.provider() {
        Provider::Anthropic => return Ok(json.to_owned()),
        Provider::Bedrock => BEDROCK_VERSION,
        Provider::Vertex => VERTEX_VERSION,
    };
    let mut value: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(json).map_err(|e| format!("not a request: {e}"))?;
    value.remove("model");
    value.insert("anthropic_version".into(), version.into());
    serde_json::to_string(&value).map_err(|e| e.to_string())
}
