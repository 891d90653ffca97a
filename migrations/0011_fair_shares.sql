-- Fair shares of the lanes (pipeline::fair). A delivered message runs the new job of the user
-- served least, so the consumers look for each user's oldest new sync job on a lane; a retry
-- keeps its backoff with `run_after` (epoch ms), which a message delivered early respects.
-- `share_weight` is an admin's weight for a user (NULL: 1).
ALTER TABLE jobs ADD COLUMN run_after INTEGER;
ALTER TABLE user_budgets ADD COLUMN share_weight INTEGER;
CREATE INDEX idx_jobs_fresh ON jobs (lane, user_id, created_at)
  WHERE status = 'queued' AND attempts = 0 AND mode = 'sync';
