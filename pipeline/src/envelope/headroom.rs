//! The operator's headroom: each entry point's highest use of each capped figure over the last
//! day, as a share of its limit. `GET /api/metrics`, the Prometheus scrape and the Dashboard show
//! it; the closer a share is to 100%, the sooner volume breaks that entry point in production.
//!
//! Peaks are recorded at an invocation's end, and only when the invocation raised one of its
//! isolate's known peaks ([`raised`]): a warm isolate writes nothing, since most invocations do
//! less than the largest one before them. The stored peak is replaced by a higher one, or by any
//! once it is older than [`WINDOW_MS`], so the figure shown is at most a day old.

use serde::{Deserialize, Serialize};

use super::{Entry, Figure, Limits, Used};

/// How long a peak stands before any lower one replaces it.
pub const WINDOW_MS: i64 = 86_400_000;

/// How long an isolate trusts its own known peaks before it records again from zero (so a peak
/// expired from the store is recorded anew by a long-lived isolate).
pub const ISOLATE_KNOWN_MS: i64 = 3_600_000;

/// One figure's highest use by one entry point's invocations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Peak {
    pub entry: Entry,
    pub figure: Figure,
    /// The highest use (calls, connections, milliseconds or bytes).
    pub peak: u64,
    /// The limit it was measured against.
    pub limit: u64,
    /// `peak` as a share of `limit`, in per cent.
    pub share_pct: f64,
    /// When the invocation that reached it ended (ms since the epoch).
    pub at_ms: i64,
}

impl Peak {
    pub fn new(entry: Entry, figure: Figure, peak: u64, limit: u64, at_ms: i64) -> Peak {
        Peak {
            entry,
            figure,
            peak,
            limit,
            share_pct: share_pct(peak, limit),
            at_ms,
        }
    }
}

/// `used` of `limit` in per cent, to two decimals.
pub fn share_pct(used: u64, limit: u64) -> f64 {
    (10_000.0 * used as f64 / limit.max(1) as f64).round() / 100.0
}

/// What an isolate knows it already recorded for one entry point.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Known {
    pub used: Used,
    /// When this isolate started counting them (ms since the epoch).
    pub since_ms: i64,
}

impl Known {
    /// The known peaks at `at`: zero again once they are older than [`ISOLATE_KNOWN_MS`].
    pub fn at(self, at: i64) -> Known {
        if at - self.since_ms >= ISOLATE_KNOWN_MS {
            Known {
                used: Used::default(),
                since_ms: at,
            }
        } else {
            self
        }
    }

    /// The known peaks raised to `now`'s figures.
    pub fn with(self, now: &Used) -> Known {
        let mut used = self.used;
        used.subrequests = used.subrequests.max(now.subrequests);
        used.fetches = used.fetches.max(now.fetches);
        used.d1_queries = used.d1_queries.max(now.d1_queries);
        used.connections = used.connections.max(now.connections);
        used.wall_ms = used.wall_ms.max(now.wall_ms);
        used.memory_bytes = used.memory_bytes.max(now.memory_bytes);
        Known { used, ..self }
    }
}

/// The peaks an invocation of `entry` that ended at `at` with `now` should record: each capped
/// figure it used more of than the isolate already knew (`known`). Empty for a warm isolate's
/// ordinary invocation.
pub fn raised(entry: Entry, limits: &Limits, known: &Used, now: &Used, at: i64) -> Vec<Peak> {
    Figure::ALL
        .iter()
        .filter_map(|&figure| {
            let limit = limits.get(figure)?;
            let used = now.get(figure);
            (used > known.get(figure)).then(|| Peak::new(entry, figure, used, limit, at))
        })
        .collect()
}

