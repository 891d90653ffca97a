-- Incident tools (issue 36; `pipeline::ops::bulk`): one audit row per bulk request — who, what,
-- the filter as applied (JSON), whether it was a dry run, how many jobs it matched and acted on.
-- `GET /api/ops/bulk` lists the newest first.

CREATE TABLE bulk_actions (
  id       TEXT PRIMARY KEY,
  at       INTEGER NOT NULL,
  actor    TEXT NOT NULL,
  action   TEXT NOT NULL,
  dry_run  INTEGER NOT NULL,
  matched  INTEGER NOT NULL,
  acted    INTEGER NOT NULL,
  reason   TEXT NOT NULL,
  filter   TEXT NOT NULL
);
CREATE INDEX idx_bulk_actions_at ON bulk_actions (at);
