-- Per-path SLOs (issue 19): the metrics row keeps sync work and Message Batch work apart, so the
-- counts of pending work and the oldest pending job are per lane *and* mode.
--
-- `job_counts` gains `mode` in its key: the same number of rows written per job as before (one
-- decrement and one increment per status change), the lane's total is the sum of its two modes.
-- The open dead letters stay one row (status 'dead_open', lane 'all', mode 'all').
--
-- The triggers that write `job_counts` are made again with the mode (and `jobs_counts_update`
-- fires on a change of mode too: deadline routing may move a job from batch to sync). They are
-- dropped before the table, so no trigger names a table that does not exist while it is remade.
--
-- `(status, lane, created_at)` becomes `(status, lane, mode, created_at)`: the same entries, so
-- no more rows written, and the oldest job of one lane, mode and status is one indexed lookup.
--
-- The trigger bodies keep migration 0012's form (no CASE, an upper-case END).

DROP TRIGGER IF EXISTS jobs_rollup_insert;
DROP TRIGGER IF EXISTS jobs_counts_update;
DROP TRIGGER IF EXISTS jobs_dead_open;
DROP TRIGGER IF EXISTS jobs_rollup_insert_dead;
DROP TRIGGER IF EXISTS jobs_counts_delete;

DROP TABLE job_counts;
CREATE TABLE job_counts (
  status  TEXT NOT NULL,
  lane    TEXT NOT NULL,
  mode    TEXT NOT NULL,
  n       INTEGER NOT NULL,
  PRIMARY KEY (status, lane, mode)
) WITHOUT ROWID;
INSERT INTO job_counts (status, lane, mode, n)
  SELECT status, lane, mode, COUNT(*) FROM jobs GROUP BY 1, 2, 3;
INSERT INTO job_counts (status, lane, mode, n)
  SELECT 'dead_open', 'all', 'all', COUNT(*) FROM jobs
  WHERE status = 'dead_lettered' AND discarded_at IS NULL AND replayed_to IS NULL;

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
  INSERT INTO job_counts (status, lane, mode, n) VALUES (NEW.status, NEW.lane, NEW.mode, 1)
    ON CONFLICT (status, lane, mode) DO UPDATE SET n = n + 1;
  INSERT INTO user_queued (user_id, n) SELECT NEW.user_id, 1 WHERE NEW.status = 'queued'
    ON CONFLICT (user_id) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER jobs_counts_update AFTER UPDATE OF status, lane, mode, user_id ON jobs
WHEN OLD.status != NEW.status OR OLD.lane != NEW.lane OR OLD.mode != NEW.mode
  OR OLD.user_id != NEW.user_id
BEGIN
  UPDATE job_counts SET n = n - 1
    WHERE status = OLD.status AND lane = OLD.lane AND mode = OLD.mode;
  INSERT INTO job_counts (status, lane, mode, n) VALUES (NEW.status, NEW.lane, NEW.mode, 1)
    ON CONFLICT (status, lane, mode) DO UPDATE SET n = n + 1;
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
    WHERE status = 'dead_open' AND lane = 'all' AND mode = 'all';
END;

CREATE TRIGGER jobs_rollup_insert_dead AFTER INSERT ON jobs
WHEN NEW.status = 'dead_lettered' AND NEW.discarded_at IS NULL AND NEW.replayed_to IS NULL
BEGIN
  UPDATE job_counts SET n = n + 1 WHERE status = 'dead_open' AND lane = 'all' AND mode = 'all';
END;

CREATE TRIGGER jobs_counts_delete AFTER DELETE ON jobs
BEGIN
  UPDATE job_counts SET n = n - 1
    WHERE status = OLD.status AND lane = OLD.lane AND mode = OLD.mode;
  UPDATE job_counts SET n = n - 1 WHERE status = 'dead_open' AND lane = 'all' AND mode = 'all'
    AND OLD.status = 'dead_lettered' AND OLD.discarded_at IS NULL AND OLD.replayed_to IS NULL;
  UPDATE user_queued SET n = n - 1 WHERE user_id = OLD.user_id AND OLD.status = 'queued';
END;

DROP INDEX IF EXISTS idx_jobs_status_lane_created;
CREATE INDEX idx_jobs_status_lane_mode_created ON jobs (status, lane, mode, created_at);
