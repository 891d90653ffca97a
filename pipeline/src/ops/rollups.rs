//! The usage rollups (`usage_days`, kept by migration 0012's triggers, and `usage_tag_days`, by
//! 0018's) against a full scan of the jobs they sum: which days an admin may check or rebuild,
//! and what differs.

use serde::{Deserialize, Serialize};

use crate::clock::{day_of, parse_day, DAY_MS};
use crate::error::ApiError;

/// The most days one check or rebuild covers (each scans the jobs of its days).
pub const MAX_ROLLUP_DAYS: i64 = 31;

/// One group of the rollup: a user's jobs of one UTC day (days since the epoch), model ('' when
/// none answered) and mode — and, for the tag rollup (`usage_tag_days`, migration 0018), one of
/// their tags.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RollupRow {
    /// The tag of a tag-rollup group; absent for the per-user rollup's.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tag: String,
    pub user_id: String,
    pub day: i64,
    pub model: String,
    pub mode: String,
    pub jobs: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cache_write_tokens: i64,
    pub cache_read_tokens: i64,
    pub cost_micros: i64,
    pub unknown_cost_micros: i64,
    pub cost_unknown: i64,
    pub failures: i64,
    /// Refused attempts counted under this model (migration 0023), besides its jobs.
    #[serde(default)]
    pub refusals: i64,
}

impl RollupRow {
    fn key(&self) -> (&str, &str, i64, &str, &str) {
        (&self.tag, &self.user_id, self.day, &self.model, &self.mode)
    }
}

/// Which days a check or rebuild covers: `[from_day, to_day)` in days since the epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DayRange {
    pub from_day: i64,
    pub to_day: i64,
}

impl DayRange {
    /// From the query's `from` and `to` (`YYYY-MM-DD`, inclusive; default the 7 days up to
    /// today), at most [`MAX_ROLLUP_DAYS`], none before `oldest_day` (the first day whose jobs
    /// retention has not begun to delete: before it, a scan no longer sees every billed job).
    pub fn parse(
        from: Option<&str>,
        to: Option<&str>,
        now: i64,
        oldest_day: i64,
    ) -> Result<DayRange, ApiError> {
        let day = |s: Option<&str>, field: &str, default: i64| match s.filter(|s| !s.is_empty()) {
            None => Ok(default),
            Some(s) => parse_day(s).map(|ms| ms.div_euclid(DAY_MS)).ok_or_else(|| {
                ApiError::bad_request(
                    "invalid_date",
                    format!("{field} must be a date written YYYY-MM-DD"),
                    Some(field),
                )
            }),
        };
        let today = now.div_euclid(DAY_MS);
        let to_day = day(to, "to", today)? + 1;
        let from_day = day(from, "from", (to_day - 7).max(oldest_day))?;
        if from_day >= to_day {
            return Err(ApiError::bad_request(
                "invalid_range",
                "from must not be after to",
                Some("from"),
            ));
        }
        if to_day - from_day > MAX_ROLLUP_DAYS {
            return Err(ApiError::bad_request(
                "invalid_range",
                format!("one check covers at most {MAX_ROLLUP_DAYS} days"),
                Some("from"),
            ));
        }
        if from_day < oldest_day {
            return Err(ApiError::bad_request(
                "invalid_range",
                format!(
                    "jobs before {} may have been deleted by retention: their rollup is the \
                     only record and cannot be checked against them",
                    day_of(oldest_day * DAY_MS)
                ),
                Some("from"),
            ));
        }
        Ok(DayRange { from_day, to_day })
    }
}

/// A group whose rollup and scan differ (`None`: the group is missing on that side).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RollupDiff {
    pub rollup: Option<RollupRow>,
    pub scan: Option<RollupRow>,
}

/// The consistency check's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RollupCheck {
    pub from: String,
    pub to: String,
    pub groups: usize,
    pub jobs: i64,
    pub consistent: bool,
    /// The first differences (at most 20).
    pub differences: Vec<RollupDiff>,
    pub different_groups: usize,
}

/// What `POST /api/usage/rollups/rebuild` wrote: the days (UTC, both included) and the groups.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Rebuilt {
    pub from: String,
    pub to: String,
    pub groups: usize,
}

