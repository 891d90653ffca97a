-- Budgets that hold under a burst. Every job reserves its worst-case cost at admission
-- (`reserved_micros`, computed by pipeline::ops::budgets::worst_case); a change into a terminal
-- status sets it back to 0 (pipeline::status::Transition::set), so a job commits its worst case
-- while it may still spend and its real cost once it ended.
--
-- `spend` holds, per user and UTC day ('d:<days since the epoch>') and month ('m:YYYY-MM'),
-- what is committed: the sum of cost_micros + reserved_micros of the jobs created then. The
-- triggers below keep it exact on every insert and on every update of either column, whichever
-- statement makes it, so no settlement path can forget it.
--
-- `jobs_admission` is the atomic check: an insert whose reservation would take what is committed
-- past the user's daily or monthly cap is aborted with 'budget_exceeded', which rolls back the
-- whole D1 batch it is in (the idempotency claim, an upload's other files). Concurrent requests
-- cannot all pass it: D1 runs one write transaction at a time, and each sees the spend of the
-- ones before it.
--
-- The trigger bodies use no CASE and end with an upper-case END, the form wrangler's statement
-- splitter keeps whole (cloudflare/workers-sdk#2495).

ALTER TABLE jobs ADD COLUMN reserved_micros INTEGER NOT NULL DEFAULT 0;
-- A job the user canceled while it was inside a Message Batch: the batch may still run and bill
-- its request, so the poller keeps polling that batch and records what it billed (the job stays
-- `canceled`), then clears the mark.
ALTER TABLE jobs ADD COLUMN awaiting_bill INTEGER NOT NULL DEFAULT 0;
ALTER TABLE user_budgets ADD COLUMN monthly_cap_micros INTEGER;

CREATE TABLE spend (
  user_id           TEXT NOT NULL,
  period            TEXT NOT NULL,
  committed_micros  INTEGER NOT NULL,
  PRIMARY KEY (user_id, period)
) WITHOUT ROWID;

INSERT INTO spend (user_id, period, committed_micros)
  SELECT user_id, 'd:' || CAST(created_at / 86400000 AS INTEGER), SUM(cost_micros)
  FROM jobs GROUP BY 1, 2;
INSERT INTO spend (user_id, period, committed_micros)
  SELECT user_id, 'm:' || strftime('%Y-%m', created_at / 1000, 'unixepoch'), SUM(cost_micros)
  FROM jobs GROUP BY 1, 2;

CREATE TRIGGER jobs_admission BEFORE INSERT ON jobs
WHEN NEW.reserved_micros > 0 AND EXISTS (
  SELECT 1 FROM user_budgets b WHERE b.user_id = NEW.user_id AND (
    (b.daily_cap_micros IS NOT NULL AND NEW.reserved_micros + COALESCE((
      SELECT s.committed_micros FROM spend s WHERE s.user_id = NEW.user_id
        AND s.period = 'd:' || CAST(NEW.created_at / 86400000 AS INTEGER)), 0)
      > b.daily_cap_micros)
    OR (b.monthly_cap_micros IS NOT NULL AND NEW.reserved_micros + COALESCE((
      SELECT s.committed_micros FROM spend s WHERE s.user_id = NEW.user_id
        AND s.period = 'm:' || strftime('%Y-%m', NEW.created_at / 1000, 'unixepoch')), 0)
      > b.monthly_cap_micros)))
BEGIN
  SELECT RAISE(ABORT, 'budget_exceeded');
END;

CREATE TRIGGER jobs_commit AFTER INSERT ON jobs
WHEN NEW.cost_micros + NEW.reserved_micros > 0
BEGIN
  INSERT OR IGNORE INTO spend (user_id, period, committed_micros)
    VALUES (NEW.user_id, 'd:' || CAST(NEW.created_at / 86400000 AS INTEGER), 0);
  INSERT OR IGNORE INTO spend (user_id, period, committed_micros)
    VALUES (NEW.user_id, 'm:' || strftime('%Y-%m', NEW.created_at / 1000, 'unixepoch'), 0);
  UPDATE spend SET committed_micros = committed_micros + NEW.cost_micros + NEW.reserved_micros
    WHERE user_id = NEW.user_id AND period IN (
      'd:' || CAST(NEW.created_at / 86400000 AS INTEGER),
      'm:' || strftime('%Y-%m', NEW.created_at / 1000, 'unixepoch'));
END;

CREATE TRIGGER jobs_settle AFTER UPDATE OF cost_micros, reserved_micros ON jobs
WHEN NEW.cost_micros + NEW.reserved_micros != OLD.cost_micros + OLD.reserved_micros
BEGIN
  INSERT OR IGNORE INTO spend (user_id, period, committed_micros)
    VALUES (NEW.user_id, 'd:' || CAST(NEW.created_at / 86400000 AS INTEGER), 0);
  INSERT OR IGNORE INTO spend (user_id, period, committed_micros)
    VALUES (NEW.user_id, 'm:' || strftime('%Y-%m', NEW.created_at / 1000, 'unixepoch'), 0);
  UPDATE spend SET committed_micros = committed_micros
      + (NEW.cost_micros + NEW.reserved_micros) - (OLD.cost_micros + OLD.reserved_micros)
    WHERE user_id = NEW.user_id AND period IN (
      'd:' || CAST(NEW.created_at / 86400000 AS INTEGER),
      'm:' || strftime('%Y-%m', NEW.created_at / 1000, 'unixepoch'));
END;
