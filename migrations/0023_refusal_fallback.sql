-- Refusal fallback (issue 33, part 3; `pipeline::refusal`).
--
-- `jobs.fallback_model` is the model a job asked to be retried on when its model refuses.
-- `jobs.refusal` is its refused attempt once a refusal moved it to the fallback (a
-- `RefusalView` as JSON: the model that refused, `stop_details`, its tokens and cost). The row's
-- own token and cost columns keep the attempt that ends the job, so 0012's and 0018's triggers
-- count that one under the model that answered it; the refused attempt is counted here, once,
-- when `refusal` is first written: under the model that refused it in both usage rollups (its
-- `refusals` count, no job), and in what the job commits against its user's and its tags' caps
-- (0010, 0020). Reconciliation, which compares the rollup per day and model with Anthropic's
-- cost report, so sees each attempt under the model that billed it.
--
-- Trigger bodies without CASE and ending with an upper-case END (cloudflare/workers-sdk#2495);
-- an upsert from a SELECT needs a WHERE (SQLite's parsing-ambiguity rule), hence `WHERE 1`.

ALTER TABLE jobs ADD COLUMN fallback_model TEXT;
ALTER TABLE jobs ADD COLUMN refusal TEXT;
ALTER TABLE usage_days ADD COLUMN refusals INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_tag_days ADD COLUMN refusals INTEGER NOT NULL DEFAULT 0;

CREATE TRIGGER jobs_refusal AFTER UPDATE OF refusal ON jobs
WHEN OLD.refusal IS NULL AND NEW.refusal IS NOT NULL
BEGIN
  INSERT INTO usage_days (user_id, day, model, mode, jobs, input_tokens, output_tokens,
      cache_write_tokens, cache_read_tokens, cost_micros, unknown_cost_micros, cost_unknown,
      failures, refusals)
    VALUES (NEW.user_id, CAST(NEW.created_at / 86400000 AS INTEGER),
      json_extract(NEW.refusal, '$.model'), NEW.mode, 0,
      json_extract(NEW.refusal, '$.input_tokens'), json_extract(NEW.refusal, '$.output_tokens'),
      json_extract(NEW.refusal, '$.cache_write_tokens'),
      json_extract(NEW.refusal, '$.cache_read_tokens'),
      json_extract(NEW.refusal, '$.cost_micros') * (json_extract(NEW.refusal, '$.cost_unknown') = 0),
      json_extract(NEW.refusal, '$.cost_micros') * (json_extract(NEW.refusal, '$.cost_unknown') != 0),
      json_extract(NEW.refusal, '$.cost_unknown') != 0, 0, 1)
    ON CONFLICT (user_id, day, model, mode) DO UPDATE SET
      input_tokens = input_tokens + excluded.input_tokens,
      output_tokens = output_tokens + excluded.output_tokens,
      cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens,
      cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens,
      cost_micros = cost_micros + excluded.cost_micros,
      unknown_cost_micros = unknown_cost_micros + excluded.unknown_cost_micros,
      cost_unknown = cost_unknown + excluded.cost_unknown,
      refusals = refusals + 1;
  INSERT INTO usage_tag_days (tag, day, user_id, model, mode, jobs, input_tokens, output_tokens,
      cache_write_tokens, cache_read_tokens, cost_micros, unknown_cost_micros, cost_unknown,
      failures, refusals)
    SELECT t.value, CAST(NEW.created_at / 86400000 AS INTEGER), NEW.user_id,
      json_extract(NEW.refusal, '$.model'), NEW.mode, 0,
      json_extract(NEW.refusal, '$.input_tokens'), json_extract(NEW.refusal, '$.output_tokens'),
      json_extract(NEW.refusal, '$.cache_write_tokens'),
      json_extract(NEW.refusal, '$.cache_read_tokens'),
      json_extract(NEW.refusal, '$.cost_micros') * (json_extract(NEW.refusal, '$.cost_unknown') = 0),
      json_extract(NEW.refusal, '$.cost_micros') * (json_extract(NEW.refusal, '$.cost_unknown') != 0),
      json_extract(NEW.refusal, '$.cost_unknown') != 0, 0, 1
    FROM json_each(NEW.tags) AS t WHERE 1
    ON CONFLICT (tag, day, user_id, model, mode) DO UPDATE SET
      input_tokens = input_tokens + excluded.input_tokens,
      output_tokens = output_tokens + excluded.output_tokens,
      cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens,
      cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens,
      cost_micros = cost_micros + excluded.cost_micros,
      unknown_cost_micros = unknown_cost_micros + excluded.unknown_cost_micros,
      cost_unknown = cost_unknown + excluded.cost_unknown,
      refusals = refusals + 1;
  INSERT OR IGNORE INTO spend (user_id, period, committed_micros)
    VALUES (NEW.user_id, 'd:' || CAST(NEW.created_at / 86400000 AS INTEGER), 0);
  INSERT OR IGNORE INTO spend (user_id, period, committed_micros)
    VALUES (NEW.user_id, 'm:' || strftime('%Y-%m', NEW.created_at / 1000, 'unixepoch'), 0);
  UPDATE spend SET committed_micros = committed_micros + json_extract(NEW.refusal, '$.cost_micros')
    WHERE user_id = NEW.user_id AND period IN (
      'd:' || CAST(NEW.created_at / 86400000 AS INTEGER),
      'm:' || strftime('%Y-%m', NEW.created_at / 1000, 'unixepoch'));
  INSERT INTO tag_spend (tag, day, committed_micros)
    SELECT t.value, CAST(NEW.created_at / 86400000 AS INTEGER),
      json_extract(NEW.refusal, '$.cost_micros')
    FROM json_each(NEW.tags) AS t WHERE 1
    ON CONFLICT (tag, day) DO UPDATE SET
      committed_micros = committed_micros + excluded.committed_micros;
END;
