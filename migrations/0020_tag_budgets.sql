-- Budgets per tag (issue 20, part 2): a daily cap on what the jobs carrying a tag may commit,
-- enforced as atomically as the per-user caps of 0010.
--
-- `tag_budgets` holds a tag's daily cap (micro-dollars, UTC days of the jobs' creation).
-- `tag_spend` is 0010's `spend` per tag: per tag and day, the cost of the tagged jobs plus the
-- reservations of the live ones, kept by triggers in the same transaction as every job write.
-- `jobs_tag_admission` aborts an insert whose reservation would take one of its tags past its
-- cap with 'tag_cap_exceeded' (a message of its own: the per-user refusal is
-- 'budget_exceeded'), which rolls back the whole D1 batch it is in.
--
-- Trigger bodies without CASE and ending with an upper-case END (cloudflare/workers-sdk#2495);
-- an upsert from a SELECT needs a WHERE (SQLite's parsing-ambiguity rule), hence `WHERE 1`.

CREATE TABLE tag_budgets (
  tag               TEXT PRIMARY KEY,
  daily_cap_micros  INTEGER NOT NULL,
  updated_at        INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE tag_spend (
  tag               TEXT NOT NULL,
  day               INTEGER NOT NULL,
  committed_micros  INTEGER NOT NULL,
  PRIMARY KEY (tag, day)
) WITHOUT ROWID;

INSERT INTO tag_spend (tag, day, committed_micros)
  SELECT t.value, CAST(j.created_at / 86400000 AS INTEGER), SUM(j.cost_micros + j.reserved_micros)
  FROM jobs j, json_each(j.tags) t WHERE j.tags IS NOT NULL GROUP BY 1, 2;

CREATE TRIGGER jobs_tag_admission BEFORE INSERT ON jobs
WHEN NEW.reserved_micros > 0 AND NEW.tags IS NOT NULL AND EXISTS (
  SELECT 1 FROM json_each(NEW.tags) t JOIN tag_budgets b ON b.tag = t.value
  WHERE NEW.reserved_micros + COALESCE((
    SELECT s.committed_micros FROM tag_spend s WHERE s.tag = t.value
      AND s.day = CAST(NEW.created_at / 86400000 AS INTEGER)), 0) > b.daily_cap_micros)
BEGIN
  SELECT RAISE(ABORT, 'tag_cap_exceeded');
END;

CREATE TRIGGER jobs_tag_commit AFTER INSERT ON jobs
WHEN NEW.tags IS NOT NULL AND NEW.cost_micros + NEW.reserved_micros > 0
BEGIN
  INSERT INTO tag_spend (tag, day, committed_micros)
    SELECT t.value, CAST(NEW.created_at / 86400000 AS INTEGER),
      NEW.cost_micros + NEW.reserved_micros
    FROM json_each(NEW.tags) t WHERE 1
    ON CONFLICT (tag, day) DO UPDATE SET
      committed_micros = committed_micros + excluded.committed_micros;
END;

CREATE TRIGGER jobs_tag_settle AFTER UPDATE OF cost_micros, reserved_micros ON jobs
WHEN NEW.tags IS NOT NULL
  AND NEW.cost_micros + NEW.reserved_micros != OLD.cost_micros + OLD.reserved_micros
BEGIN
  INSERT INTO tag_spend (tag, day, committed_micros)
    SELECT t.value, CAST(NEW.created_at / 86400000 AS INTEGER),
      (NEW.cost_micros + NEW.reserved_micros) - (OLD.cost_micros + OLD.reserved_micros)
    FROM json_each(NEW.tags) t WHERE 1
    ON CONFLICT (tag, day) DO UPDATE SET
      committed_micros = committed_micros + excluded.committed_micros;
END;
