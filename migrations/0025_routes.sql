-- Routes besides the Anthropic API (issue 36; `pipeline::provider`): which route answered.
--
-- `jobs.route` is the route whose answer settled the job (`bedrock`, `vertex`), NULL for the
-- Anthropic API — every job before this migration, every batch-mode job, and every sync job
-- the primary answered. `job_attempts.route` is the route each call went to, NULL likewise.
-- Reconciliation compares only the Anthropic API's jobs with Anthropic's bill.

ALTER TABLE jobs ADD COLUMN route TEXT;
ALTER TABLE job_attempts ADD COLUMN route TEXT;
