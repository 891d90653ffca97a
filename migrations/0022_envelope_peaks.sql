-- The operator's headroom (issue 32; `pipeline::envelope::headroom`): each entry point's highest
-- use of each per-invocation production limit. One row per (entry, figure): an invocation that
-- raised its isolate's known peak upserts it, and the stored peak is replaced by a higher one, or
-- by any once it is older than a day. `GET /api/metrics`, the scrape and the Dashboard read the
-- rows of the last day. At most 4 entries × 6 figures rows.

CREATE TABLE envelope_peaks (
    entry TEXT NOT NULL,
    figure TEXT NOT NULL,
    peak INTEGER NOT NULL,
    limit_value INTEGER NOT NULL,
    at_ms INTEGER NOT NULL,
    PRIMARY KEY (entry, figure)
) WITHOUT ROWID;
