-- Rollups: the ops views read rows in proportion to days × models, not to jobs.
--
-- `usage_days` holds, per user, UTC day of creation, model ('' while none answered yet) and
-- mode: the jobs, their tokens of each kind, their cost (known: priced from the catalog;
-- unknown: a model the price table did not know) and how many failed (failed or
-- dead-lettered). `job_counts` holds how many jobs are in each status per lane, and the open
-- dead letters (status 'dead_open', lane 'all': dead-lettered, neither replayed nor discarded).
-- `user_queued` holds each user's jobs in `queued` (the per-user limit's count).
--
-- Triggers on `jobs` keep all three exact on every insert and on every update of the columns
-- they sum, whichever statement makes it (settlement, replay, cancel, expiry, the DLQ), in the
-- same transaction as the write. Deleting a job (retention) takes it out of `job_counts` and
-- `user_queued` but not out of `usage_days`: what was billed stays billed.
--
-- The trigger bodies use no CASE and end with an upper-case END, the form wrangler's statement
-- splitter keeps whole (cloudflare/workers-sdk#2495); a comparison is 0 or 1 in SQLite, which
-- stands in for CASE.

CREATE TABLE usage_days (
  user_id             TEXT NOT NULL,
  day                 INTEGER NOT NULL,
  model               TEXT NOT NULL,
  mode                TEXT NOT NULL,
  jobs                INTEGER NOT NULL DEFAULT 0,
  input_tokens        INTEGER NOT NULL DEFAULT 0,
  output_tokens       INTEGER NOT NULL DEFAULT 0,
  cache_write_tokens  INTEGER NOT NULL DEFAULT 0,
  cache_read_tokens   INTEGER NOT NULL DEFAULT 0,
  cost_micros         INTEGER NOT NULL DEFAULT 0,
  unknown_cost_micros INTEGER NOT NULL DEFAULT 0,
  cost_unknown        INTEGER NOT NULL DEFAULT 0,
  failures            INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (user_id, day, model, mode)
) WITHOUT ROWID;

CREATE TABLE job_counts (
  status  TEXT NOT NULL,
  lane    TEXT NOT NULL,
  n       INTEGER NOT NULL,
  PRIMARY KEY (status, lane)
) WITHOUT ROWID;

CREATE TABLE user_queued (
  user_id  TEXT PRIMARY KEY,
  n        INTEGER NOT NULL
) WITHOUT ROWID;

-- What is stored now.
INSERT INTO usage_days (user_id, day, model, mode, jobs, input_tokens, output_tokens,
    cache_write_tokens, cache_read_tokens, cost_micros, unknown_cost_micros, cost_unknown,
    failures)
  SELECT user_id, CAST(created_at / 86400000 AS INTEGER), COALESCE(model, ''), mode, COUNT(*),
    SUM(input_tokens), SUM(output_tokens), SUM(cache_write_tokens), SUM(cache_read_tokens),
    SUM(cost_micros * (cost_unknown = 0)), SUM(cost_micros * (cost_unknown != 0)),
    SUM(cost_unknown != 0), SUM(status IN ('failed', 'dead_lettered'))
  FROM jobs GROUP BY 1, 2, 3, 4;
INSERT INTO job_counts (status, lane, n) SELECT status, lane, COUNT(*) FROM jobs GROUP BY 1, 2;
INSERT INTO job_counts (status, lane, n)
  SELECT 'dead_open', 'all', COUNT(*) FROM jobs
  WHERE status = 'dead_lettered' AND discarded_at IS NULL AND replayed_to IS NULL;
INSERT INTO user_queued (user_id, n)
  SELECT user_id, COUNT(*) FROM jobs WHERE status = 'queued' GROUP BY 1;

CREATE TRIGGER jobs_rollup_insert AFTER INSERT ON jobs
BEGIN
  INSERT INTO usage_days (user_id, day, model, mode, jobs, input_tokens, output_tokens,
      cache_write_tokens, cache_read_tokens, cost_micros, unknown_cost_micros, cost_unknown,
      failures)
    VALUES (NEW.user_id, CAST(NEW.created_at / 86400000 AS INTEGER), COALESCE(NEW.model, ''),
      NEW.mode, 1, NEW.input_tokens, NEW.output_tokens, NEW.cache_write_tokens,
      NEW.cache_read_tokens, NEW.cost_micros * (NEW.cost_unknown = 0),
      NEW.cost_micros * (NEW.cost_unknown != 0), NEW.cost_unknown != 0,
      NEW.status IN ('failed', 'dead_lettered'))
    ON CONFLICT (user_id, day, model, mode) DO UPDATE SET
      jobs = jobs + 1,
      input_tokens = input_tokens + excluded.input_tokens,
      output_tokens = output_tokens + excluded.output_tokens,
      cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens,
      cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens,
      cost_micros = cost_micros + excluded.cost_micros,
      unknown_cost_micros = unknown_cost_micros + excluded.unknown_cost_micros,
      cost_unknown = cost_unknown + excluded.cost_unknown,
      failures = failures + excluded.failures;
  INSERT INTO job_counts (status, lane, n) VALUES (NEW.status, NEW.lane, 1)
    ON CONFLICT (status, lane) DO UPDATE SET n = n + 1;
  INSERT INTO user_queued (user_id, n) SELECT NEW.user_id, 1 WHERE NEW.status = 'queued'
    ON CONFLICT (user_id) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER jobs_rollup_update AFTER UPDATE OF user_id, created_at, model, mode, status,
    input_tokens, output_tokens, cache_write_tokens, cache_read_tokens, cost_micros,
    cost_unknown ON jobs
WHEN OLD.user_id != NEW.user_id OR OLD.created_at != NEW.created_at
  OR OLD.model IS NOT NEW.model OR OLD.mode != NEW.mode
  OR (OLD.status IN ('failed', 'dead_lettered')) != (NEW.status IN ('failed', 'dead_lettered'))
  OR OLD.input_tokens != NEW.input_tokens OR OLD.output_tokens != NEW.output_tokens
  OR OLD.cache_write_tokens != NEW.cache_write_tokens
  OR OLD.cache_read_tokens != NEW.cache_read_tokens OR OLD.cost_micros != NEW.cost_micros
  OR OLD.cost_unknown != NEW.cost_unknown
BEGIN
  UPDATE usage_days SET
      jobs = jobs - 1,
      input_tokens = input_tokens - OLD.input_tokens,
      output_tokens = output_tokens - OLD.output_tokens,
      cache_write_tokens = cache_write_tokens - OLD.cache_write_tokens,
      cache_read_tokens = cache_read_tokens - OLD.cache_read_tokens,
      cost_micros = cost_micros - OLD.cost_micros * (OLD.cost_unknown = 0),
      unknown_cost_micros = unknown_cost_micros - OLD.cost_micros * (OLD.cost_unknown != 0),
      cost_unknown = cost_unknown - (OLD.cost_unknown != 0),
      failures = failures - (OLD.status IN ('failed', 'dead_lettered'))
    WHERE user_id = OLD.user_id AND day = CAST(OLD.created_at / 86400000 AS INTEGER)
      AND model = COALESCE(OLD.model, '') AND mode = OLD.mode;
  INSERT INTO usage_days (user_id, day, model, mode, jobs, input_tokens, output_tokens,
      cache_write_tokens, cache_read_tokens, cost_micros, unknown_cost_micros, cost_unknown,
      failures)
    VALUES (NEW.user_id, CAST(NEW.created_at / 86400000 AS INTEGER), COALESCE(NEW.model, ''),
      NEW.mode, 1, NEW.input_tokens, NEW.output_tokens, NEW.cache_write_tokens,
      NEW.cache_read_tokens, NEW.cost_micros * (NEW.cost_unknown = 0),
      NEW.cost_micros * (NEW.cost_unknown != 0), NEW.cost_unknown != 0,
      NEW.status IN ('failed', 'dead_lettered'))
    ON CONFLICT (user_id, day, model, mode) DO UPDATE SET
      jobs = jobs + 1,
      input_tokens = input_tokens + excluded.input_tokens,
      output_tokens = output_tokens + excluded.output_tokens,
      cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens,
      cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens,
      cost_micros = cost_micros + excluded.cost_micros,
      unknown_cost_micros = unknown_cost_micros + excluded.unknown_cost_micros,
      cost_unknown = cost_unknown + excluded.cost_unknown,
      failures = failures + excluded.failures;
END;

CREATE TRIGGER jobs_counts_update AFTER UPDATE OF status, lane, user_id ON jobs
WHEN OLD.status != NEW.status OR OLD.lane != NEW.lane OR OLD.user_id != NEW.user_id
BEGIN
  UPDATE job_counts SET n = n - 1 WHERE status = OLD.status AND lane = OLD.lane;
  INSERT INTO job_counts (status, lane, n) VALUES (NEW.status, NEW.lane, 1)
    ON CONFLICT (status, lane) DO UPDATE SET n = n + 1;
  UPDATE user_queued SET n = n - 1 WHERE user_id = OLD.user_id AND OLD.status = 'queued';
  UPDATE user_queued SET n = n + 1 WHERE user_id = NEW.user_id AND NEW.status = 'queued';
  INSERT INTO user_queued (user_id, n) SELECT NEW.user_id, 1
    WHERE NEW.status = 'queued' AND NOT EXISTS (
      SELECT 1 FROM user_queued WHERE user_id = NEW.user_id);
END;

CREATE TRIGGER jobs_dead_open AFTER UPDATE OF status, discarded_at, replayed_to ON jobs
WHEN (OLD.status = 'dead_lettered' AND OLD.discarded_at IS NULL AND OLD.replayed_to IS NULL)
  != (NEW.status = 'dead_lettered' AND NEW.discarded_at IS NULL AND NEW.replayed_to IS NULL)
BEGIN
  UPDATE job_counts SET n = n
      + (NEW.status = 'dead_lettered' AND NEW.discarded_at IS NULL AND NEW.replayed_to IS NULL)
      - (OLD.status = 'dead_lettered' AND OLD.discarded_at IS NULL AND OLD.replayed_to IS NULL)
    WHERE status = 'dead_open' AND lane = 'all';
END;

CREATE TRIGGER jobs_rollup_insert_dead AFTER INSERT ON jobs
WHEN NEW.status = 'dead_lettered' AND NEW.discarded_at IS NULL AND NEW.replayed_to IS NULL
BEGIN
  UPDATE job_counts SET n = n + 1 WHERE status = 'dead_open' AND lane = 'all';
END;

CREATE TRIGGER jobs_counts_delete AFTER DELETE ON jobs
BEGIN
  UPDATE job_counts SET n = n - 1 WHERE status = OLD.status AND lane = OLD.lane;
  UPDATE job_counts SET n = n - 1 WHERE status = 'dead_open' AND lane = 'all'
    AND OLD.status = 'dead_lettered' AND OLD.discarded_at IS NULL AND OLD.replayed_to IS NULL;
  UPDATE user_queued SET n = n - 1 WHERE user_id = OLD.user_id AND OLD.status = 'queued';
END;

-- DLQ triage: one status's (or one user's) failures by the time they ended, with the class
-- filter in the index, so a page reads its own rows whatever the table's size. The user index
-- replaces (user_id, status), whose prefix it keeps.
CREATE INDEX idx_jobs_dlq_class ON jobs (status, error_class, completed_at)
  WHERE error_class IS NOT NULL;
