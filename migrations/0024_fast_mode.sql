-- Fast mode (issue 33, part 4; `pipeline::models::FastMode`), counted apart.
--
-- `jobs.speed` is `fast` once a fast-mode answer settled the job (`usage.speed`), NULL
-- otherwise. Both usage rollups key a fast job's figures under the mode `sync_fast` (the job's
-- mode and `_fast`), so the usage and cost views show fast mode apart at no extra row per job:
-- 0012's and 0018's update triggers are re-created here with that key, and with `speed` among
-- the columns they watch. A job is inserted with no speed and no spend, so the insert triggers
-- are unchanged. The consistency check's scans (`worker/src/store/sql.rs`) key jobs the same.
--
-- Trigger bodies without CASE and ending with an upper-case END (cloudflare/workers-sdk#2495):
-- `substr('_fast', 1, 5 * (speed IS 'fast'))` is `_fast` for a fast job and '' otherwise.

ALTER TABLE jobs ADD COLUMN speed TEXT;

DROP TRIGGER IF EXISTS jobs_rollup_update;
DROP TRIGGER IF EXISTS jobs_tags_update;

CREATE TRIGGER jobs_rollup_update AFTER UPDATE OF user_id, created_at, model, mode, status,
    input_tokens, output_tokens, cache_write_tokens, cache_read_tokens, cost_micros,
    cost_unknown, speed ON jobs
WHEN OLD.user_id != NEW.user_id OR OLD.created_at != NEW.created_at
  OR OLD.model IS NOT NEW.model OR OLD.mode != NEW.mode
  OR (OLD.status IN ('failed', 'dead_lettered')) != (NEW.status IN ('failed', 'dead_lettered'))
  OR OLD.input_tokens != NEW.input_tokens OR OLD.output_tokens != NEW.output_tokens
  OR OLD.cache_write_tokens != NEW.cache_write_tokens
  OR OLD.cache_read_tokens != NEW.cache_read_tokens OR OLD.cost_micros != NEW.cost_micros
  OR OLD.cost_unknown != NEW.cost_unknown OR OLD.speed IS NOT NEW.speed
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
      AND model = COALESCE(OLD.model, '') AND mode = OLD.mode || substr('_fast', 1, 5 * (OLD.speed IS 'fast'));
  INSERT INTO usage_days (user_id, day, model, mode, jobs, input_tokens, output_tokens,
      cache_write_tokens, cache_read_tokens, cost_micros, unknown_cost_micros, cost_unknown,
      failures)
    VALUES (NEW.user_id, CAST(NEW.created_at / 86400000 AS INTEGER), COALESCE(NEW.model, ''),
      NEW.mode || substr('_fast', 1, 5 * (NEW.speed IS 'fast')), 1, NEW.input_tokens, NEW.output_tokens, NEW.cache_write_tokens,
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
    cost_unknown, tags, speed ON jobs
WHEN (OLD.tags IS NOT NULL OR NEW.tags IS NOT NULL) AND (OLD.tags IS NOT NEW.tags
  OR OLD.user_id != NEW.user_id OR OLD.created_at != NEW.created_at
  OR OLD.model IS NOT NEW.model OR OLD.mode != NEW.mode
  OR (OLD.status IN ('failed', 'dead_lettered')) != (NEW.status IN ('failed', 'dead_lettered'))
  OR OLD.input_tokens != NEW.input_tokens OR OLD.output_tokens != NEW.output_tokens
  OR OLD.cache_write_tokens != NEW.cache_write_tokens
  OR OLD.cache_read_tokens != NEW.cache_read_tokens OR OLD.cost_micros != NEW.cost_micros
  OR OLD.cost_unknown != NEW.cost_unknown OR OLD.speed IS NOT NEW.speed)
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
      AND model = COALESCE(OLD.model, '') AND mode = OLD.mode || substr('_fast', 1, 5 * (OLD.speed IS 'fast'));
  INSERT INTO usage_tag_days (tag, day, user_id, model, mode, jobs, input_tokens, output_tokens,
      cache_write_tokens, cache_read_tokens, cost_micros, unknown_cost_micros, cost_unknown,
      failures)
    SELECT t.value, CAST(NEW.created_at / 86400000 AS INTEGER), NEW.user_id,
      COALESCE(NEW.model, ''), NEW.mode || substr('_fast', 1, 5 * (NEW.speed IS 'fast')), 1, NEW.input_tokens, NEW.output_tokens,
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
