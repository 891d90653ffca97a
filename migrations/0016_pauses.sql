-- Pause and resume (issue 19, pipeline::pause): an admin holds a lane, a model or a user's work
-- without redeploying. A delivered job that a pause holds stays `queued` with `held_at` set and
-- its message acked — it spends no retry, and no message cycles while it waits; jobs already
-- waiting for a flush are held the same way when the pause is made, so no Message Batch takes
-- them. When no pause holds a job any more, the resume (and then the cron, a slice per run)
-- clears `held_at` and sends it back to its lane. The reconciler leaves held jobs alone; their
-- expiry still applies.
CREATE TABLE pauses (
  scope      TEXT NOT NULL CHECK (scope IN ('lane', 'model', 'user')),
  value      TEXT NOT NULL,
  reason     TEXT,
  paused_by  TEXT NOT NULL,
  paused_at  INTEGER NOT NULL,
  PRIMARY KEY (scope, value)
) WITHOUT ROWID;

ALTER TABLE jobs ADD COLUMN held_at INTEGER;
CREATE INDEX idx_jobs_held ON jobs (held_at) WHERE held_at IS NOT NULL;