DROP INDEX idx_jobs_user_status;
CREATE INDEX idx_jobs_user_status_completed ON jobs (user_id, status, completed_at);

-- The cron's own reads, bounded by the work in flight instead of the history: the Message
-- Batches still open (every batch job keeps its batch id forever), and queued jobs that expire.
CREATE INDEX idx_jobs_open_batch ON jobs (anthropic_batch_id)
  WHERE (status = 'submitted' OR awaiting_bill = 1) AND anthropic_batch_id IS NOT NULL;
CREATE INDEX idx_jobs_expiring ON jobs (expires_at)
  WHERE status = 'queued' AND expires_at IS NOT NULL;

-- A Message Batch's results are read as a stream and settled in chunks across cron runs: how
-- far they were read (bytes and lines), written in the same transaction as each chunk's
-- settlements, so a restart resumes after the last chunk settled.
ALTER TABLE flushes ADD COLUMN results_offset INTEGER NOT NULL DEFAULT 0;
ALTER TABLE flushes ADD COLUMN results_lines INTEGER NOT NULL DEFAULT 0;

-- Retention (pipeline::retention): what it walks by age, oldest first. Finished jobs go by
-- `idx_jobs_status_updated` (migration 0003); these find expired idempotency records and old
-- attempt logs without a scan.
CREATE INDEX idx_idempotency_created ON idempotency_keys (created_at);
CREATE INDEX idx_attempts_ended ON job_attempts (ended_at);
