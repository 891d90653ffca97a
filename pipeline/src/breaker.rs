//! A circuit breaker per route and model (issue 36): when a provider's endpoint is down, five
//! exponential-backoff retries only burn the budget early — the breaker stops sending to it, so
//! that a job's next call can go to the next healthy route of its chain, and lets one probe
//! through after a cool-down to learn whether it is back.
//!
//! States, as the usual circuit-breaker pattern has them:
//! - **closed**: calls go through; a failure that says the endpoint is unwell (an overload, a
//!   5xx, a timeout, a network failure) extends a streak, any answer ends it. A streak of
//!   [`Policy::failures`] whose first failure is no older than [`Policy::window_ms`] opens it.
//! - **open**: every call is refused until [`Policy::cool_down_ms`] has passed since it opened.
//! - **half-open**: one probe at a time goes through (a probe whose outcome never comes back
//!   frees its place after [`Policy::probe_lease_ms`]); its success closes the breaker, its
//!   failure opens it again for another cool-down.
//!
//! A rate limit (429), an invalid request or a refusal is an answer from a working endpoint: it
//! ends a streak and never opens the breaker (the token budget handles rate limits).
//!
//! The state is a small serde value, so that whatever serialises the calls (the budget's
//! Durable Object) can keep one per route and model; everything here is a pure function of the
//! state, the signal and the time.

use serde::{Deserialize, Serialize};

use crate::outcome::{CallOutcome, ErrorClass};

/// When a breaker opens and how it recovers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// Failures in a row that open the breaker…
    pub failures: u32,
    /// …the first of them no older than this.
    pub window_ms: i64,
    /// How long an open breaker refuses every call before it lets a probe through.
    pub cool_down_ms: i64,
    /// How long a probe holds the half-open breaker's one place if its outcome never comes.
    pub probe_lease_ms: i64,
}

impl Default for Policy {
    /// Five failures within a minute; 30 s of cool-down; a probe's place held for as long as a
    /// call may last (the production call timeout, 120 s).
    fn default() -> Policy {
        Policy {
            failures: 5,
            window_ms: 60_000,
            cool_down_ms: 30_000,
            probe_lease_ms: 120_000,
        }
    }
}

/// What a call's outcome says about the endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    /// It answered (whatever it answered: a refusal or a 400 is an answer).
    Answered,
    /// It is unwell: an overload, a 5xx, a timeout, a network failure.
    Unwell,
    /// It refused who we are (bad or expired credentials): a configuration error, which opens
    /// the breaker at once — no streak of calls is worth making against it.
    Refused,
}

impl Signal {
    /// The signal of a call's outcome.
    pub fn of(outcome: &CallOutcome) -> Signal {
        if matches!(
            outcome,
            CallOutcome::Success | CallOutcome::Undecodable { .. }
        ) {
            return Signal::Answered;
        }
        match ErrorClass::of_outcome(outcome) {
            ErrorClass::Overloaded
            | ErrorClass::ServerError
            | ErrorClass::Timeout
            | ErrorClass::Network => Signal::Unwell,
            _ => Signal::Answered,
        }
    }
}

/// A breaker's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Breaker {
    /// Calls go through; `streak` failures in a row, the first at `since`.
    Closed { streak: u32, since: i64 },
    /// Every call refused since `at` (until the cool-down has passed).
    Open { at: i64 },
    /// Cooled down: one probe at a time; `probe` is when the one in flight was let through.
    HalfOpen { opened_at: i64, probe: Option<i64> },
}

impl Default for Breaker {
    fn default() -> Breaker {
        Breaker::Closed {
            streak: 0,
            since: 0,
        }
    }
}

/// Whether a call may go to the endpoint now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// Go: the breaker is closed.
    Call,
    /// Go, as the half-open breaker's probe: its outcome decides.
    Probe,
    /// Do not call: try another route, or wait this long before asking again.
    Refuse { retry_in_ms: i64 },
}

/// What an outcome changed, for the log and the alerts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    Opened,
    Closed,
    /// A probe failed: open for another cool-down.
    Reopened,
}

/// How a breaker looks from outside, for the Dashboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Closed,
    Open,
    HalfOpen,
}

impl Breaker {
    /// Its phase at `now` (an open breaker whose cool-down has passed is half-open).
    pub fn phase(&self, now: i64, p: &Policy) -> Phase {
        match *self {
            Breaker::Closed { .. } => Phase::Closed,
            Breaker::Open { at } if now - at < p.cool_down_ms => Phase::Open,
            Breaker::Open { .. } | Breaker::HalfOpen { .. } => Phase::HalfOpen,
        }
    }

    /// Asks to call at `now`: a closed breaker lets it through, an open one refuses it until
    /// its cool-down has passed, a half-open one lets one probe through at a time.
    pub fn admit(&mut self, now: i64, p: &Policy) -> Admit {
        match *self {
            Breaker::Closed { .. } => Admit::Call,
            Breaker::Open { at } => {
                let left = at + p.cool_down_ms - now;
                if left > 0 {
                    return Admit::Refuse { retry_in_ms: left };
                }
                *self = Breaker::HalfOpen {
                    opened_at: at,
                    probe: Some(now),
                };
                Admit::Probe
            }
            Breaker::HalfOpen { opened_at, probe } => match probe {
                Some(t) if now - t < p.probe_lease_ms => Admit::Refuse {
                    retry_in_ms: t + p.probe_lease_ms - now,
                },
                _ => {
                    *self = Breaker::HalfOpen {
                        opened_at,
                        probe: Some(now),
                    };
                    Admit::Probe
                }
            },
        }
    }

    /// Records a call's outcome at `now`; answers what it changed.
    pub fn record(&mut self, signal: Signal, now: i64, p: &Policy) -> Option<Change> {
        match (*self, signal) {
            (Breaker::Closed { .. }, Signal::Answered) => {
                *self = Breaker::default();
                None
            }
            (Breaker::Closed { .. }, Signal::Refused) => {
                *self = Breaker::Open { at: now };
                Some(Change::Opened)
            }
            (Breaker::Closed { streak, since }, Signal::Unwell) => {
                let (streak, since) = if streak == 0 || now - since > p.window_ms {
                    (1, now)
                } else {
                    (streak + 1, since)
                };
                if streak >= p.failures {
                    *self = Breaker::Open { at: now };
                    Some(Change::Opened)
                } else {
                    *self = Breaker::Closed { streak, since };
                    None
                }
            }
            // A late outcome of a call let through before the breaker opened changes nothing:
            // only a probe's outcome decides an open breaker's fate.
            (Breaker::Open { .. }, _) => None,
            (Breaker::HalfOpen { .. }, Signal::Answered) => {
                *self = Breaker::default();
                Some(Change::Closed)
            }
            (Breaker::HalfOpen { .. }, Signal::Unwell | Signal::Refused) => {
                *self = Breaker::Open { at: now };
                Some(Change::Reopened)
            }
        }
    }
}

#[cfg(test)]
mod tests;
