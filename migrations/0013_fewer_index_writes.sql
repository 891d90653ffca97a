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

-- The DLQ's indexes hold only failed and dead-lettered jobs: the 90% of jobs that complete
-- wrote and rewrote an entry in each at every status change. The DLQ's queries repeat the
-- condition (`sql::DLQ_STATUSES`), which is how SQLite knows it may use them.
DROP INDEX IF EXISTS idx_jobs_status_completed;
CREATE INDEX idx_jobs_status_completed ON jobs (status, completed_at)
  WHERE status IN ('failed','dead_lettered');
DROP INDEX IF EXISTS idx_jobs_user_status_completed;
CREATE INDEX idx_jobs_user_status_completed ON jobs (user_id, status, completed_at)
  WHERE status IN ('failed','dead_lettered');
DROP INDEX IF EXISTS idx_jobs_dlq_class;
CREATE INDEX idx_jobs_dlq_class ON jobs (status, error_class, completed_at)
  WHERE error_class IS NOT NULL AND status IN ('failed','dead_lettered');
