-- Multi-PDF uploads: one row per upload (`POST /batches`); each file is a job of kind `pdf`
-- (jobs.batch_id, batch_index, file_name, file_size), its bytes in R2 at
-- uploads/<batch_id>/<job_id>.pdf (jobs.prompt_key), the extraction template on the job.
CREATE TABLE batches (
  id           TEXT PRIMARY KEY,
  user_id      TEXT NOT NULL,
  mode         TEXT NOT NULL CHECK (mode IN ('sync','batch')),
  template     TEXT NOT NULL,
  total        INTEGER NOT NULL,
  total_bytes  INTEGER NOT NULL,
  created_at   INTEGER NOT NULL,
  canceled_at  INTEGER
);
-- A user's uploads, newest first.
CREATE INDEX idx_batches_user_created ON batches (user_id, created_at);
ALTER TABLE jobs ADD COLUMN template TEXT;
