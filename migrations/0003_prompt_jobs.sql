-- Prompt jobs: the request lives in R2 under prompts/<id> (the claim-check; prompts run to
-- 200,000 characters and queue messages cap at 128 KB); the row points at it.
ALTER TABLE jobs ADD COLUMN prompt_key TEXT;

-- Idempotency-Key, per user, remembered 24 hours: the same key with the same body answers the
-- original acknowledgement; with another body, 422.
CREATE TABLE idempotency_keys (
  user_id     TEXT NOT NULL,
  key         TEXT NOT NULL,
  body_hash   TEXT NOT NULL,
  job_id      TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  PRIMARY KEY (user_id, key)
);

-- The reconciler looks for rows stuck in queued/running by their last update.
CREATE INDEX idx_jobs_status_updated ON jobs (status, updated_at);
