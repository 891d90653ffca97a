//! The routes as configured: `ROUTES` names them in the order a job falls over to them, the
//! Anthropic API first; each other route's place comes from its own vars.
//!
//! | var | meaning | default |
//! |---|---|---|
//! | `ROUTES` | `anthropic`, then any of `bedrock`, `vertex`, comma-separated | `anthropic` |
//! | `BEDROCK_REGION` | the region whose `bedrock-runtime` endpoint is called | required |
//! | `BEDROCK_PROFILE` | the inference profile's geography: `global`, `us`, `eu`, `jp`, `apac`, `au` | `global` |
//! | `BEDROCK_BASE_URL` | another host (the simulator) | `https://bedrock-runtime.{region}.amazonaws.com` |
//! | `VERTEX_PROJECT` | the Google Cloud project | required |
//! | `VERTEX_LOCATION` | `global`, `us`, `eu` or a region | `global` |
//! | `VERTEX_BASE_URL` | another host (the simulator) | from the location |
//!
//! The credentials are secrets, checked by the Worker: `AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY` (and `AWS_SESSION_TOKEN` for temporary keys); `VERTEX_ACCESS_TOKEN`.

use super::route::{lacks, Endpoint, Needs, Route};
use crate::models::providers::Provider;
use crate::models::Model;

/// Bedrock's inference profile geographies (claude-on-amazon-bedrock-legacy's table: global,
/// us, eu, jp, apac; AWS's own list adds au).
pub const BEDROCK_PROFILES: [&str; 6] = ["global", "us", "eu", "jp", "apac", "au"];

/// The configured routes, the primary (the Anthropic API) first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Routes(Vec<Route>);

impl Routes {
    /// Only the Anthropic API, at `anthropic_base_url`.
    pub fn anthropic_only(anthropic_base_url: &str) -> Routes {
        Routes(vec![Route {
            endpoint: Endpoint::Anthropic,
            base_url: anthropic_base_url.trim_end_matches('/').to_owned(),
        }])
    }

    /// Reads the vars of the table above (`get` answers a var's value).
    pub fn from_vars(
        anthropic_base_url: &str,
        get: impl Fn(&str) -> Option<String>,
    ) -> Result<Routes, String> {
        let listed = get("ROUTES").unwrap_or_else(|| "anthropic".into());
        let mut names = listed.split(',').map(str::trim).filter(|s| !s.is_empty());
        if names.next() != Some("anthropic") {
            return Err(format!(
                "ROUTES must start with `anthropic` (the primary), found {listed:?}"
            ));
        }
        let mut routes = Routes::anthropic_only(anthropic_base_url);
        for name in names {
            let provider = Provider::parse(name).ok_or_else(|| {
                format!("ROUTES: unknown route {name:?} (anthropic, bedrock, vertex)")
            })?;
            if routes.get(provider).is_some() {
                return Err(format!("ROUTES names {name} twice"));
            }
            routes.0.push(match provider {
                Provider::Bedrock => bedrock(&get)?,
                Provider::Vertex => vertex(&get)?,
                Provider::Anthropic => unreachable!("checked first"),
            });
        }
        Ok(routes)
    }

    pub fn primary(&self) -> &Route {
        &self.0[0]
    }

    pub fn get(&self, provider: Provider) -> Option<&Route> {
        self.0.iter().find(|r| r.provider() == provider)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Route> {
        self.0.iter()
    }

    /// Whether a route besides the Anthropic API is configured.
    pub fn has_failover(&self) -> bool {
        self.0.len() > 1
    }

    /// The routes that can serve a request for `model` needing `needs`, in failover order.
    pub fn candidates(&self, model: &Model, needs: Needs) -> Vec<Provider> {
        self.0
            .iter()
            .map(Route::provider)
            .filter(|&p| lacks(p, model, needs).is_none())
            .collect()
    }
}

fn required(get: &impl Fn(&str) -> Option<String>, var: &str) -> Result<String, String> {
    get(var)
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
        .ok_or_else(|| format!("{var} is required when ROUTES names its route"))
}

/// A region, location or project as the providers spell them: lower-case letters, digits and
/// dashes (what also keeps it safe in a host name and a path).
fn plain(var: &str, value: String) -> Result<String, String> {
    let ok = !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if ok {
        Ok(value)
    } else {
        Err(format!(
            "{var}: {value:?} is not a name (lower-case letters, digits, dashes)"
        ))
    }
}

fn base_url(get: &impl Fn(&str) -> Option<String>, var: &str, default: String) -> String {
    get(var)
        .map(|v| v.trim().trim_end_matches('/').to_owned())
        .filter(|v| !v.is_empty())
        .unwrap_or(default)
}

fn bedrock(get: &impl Fn(&str) -> Option<String>) -> Result<Route, String> {
    let region = plain("BEDROCK_REGION", required(get, "BEDROCK_REGION")?)?;
    let profile = get("BEDROCK_PROFILE").unwrap_or_else(|| "global".into());
    let profile = profile.trim().to_owned();
    if !BEDROCK_PROFILES.contains(&profile.as_str()) {
        return Err(format!(
            "BEDROCK_PROFILE: {profile:?} is not one of {}",
            BEDROCK_PROFILES.join(", ")
        ));
    }
    let default = format!("https://bedrock-runtime.{region}.amazonaws.com");
    Ok(Route {
        base_url: base_url(get, "BEDROCK_BASE_URL", default),
        endpoint: Endpoint::Bedrock { region, profile },
    })
}

fn vertex(get: &impl Fn(&str) -> Option<String>) -> Result<Route, String> {
    let project = plain("VERTEX_PROJECT", required(get, "VERTEX_PROJECT")?)?;
    let location = get("VERTEX_LOCATION").unwrap_or_else(|| "global".into());
    let location = plain("VERTEX_LOCATION", location.trim().to_owned())?;
    let default = match location.as_str() {
        "global" => "https://aiplatform.googleapis.com".to_owned(),
        "us" | "eu" => format!("https://aiplatform.{location}.rep.googleapis.com"),
        region => format!("https://{region}-aiplatform.googleapis.com"),
    };
    Ok(Route {
        base_url: base_url(get, "VERTEX_BASE_URL", default),
        endpoint: Endpoint::Vertex { project, location },
    })
}