/// Compares the rollup's groups with a scan's (both any order; groups with no jobs ignored).
pub fn compare(range: DayRange, rollup: &[RollupRow], scan: &[RollupRow]) -> RollupCheck {
    let live = |rows: &[RollupRow]| {
        let mut v: Vec<RollupRow> = rows.iter().filter(|r| r.jobs != 0).cloned().collect();
        v.sort_by(|a, b| a.key().cmp(&b.key()));
        v
    };
    let (a, b) = (live(rollup), live(scan));
    let mut diffs = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x.key() == y.key() => {
                if x != y {
                    diffs.push(RollupDiff {
                        rollup: Some(x.clone()),
                        scan: Some(y.clone()),
                    });
                }
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x.key() < y.key() => {
                diffs.push(RollupDiff {
                    rollup: Some(x.clone()),
                    scan: None,
                });
                i += 1;
            }
            (Some(x), None) => {
                diffs.push(RollupDiff {
                    rollup: Some(x.clone()),
                    scan: None,
                });
                i += 1;
            }
            (_, Some(y)) => {
                diffs.push(RollupDiff {
                    rollup: None,
                    scan: Some(y.clone()),
                });
                j += 1;
            }
            (None, None) => break,
        }
    }
    RollupCheck {
        from: day_of(range.from_day * DAY_MS),
        to: day_of((range.to_day - 1) * DAY_MS),
        groups: b.len(),
        // Each job once: the tag groups count a job under each of its tags.
        jobs: b.iter().filter(|r| r.tag.is_empty()).map(|r| r.jobs).sum(),
        consistent: diffs.is_empty(),
        different_groups: diffs.len(),
        differences: diffs.into_iter().take(20).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 20_000 * DAY_MS + 5_000;

    fn row(user: &str, day: i64, model: &str, jobs: i64, cost: i64) -> RollupRow {
        RollupRow {
            user_id: user.into(),
            day,
            model: model.into(),
            mode: "sync".into(),
            jobs,
            cost_micros: cost,
            ..RollupRow::default()
        }
    }

    #[test]
    fn tag_groups_are_compared_by_their_tag_and_count_no_job_twice() {
        let r = DayRange::parse(None, None, NOW, 0).unwrap();
        let tagged = |tag: &str, cost: i64| RollupRow {
            tag: tag.into(),
            ..row("ann", 20_000, "m", 1, cost)
        };
        let rollup = [
            row("ann", 20_000, "m", 1, 9),
            tagged("a=1", 9),
            tagged("b=2", 9),
        ];
        let check = compare(r, &rollup, &rollup);
        assert!(check.consistent);
        assert_eq!((check.groups, check.jobs), (3, 1));
        // One tag's group off: that group, and only it, is named.
        let scan = [
            row("ann", 20_000, "m", 1, 9),
            tagged("a=1", 9),
            tagged("b=2", 4),
        ];
        let check = compare(r, &rollup, &scan);
        assert_eq!(check.different_groups, 1);
        assert_eq!(check.differences[0].rollup.as_ref().unwrap().tag, "b=2");
        // The per-user row serializes without a tag.
        let json = serde_json::to_value(row("ann", 1, "m", 1, 1)).unwrap();
        assert!(json.get("tag").is_none(), "{json}");
    }

    #[test]
    fn the_default_range_is_the_last_seven_days_and_limits_are_enforced() {
        let r = DayRange::parse(None, None, NOW, 0).unwrap();
        assert_eq!((r.from_day, r.to_day), (19_994, 20_001));
        let r = DayRange::parse(None, None, NOW, 19_998).unwrap();
        assert_eq!(r.from_day, 19_998, "not before retention's horizon");
        let e = DayRange::parse(Some("2024-01-01"), None, NOW, 0).unwrap_err();
        assert_eq!(e.body.code, "invalid_range");
        let e = DayRange::parse(Some("yesterday"), None, NOW, 0).unwrap_err();
        assert_eq!(e.body.code, "invalid_date");
        let to = day_of(NOW);
        let from = day_of(NOW - 3 * DAY_MS);
        let e = DayRange::parse(Some(&from), Some(&to), NOW, 19_999).unwrap_err();
        assert_eq!(e.body.code, "invalid_range");
        let e = DayRange::parse(Some(&to), Some(&from), NOW, 0).unwrap_err();
        assert_eq!(e.body.code, "invalid_range");
    }

    #[test]
    fn equal_groups_in_any_order_are_consistent_and_empty_groups_do_not_count() {
        let range = DayRange {
            from_day: 1,
            to_day: 3,
        };
        let a = vec![row("ann", 1, "m", 2, 10), row("bob", 2, "", 1, 0)];
        let mut b = a.clone();
        b.reverse();
        let mut with_empty = a.clone();
        with_empty.push(row("cid", 2, "m", 0, 0));
        let c = compare(range, &with_empty, &b);
        assert!(c.consistent, "{c:?}");
        assert_eq!((c.groups, c.jobs), (2, 3));
        assert_eq!(
            (c.from.as_str(), c.to.as_str()),
            ("1970-01-02", "1970-01-03")
        );
    }

    #[test]
    fn a_changed_a_missing_and_an_extra_group_are_each_reported() {
        let range = DayRange {
            from_day: 1,
            to_day: 3,
        };
        let rollup = vec![row("ann", 1, "m", 2, 10), row("ann", 2, "m", 1, 5)];
        let scan = vec![row("ann", 1, "m", 2, 11), row("bob", 1, "m", 1, 1)];
        let c = compare(range, &rollup, &scan);
        assert!(!c.consistent);
        assert_eq!(c.different_groups, 3);
        let changed = &c.differences[0];
        assert_eq!(changed.rollup.as_ref().unwrap().cost_micros, 10);
        assert_eq!(changed.scan.as_ref().unwrap().cost_micros, 11);
        assert!(c
            .differences
            .iter()
            .any(|d| d.scan.is_none() && d.rollup.as_ref().unwrap().day == 2));
        assert!(c
            .differences
            .iter()
            .any(|d| d.rollup.is_none() && d.scan.as_ref().unwrap().user_id == "bob"));
    }
}
