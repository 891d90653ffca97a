//! What the consumers send the budget and what it answers: reservations, grants, the
//! provider's reported limits, settlements.

use serde::{Deserialize, Serialize};

use super::bucket::{Family, Need};
use crate::breaker::Signal;
use crate::models::providers::Provider;
use crate::status::Lane;

/// The model class whose limits a model shares, pooled as the provider pools them: the
/// catalog's rate-limit group (an alias and its snapshot are one class; Opus 4.8 … 4.5 share
/// one pool), or the model itself when the catalog does not know it.
pub fn class_of(model: &str) -> String {
    crate::models::find(model)
        .map(|m| m.rate_group.to_owned())
        .unwrap_or_else(|| model.to_owned())
}

/// The budget's class of `model` on `route`: each route has its own limits, so the same
/// model's class on another route is another class (the Anthropic API's keeps its plain name).
pub fn class_on(route: Provider, model: &str) -> String {
    match route {
        Provider::Anthropic => class_of(model),
        other => format!("{}:{}", other.as_str(), class_of(model)),
    }
}

/// A request for a reservation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reserve {
    pub job_id: String,
    pub lane: Lane,
    pub model: String,
    pub need: Need,
    pub ttl_ms: i64,
    /// Whose job it is: what it is granted counts in that user's share ([`crate::fair`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The routes that can serve the call, in failover order ([`crate::provider`]); empty: the
    /// Anthropic API alone. With more than one, the first whose breaker lets a call through
    /// is reserved on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<Provider>,
}

/// The answer to a reservation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    pub granted: bool,
    /// When refused: when it will fit.
    pub retry_after_ms: u64,
    /// When refused: what was short (`lane`, `paused`, `requests`, `input_tokens`,
    /// `output_tokens`, `breaker`: every route's breaker is open).
    pub limited_by: Option<String>,
    /// When granted: the route the call goes to.
    #[serde(default)]
    pub route: Provider,
    /// When granted: the call is its route's half-open breaker's probe.
    #[serde(default)]
    pub probe: bool,
}

impl Grant {
    /// Granted on `route`.
    pub fn on(route: Provider, probe: bool) -> Grant {
        Grant {
            granted: true,
            retry_after_ms: 0,
            limited_by: None,
            route,
            probe,
        }
    }

    /// Refused: `short` was short, for `retry_after_ms`.
    pub fn refused(retry_after_ms: u64, short: &str) -> Grant {
        Grant {
            granted: false,
            retry_after_ms,
            limited_by: Some(short.to_owned()),
            route: Provider::Anthropic,
            probe: false,
        }
    }
}

/// One limit family as the provider reported it on an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reported {
    pub family: Family,
    pub limit: Option<u64>,
    pub remaining: Option<u64>,
    /// Epoch ms.
    pub reset_at: Option<i64>,
}

/// Reads the `anthropic-ratelimit-*` headers of an answer.
pub fn reported(get: impl Fn(&str) -> Option<String>) -> Vec<Reported> {
    let num = |name: String| get(&name).and_then(|v| v.trim().parse::<u64>().ok());
    Family::ALL
        .iter()
        .filter_map(|&family| {
            let h = family.header();
            let r = Reported {
                family,
                limit: num(format!("{h}-limit")),
                remaining: num(format!("{h}-remaining")),
                reset_at: get(&format!("{h}-reset"))
                    .and_then(|v| crate::clock::parse_rfc3339(v.trim())),
            };
            (r.limit.is_some() || r.remaining.is_some() || r.reset_at.is_some()).then_some(r)
        })
        .collect()
}

/// How a reserved call ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settle {
    pub job_id: String,
    /// The model that answered (after a fallback, maybe not the one reserved).
    pub model: Option<String>,
    /// What the call used, if it was answered; `None` refunds the tokens (an error answer
    /// is not billed). The request itself stays counted.
    pub used: Option<Need>,
    /// The provider's rate-limit headers.
    #[serde(default)]
    pub reported: Vec<Reported>,
    /// A 429: its `retry-after`, in seconds.
    pub rate_limited_for_s: Option<u32>,
    /// The route the call went to.
    #[serde(default)]
    pub route: Provider,
    /// What the call's outcome tells the route's breaker (`None`: no call was made).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<Signal>,
}

impl Settle {
    /// No call was made (the job was not claimed, or was answered before): the tokens go back.
    pub fn unused(job_id: &str, model: &str) -> Settle {
        Settle {
            job_id: job_id.to_owned(),
            model: Some(model.to_owned()),
            used: None,
            reported: Vec::new(),
            rate_limited_for_s: None,
            route: Provider::Anthropic,
            signal: None,
        }
    }

    /// After a Messages call for `model` on `route`: on an answer, its usage and the model that
    /// answered; on a 429, its `retry-after`; whatever rate-limit headers came back; and what
    /// the outcome tells the route's breaker.
    pub fn after_call(
        job_id: &str,
        (route, model): (Provider, &str),
        result: &Result<crate::anthropic::Message, crate::outcome::CallOutcome>,
        reported: Vec<Reported>,
    ) -> Settle {
        let mut s = Settle::unused(job_id, model);
        s.reported = reported;
        s.route = route;
        s.signal = Some(match result {
            Ok(_) => Signal::Answered,
            Err(e) => crate::provider::signal(route, e),
        });
        match result {
            Ok(m) => {
                s.used = Some(Need::used(&m.usage));
                s.model = Some(m.model.clone());
            }
            Err(crate::outcome::CallOutcome::Http {
                status: 429,
                retry_after_s,
                ..
            }) => s.rate_limited_for_s = *retry_after_s,
            // Answered and billed though unreadable: its usage counts, as far as it can be read.
            Err(crate::outcome::CallOutcome::Undecodable { raw, .. }) => {
                s.used = crate::anthropic::Usage::from_raw_answer(raw).map(|u| Need::used(&u));
            }
            Err(_) => {}
        }
        s
    }
}
