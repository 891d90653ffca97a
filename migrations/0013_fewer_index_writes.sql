-- Fewer rows written per job (issue 18, `cargo xtask bench cost --trace`): D1 counts every index
-- entry a write changes as a row written, and rows written are most of what a job costs.
--
-- (status, created_at) served no query: the pending counts' oldest job reads
-- idx_jobs_status_lane_created, the fair-share pick idx_jobs_fresh, the usage scan
-- idx_jobs_user_created. It was rewritten at every status change.
DROP INDEX IF EXISTS idx_jobs_status_created;

-- Only the jobs of an upload have a batch_id: the others no longer write a NULL entry. Every
-- query of it says `batch_id = ?`, which implies the index's condition.
DROP INDEX IF EXISTS idx_jobs_batch;
CREATE INDEX idx_jobs_batch ON jobs (batch_id, batch_index) WHERE batch_id IS NOT NULL;
