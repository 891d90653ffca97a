-- The operator's side: usage by user and day, metrics rows, DLQ triage with replay and audit,
-- per-user daily budgets, alert state.

-- Replays: a replay is a new job pointing at its original; the original records its one replay
-- (a guarded write, so a double click cannot pay twice), or that it was discarded.
ALTER TABLE jobs ADD COLUMN replay_of TEXT;
ALTER TABLE jobs ADD COLUMN replayed_to TEXT;
ALTER TABLE jobs ADD COLUMN discarded_at INTEGER;
-- The failure's class (pipeline::ops::ErrorClass), filled from `error` for failed and
-- dead-lettered jobs (the partial index finds the ones still to classify).
ALTER TABLE jobs ADD COLUMN error_class TEXT;
CREATE INDEX idx_jobs_unclassified ON jobs (id)
  WHERE error_class IS NULL AND status IN ('failed','dead_lettered');

-- The open dead letters (neither replayed nor discarded): the DLQ alert counts them.
CREATE INDEX idx_jobs_dead_open ON jobs (id)
  WHERE status = 'dead_lettered' AND discarded_at IS NULL AND replayed_to IS NULL;

-- Usage: a user's jobs by creation time (range scans for the Usage page and the daily cap).
CREATE INDEX idx_jobs_user_created ON jobs (user_id, created_at);
-- Metrics: jobs that ended in a window, and pending / in-flight work per lane.
CREATE INDEX idx_jobs_completed ON jobs (completed_at) WHERE completed_at IS NOT NULL;
CREATE INDEX idx_jobs_status_lane_created ON jobs (status, lane, created_at);
-- DLQ triage: one status's jobs by the time they ended, newest first (the list stops at its page).
CREATE INDEX idx_jobs_status_completed ON jobs (status, completed_at);

-- Who did what to a job (replay, discard, edit-then-replay), newest last.
CREATE TABLE job_audit (
  job_id  TEXT NOT NULL,
  at      INTEGER NOT NULL,
  actor   TEXT NOT NULL,
  action  TEXT NOT NULL,
  detail  TEXT
);
CREATE INDEX idx_job_audit_job ON job_audit (job_id, at);

-- One row per cron run: the figures of pipeline::ops::Metrics as JSON.
CREATE TABLE metrics (
  at    INTEGER PRIMARY KEY,
  body  TEXT NOT NULL
);

-- Optional per-user budgets in micro-dollars per UTC day: `daily_cap_micros` refuses new jobs
-- (429) once the day's spending reached it; `soft_micros` raises an alert (once per day).
CREATE TABLE user_budgets (
  user_id           TEXT PRIMARY KEY,
  daily_cap_micros  INTEGER,
  soft_micros       INTEGER,
  updated_at        INTEGER NOT NULL
);

-- Alerts raised (DLQ threshold crossings, soft budget thresholds): `key` makes each once.
CREATE TABLE alerts (
  key      TEXT PRIMARY KEY,
  at       INTEGER NOT NULL,
  kind     TEXT NOT NULL,
  detail   TEXT
);