/// The peaks to show at `at`: those inside the window, the highest share first.
pub fn current(mut peaks: Vec<Peak>, at: i64) -> Vec<Peak> {
    peaks.retain(|p| at - p.at_ms < WINDOW_MS);
    peaks.sort_by(|a, b| {
        b.share_pct
            .total_cmp(&a.share_pct)
            .then((a.entry, a.figure).cmp(&(b.entry, b.figure)))
    });
    peaks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::{Configured, Plan};
    use proptest::prelude::*;

    fn cron() -> Limits {
        Limits::of(Plan::Paid, Entry::Cron, Configured::default()).unwrap()
    }

    fn used(subrequests: u64, d1: u64, memory: u64) -> Used {
        Used {
            subrequests,
            d1_queries: d1,
            memory_bytes: memory,
            ..Used::default()
        }
    }

    #[test]
    fn only_figures_above_what_the_isolate_knew_are_recorded() {
        let known = used(100, 10, 1 << 20);
        let now = used(150, 10, 1 << 20);
        let r = raised(Entry::Cron, &cron(), &known, &now, 7);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].figure, r[0].peak, r[0].limit),
            (Figure::Subrequests, 150, 10_000)
        );
        assert_eq!(r[0].share_pct, 1.5);
        assert!(raised(Entry::Cron, &cron(), &now, &now, 7).is_empty());
    }

    #[test]
    fn a_figure_without_a_limit_is_never_recorded() {
        let fetch = Limits::of(Plan::Paid, Entry::Fetch, Configured::default()).unwrap();
        assert_eq!(fetch.get(Figure::WallMs), None);
        let now = Used {
            wall_ms: 90_000,
            ..Used::default()
        };
        assert!(raised(Entry::Fetch, &fetch, &Used::default(), &now, 0).is_empty());
    }

    #[test]
    fn known_peaks_start_again_after_an_hour() {
        let k = Known {
            used: used(5, 5, 5),
            since_ms: 1_000,
        };
        assert_eq!(k.at(1_000 + ISOLATE_KNOWN_MS - 1), k);
        let fresh = k.at(1_000 + ISOLATE_KNOWN_MS);
        assert_eq!(fresh.used, Used::default());
        assert_eq!(fresh.since_ms, 1_000 + ISOLATE_KNOWN_MS);
    }

    #[test]
    fn current_drops_peaks_older_than_a_day_and_puts_the_tightest_first() {
        let at = 10 * WINDOW_MS;
        let peaks = vec![
            Peak::new(Entry::Cron, Figure::Subrequests, 1_000, 10_000, at - 1),
            Peak::new(Entry::Queue, Figure::D1Queries, 900, 1_000, at - 2),
            Peak::new(Entry::Fetch, Figure::D1Queries, 999, 1_000, at - WINDOW_MS),
        ];
        let shown = current(peaks, at);
        assert_eq!(shown.len(), 2);
        assert_eq!(shown[0].entry, Entry::Queue);
        assert_eq!(shown[0].share_pct, 90.0);
    }

    #[test]
    fn entries_and_figures_serialize_as_their_names() {
        let p = Peak::new(Entry::DurableObject, Figure::MemoryBytes, 1, 2, 3);
        let v = serde_json::to_value(&p).unwrap();
        assert_eq!(v["entry"], Entry::DurableObject.as_str());
        assert_eq!(v["figure"], Figure::MemoryBytes.as_str());
        let back: Peak = serde_json::from_value(v).unwrap();
        assert_eq!(back, p);
    }

    proptest! {
        /// Whatever an isolate's invocations used, in any order, once each has recorded what
        /// it raised, the highest recorded figure is the highest use — and an invocation that
        /// raises nothing records nothing.
        #[test]
        fn recording_only_what_is_raised_still_keeps_the_peak(
            uses in proptest::collection::vec((0u64..20_000, 0u64..2_000, 0u64..1 << 28), 1..40)
        ) {
            let limits = cron();
            let mut known = Known::default();
            let mut stored = std::collections::HashMap::<Figure, u64>::new();
            for (s, d, m) in &uses {
                let now = used(*s, *d, *m);
                for p in raised(Entry::Cron, &limits, &known.used, &now, 0) {
                    let e = stored.entry(p.figure).or_default();
                    prop_assert!(p.peak > *e);
                    *e = p.peak;
                }
                known = known.with(&now);
            }
            let max = |f: fn(&(u64, u64, u64)) -> u64| uses.iter().map(f).max().unwrap();
            prop_assert_eq!(stored.get(&Figure::Subrequests).copied().unwrap_or(0), max(|u| u.0));
            prop_assert_eq!(stored.get(&Figure::D1Queries).copied().unwrap_or(0), max(|u| u.1));
            prop_assert_eq!(stored.get(&Figure::MemoryBytes).copied().unwrap_or(0), max(|u| u.2));
        }
    }
}
