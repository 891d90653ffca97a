-- Exact cost: a job answered by a model the price table does not know is flagged, not priced 0.
ALTER TABLE jobs ADD COLUMN cost_unknown INTEGER NOT NULL DEFAULT 0;

-- The bulk lane on the Message Batches API. A batch-mode job joins the accumulation
-- (`accumulated_at`); a flush claims waiting jobs (`flush_id`) *before* its batch-create call, so
-- a Worker that dies between the create and the D1 write cannot submit them twice; a transient
-- error in a batch's results puts a job back into the accumulation (`batch_tries`, bounded).
ALTER TABLE jobs ADD COLUMN accumulated_at INTEGER;
ALTER TABLE jobs ADD COLUMN flush_id TEXT;
ALTER TABLE jobs ADD COLUMN batch_tries INTEGER NOT NULL DEFAULT 0;

-- Jobs waiting for a flush, oldest first (the partial index holds only them).
CREATE INDEX idx_jobs_waiting ON jobs (accumulated_at)
  WHERE status = 'queued' AND accumulated_at IS NOT NULL AND flush_id IS NULL;
CREATE INDEX idx_jobs_flush ON jobs (flush_id) WHERE flush_id IS NOT NULL;

-- One row per flush: `claimed` before the create call, `created` with the Anthropic batch id
-- after it, `released` when the create certainly did not happen (its jobs wait again).
-- A flush left `claimed` (the create's outcome is unknown) is resolved by the cron: it looks for
-- the batch among the account's batches before anything is submitted again.
CREATE TABLE flushes (
  id                 TEXT PRIMARY KEY,
  state              TEXT NOT NULL CHECK (state IN ('claimed','created','released')),
  jobs               INTEGER NOT NULL,
  anthropic_batch_id TEXT,
  claimed_at         INTEGER NOT NULL,
  updated_at         INTEGER NOT NULL,
  note               TEXT
);
CREATE INDEX idx_flushes_state ON flushes (state, claimed_at);
CREATE UNIQUE INDEX idx_flushes_batch ON flushes (anthropic_batch_id) WHERE anthropic_batch_id IS NOT NULL;
