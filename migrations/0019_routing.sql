-- Deadline routing (issue 20; `pipeline::routing`).
--
-- A job may say when its answer is needed (`deadline_s` / `deadline_at`) instead of a mode:
-- `deadline_at` is that time (epoch ms), `rescue_at` when its Message Batch must be cancelled
-- (or its accumulation left) for a synchronous call to still make it, `route_reason` why it
-- took its path (`deadline_allows_batch`, `deadline_too_close_for_batch`, `batch_ran_late`).
-- The cron finds the live jobs past their `rescue_at` through the partial index, whose WHERE
-- the query repeats.
--
-- A flush records its Message Batch's `created_at` and `ended_at` as the API reports them and
-- the models inside it (a comma list): the router's expected batch time per model is the p95
-- of the most recent ones. `rescued_at` is when the cron cancelled it for a job's deadline;
-- the canceled lines of its other jobs go back to the accumulation instead of ending.

ALTER TABLE jobs ADD COLUMN deadline_at INTEGER;
ALTER TABLE jobs ADD COLUMN rescue_at INTEGER;
ALTER TABLE jobs ADD COLUMN route_reason TEXT;

CREATE INDEX idx_jobs_rescue ON jobs (rescue_at)
  WHERE rescue_at IS NOT NULL AND status IN ('queued','submitted');
CREATE INDEX idx_jobs_deadline ON jobs (created_at) WHERE deadline_at IS NOT NULL;

ALTER TABLE flushes ADD COLUMN models TEXT;
ALTER TABLE flushes ADD COLUMN batch_created_at INTEGER;
ALTER TABLE flushes ADD COLUMN batch_ended_at INTEGER;
ALTER TABLE flushes ADD COLUMN rescued_at INTEGER;

CREATE INDEX idx_flushes_ended ON flushes (batch_ended_at) WHERE batch_ended_at IS NOT NULL;
