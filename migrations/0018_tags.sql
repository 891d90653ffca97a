-- Cost by tag (issue 20): a job's `key=value` tags, and usage summed per tag.
--
-- `jobs.tags` is the job's tags as a sorted JSON array (NULL for none; `pipeline::tags`).
-- `usage_tag_days` is `usage_days` with the tag in front of its key: per tag, user, UTC day of
-- creation, model ('' while none answered) and mode, the same sums. A job with two tags counts
-- once under each. Triggers keep it exact on every insert and on every update of the summed
-- columns, in the same transaction as the write, like 0012's; deleting a job (retention) leaves
-- it: what was billed stays billed.
--
-- `json_each(NULL)` has no rows, so untagged jobs cost the triggers nothing but their WHEN.
-- An upsert from a SELECT needs a WHERE (SQLite's parsing-ambiguity rule), hence `WHERE 1`.

ALTER TABLE jobs ADD COLUMN tags TEXT;

CREATE TABLE usage_tag_days (
  tag                 TEXT NOT NULL,
  day                 INTEGER NOT NULL,
  user_id             TEXT NOT NULL,
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
  PRIMARY KEY (tag, day, user_id, model, mode)
) WITHOUT ROWID;

-- The report of every user's tags over a range of days.
CREATE INDEX idx_usage_tag_days_day ON usage_tag_days (day);

CREATE TRIGGER jobs_tags_insert AFTER INSERT ON jobs
WHEN NEW.tags IS NOT NULL
BEGIN
  INSERT INTO usage_tag_days (tag, day, user_id, model, mode, jobs, input_tokens, output_tokens,
      cache_write_tokens, cache_read_tokens, cost_micros, unknown_cost_micros, cost_unknown,
      failures)
    SELECT t.value, CAST(NEW.created_at / 86400000 AS INTEGER), NEW.user_id,
      COALESCE(NEW.model, ''), NEW.mode, 1, NEW.input_tokens, NEW.output_tokens,
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

CREATE TRIGGER jobs_tags_update AFTER UPDATE OF user_id, created_at, model, mode, status,
    input_tokens, output_tokens, cache_write_tokens, cache_read_tokens, cost_micros,
    cost_unknown, tags ON jobs
WHEN (OLD.tags IS NOT NULL OR NEW.tags IS NOT NULL) AND (OLD.tags IS NOT NEW.tags
  OR OLD.user_id != NEW.user_id OR OLD.created_at != NEW.created_at
  OR OLD.model IS NOT NEW.model OR OLD.mode != NEW.mode
  OR (OLD.status IN ('failed', 'dead_lettered')) != (NEW.status IN ('failed', 'dead_lettered'))
  OR OLD.input_tokens != NEW.input_tokens OR OLD.output_tokens != NEW.output_tokens
  OR OLD.cache_write_tokens != NEW.cache_write_tokens
  OR OLD.cache_read_tokens != NEW.cache_read_tokens OR OLD.cost_micros != NEW.cost_micros
  OR OLD.cost_unknown != NEW.cost_unknown)
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
      AND model = COALESCE(OLD.model, '') AND mode = OLD.mode;
  INSERT INTO usage_tag_days (tag, day, user_id, model, mode, jobs, input_tokens, output_tokens,
      cache_write_tokens, cache_read_tokens, cost_micros, unknown_cost_micros, cost_unknown,
      failures)
    SELECT t.value, CAST(NEW.created_at / 86400000 AS INTEGER), NEW.user_id,
      COALESCE(NEW.model, ''), NEW.mode, 1, NEW.input_tokens, NEW.output_tokens,
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
