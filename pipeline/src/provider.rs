//! Routes (issue 36): the provider endpoints a job's Messages call can go to — the Anthropic API
//! (the primary, and the only one unless others are configured), Amazon Bedrock and Google
//! Vertex AI — in the order a job falls over to them, and what each needs of a request.
//!
//! - Bedrock: `InvokeModel`, `POST /model/{modelId}/invoke` on
//!   `bedrock-runtime.{region}.amazonaws.com`, signed with AWS Signature Version 4 for the
//!   service `bedrock` ([`crate::sigv4`]); the model goes in the URL (an inference profile id:
//!   the base id of [`crate::models::providers`] behind the profile's geography,
//!   `global.anthropic.claude-sonnet-5-5`), the body is the Messages body without `model` and
//!   with `"anthropic_version": "bedrock-2023-05-31"` (platform.claude.com/docs/en/build-with-
//!   claude/claude-on-amazon-bedrock-legacy: "The inference profile ID is the base model ID with
//!   a prefix"; the body's version is the one Anthropic's own Bedrock clients send).
//! - Vertex AI: `POST …/v1/projects/{project}/locations/{location}/publishers/anthropic/models/
//!   {model}:rawPredict` with an OAuth access token; "`model` is not passed in the request body.
//!   Instead, it is specified in the Google Cloud endpoint URL" and "`anthropic_version` is passed
//!   in the request body … `vertex-2023-10-16`" (platform.claude.com/docs/en/build-with-claude/
//!   claude-on-vertex-ai). The host: `aiplatform.googleapis.com` for the `global` location,
//!   `aiplatform.{us|eu}.rep.googleapis.com` for the multi-regions, `{region}-aiplatform.
//!   googleapis.com` for a region.
//!
//! Neither has the Message Batches API or the Files API, nor fast mode (both pages' lists of
//! what is not supported; PRICING: fast mode "is not available on … partner-operated cloud
//! platforms"): batch-mode jobs and requests that read an uploaded file stay on the Anthropic API.
//! Prices: PRICING ("Cloud platform pricing"): "Regional and multi-region endpoints include a 10%
//! premium over global endpoints … Claude Sonnet 4.5, Haiku 4.5, Opus 4.5, and all future
//! models" — every model of the catalog.

pub use crate::models::providers::Provider;

mod answers;
mod config;
pub mod google;
mod route;

pub use answers::*;
pub use config::*;
pub use route::*;

#[cfg(test)]
mod tests;
