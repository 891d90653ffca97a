-- claude-pipeline: first schema.
-- One status vocabulary, enforced here and by pipeline::status (a test compares the two).

CREATE TABLE jobs (
  id                 TEXT PRIMARY KEY,
  user_id            TEXT NOT NULL,
  kind               TEXT NOT NULL CHECK (kind IN ('feedback','prompt','pdf')),
  status             TEXT NOT NULL CHECK (status IN ('queued','enqueue_failed','running','submitted','completed','failed','dead_lettered','expired','canceled')),
  lane               TEXT NOT NULL CHECK (lane IN ('high','bulk')),
  mode               TEXT NOT NULL CHECK (mode IN ('sync','batch')),
  model              TEXT,
  source             TEXT,
  batch_id           TEXT,
  batch_index        INTEGER,
  file_name          TEXT,
  file_size          INTEGER,
  anthropic_batch_id TEXT,
  attempts           INTEGER NOT NULL DEFAULT 0,
  input_tokens       INTEGER NOT NULL DEFAULT 0,
  output_tokens      INTEGER NOT NULL DEFAULT 0,
  cache_write_tokens INTEGER NOT NULL DEFAULT 0,
  cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
  cost_micros        INTEGER NOT NULL DEFAULT 0,
  result_key         TEXT,
  error              TEXT,
  created_at         INTEGER NOT NULL,
  started_at         INTEGER,
  completed_at       INTEGER,
  expires_at         INTEGER,
  updated_at         INTEGER NOT NULL
);

-- The seed's indexes: work lists by status and age, a user's jobs, a batch's files.
CREATE INDEX idx_jobs_status_created ON jobs (status, created_at);
CREATE INDEX idx_jobs_user_status ON jobs (user_id, status);
CREATE INDEX idx_jobs_batch ON jobs (batch_id, batch_index);

-- API keys, stored only as SHA-256 hashes (pipeline::identity::KeyHash).
CREATE TABLE api_keys (
  id          TEXT PRIMARY KEY,
  key_hash    TEXT NOT NULL UNIQUE,
  user_id     TEXT NOT NULL,
  role        TEXT NOT NULL CHECK (role IN ('user','admin')),
  created_at  INTEGER NOT NULL,
  revoked_at  INTEGER
);

-- Liveness of the background paths: the cron and each queue consumer write their last run here.
CREATE TABLE heartbeats (
  name    TEXT PRIMARY KEY,
  at      INTEGER NOT NULL,
  detail  TEXT
);
