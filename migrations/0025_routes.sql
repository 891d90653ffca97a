-- Routes besides the Anthropic API (issue 36; `pipeline::provider`): which route answered.
--
-- `jobs.route` is the route whose answer settled the job (`bedrock`, `vertex`), NULL for the
-- Anthropic API — every job before this migration, every batch-mode job, and every sync job
-- the primary answered. `job_attempts.route` is the route each call went to, NULL likewise.
--
-- Both usage rollups key a job answered elsewhere under its mode and `@route` (`sync@bedrock`),
-- as 0024 keys fast mode, so usage and cost split by route at no extra row per job, and
-- reconciliation compares only the Anthropic API's rows (no `@`) with Anthropic's bill: 0024's
-- update triggers are re-created here with that key and with `route` among the columns they
-- watch. The consistency check's scans (`worker/src/store/sql.rs`) key jobs the same.

ALTER TABLE jobs ADD COLUMN route TEXT;
ALTER TABLE job_attempts ADD COLUMN route TEXT;

DROP TRIGGER IF EXISTS jobs_rollup_update;
DROP TRIGGER IF EXISTS jobs_tags_update;

CREATE TRIGGER jobs_rollup_update AFTER UPDATE OF user_id, created_at, model, mode, status,
    input_tokens, output_tokens, cache_write_tokens, cache_read_tokens, cost_micros,
    cost_unknown, speed, route ON jobs
WHEN OLD.user_id != NEW.user_id OR OLD.created_at != NEW.created_at
  OR OLD.model IS NOT NEW.model OR OLD.mode != NEW.mode
  OR (OLD.status IN ('failed', 'dead_lettered')) != (NEW.status IN ('failed', 'dead_lettered'))
  OR OLD.input_tokens != NEW.input_tokens OR OLD.output_tokens != NEW.output_tokens
  OR OLD.cache_write_tokens != NEW.cache_write_tokens
  OR OLD.cache_read_tokens != NEW.cache_read_tokens OR OLD.cost_micros != NEW.cost_micros
  OR OLD.cost_unknown != NEW.cost_unknown OR OLD.speed IS NOT NEW.speed
  OR OLD.route IS NOT NEW.route
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
      AND model = COALESCE(OLD.model, '') AND mode = OLD.mode || substr('_fast', 1, 5 * (OLD.speed IS 'fast')) || COALESCE('@' || OLD.route, '');
  INSERT INTO usage_days (user_id, day, model, mode, jobs, input_tokens, output_tokens,
      cache_write_tokens, cache_read_tokens, cost_micros, unknown_cost_micros, cost_unknown,
      failures)
    VALUES (NEW.user_id, CAST(NEW.created_at / 86400000 AS INTEGER), COALESCE(NEW.model, ''),
      NEW.mode || substr('_fast', 1, 5 * (NEW.speed IS 'fast')) || COALESCE('@' || NEW.route, ''), 1, NEW.input_tokens, NEW.output_tokens, NEW.cache_write_tokens,
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

CREATE TRIGGER jobs_tags_update AFTER UPDATE OF user_id, created_at, model, mode, status,
    input_tokens, output_tokens, cache_write_tokens, cache_read_tokens, cost_micros,
    cost_unknown, tags, speed, route ON jobs
WHEN (OLD.tags IS NOT NULL OR NEW.tags IS NOT NULL) AND (OLD.tags IS NOT NEW.tags
  OR OLD.user_id != NEW.user_id OR OLD.created_at != NEW.created_at
  OR OLD.model IS NOT NEW.model OR OLD.mode != NEW.mode
  OR (OLD.status IN ('failed', 'dead_lettered')) != (NEW.status IN ('failed', 'dead_lettered'))
  OR OLD.input_tokens != NEW.input_tokens OR OLD.output_tokens != NEW.output_tokens
  OR OLD.cache_write_tokens != NEW.cache_write_tokens
  OR OLD.cache_read_tokens != NEW.cache_read_tokens OR OLD.cost_micros != NEW.cost_micros
  OR OLD.cost_unknown != NEW.cost_unknown OR OLD.speed IS NOT NEW.speed
  OR OLD.route IS NOT NEW.route)
BEGIN
  UPDATE usage_tag_days SET
      jobs = jobs - 1,
      input_tokens = input_tokens - OLD.input_tokens,
      output_tokens = output_tokens - OLD.output_tokens,
      cache_write_tokens = cache_write_tokens - OLD.cache_write_tokens,
      cache_read_tokens = cache_read_tokens - OLD.cache_read_tokens,
      cost_micros = cost_micros - OLD.cost_micros * (OLD.cost_unknown = 0),
      unknown_cost_micros = unknown_cost_micros - OLD.cost_micros * (OLD.cost_unknown != 0),
      cost_unknown = cost_unknown - (OLD.cost_unknown != 0),
      failures = failures - (OLD.status IN ('failed', 'dead_lettered'))
    WHERE tag IN (SELECT value FROM json_each(OLD.tags))
      AND day = CAST(OLD.created_at / 86400000 AS INTEGER) AND user_id = OLD.user_id
      AND model = COALESCE(OLD.model, '') AND mode = OLD.mode || substr('_fast', 1, 5 * (OLD.speed IS 'fast')) || COALESCE('@' || OLD.route, '');
  INSERT INTO usage_tag_days (tag, day, user_id, model, mode, jobs, input_tokens, output_tokens,
      cache_write_tokens, cache_read_tokens, cost_micros, unknown_cost_micros, cost_unknown,
      failures)
    SELECT t.value, CAST(NEW.created_at / 86400000 AS INTEGER), NEW.user_id,
      COALESCE(NEW.model, ''), NEW.mode || substr('_fast', 1, 5 * (NEW.speed IS 'fast')) || COALESCE('@' || NEW.route, ''), 1, NEW.input_tokens, NEW.output_tokens,
      NEW.cache_write_tokens, NEW.cache_read_tokens, NEW.cost_micros * (NEW.cost_unknown = 0),
      NEW.cost_micros * (NEW.cost_unknown != 0), NEW.cost_unknown != 0,
      NEW.status IN ('failed', 'dead_lettered')
    FROM json_each(NEW.tags) AS t WHERE 1
    ON CONFLICT (tag, day, user_id, model, mode) DO UPDATE SET
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
