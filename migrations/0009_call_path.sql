-- POST /api/claude records every call as a job: `path` says which path answered it ('direct':
-- called from the request; 'queue': a high-lane job the request waited for). NULL for the jobs
-- of the other producers. The rollout view (GET /api/rollout) reads the calls of a window.
ALTER TABLE jobs ADD COLUMN path TEXT CHECK (path IN ('direct', 'queue'));
CREATE INDEX idx_jobs_calls ON jobs (created_at) WHERE path IS NOT NULL;
