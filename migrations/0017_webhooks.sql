-- Completion webhooks (issue 19, pipeline::webhooks). A job may name a `callback_url` (or take
-- its API key's); the key's signing secret (shown once, at creation) signs the deliveries.
-- When a job with a callback_url reaches a terminal status, a trigger records its delivery in
-- the same transaction as the status change, whichever path ended it (settlement, failure,
-- dead letter, expiry, cancel); the cron sends what is due and retries with backoff. The
-- delivery's id is the `webhook-id` of every attempt and re-send; its body is fixed at the
-- first attempt, so a re-send is the same message.
ALTER TABLE jobs ADD COLUMN callback_url TEXT;
ALTER TABLE jobs ADD COLUMN callback_key TEXT;
ALTER TABLE api_keys ADD COLUMN callback_url TEXT;
ALTER TABLE api_keys ADD COLUMN webhook_secret TEXT;

CREATE TABLE webhook_deliveries (
  id          TEXT PRIMARY KEY,
  job_id      TEXT NOT NULL UNIQUE,
  user_id     TEXT NOT NULL,
  url         TEXT NOT NULL,
  key_id      TEXT,
  state       TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts    INTEGER NOT NULL DEFAULT 0,
  next_at     INTEGER,
  body        TEXT,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
);
CREATE INDEX idx_webhooks_due ON webhook_deliveries (next_at) WHERE state = 'pending';

CREATE TABLE webhook_attempts (
  delivery_id  TEXT NOT NULL,
  n            INTEGER NOT NULL,
  at           INTEGER NOT NULL,
  status       INTEGER,
  error        TEXT,
  ms           INTEGER NOT NULL,
  resend       INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (delivery_id, n)
) WITHOUT ROWID;

CREATE TRIGGER jobs_webhook AFTER UPDATE OF status ON jobs
WHEN NEW.callback_url IS NOT NULL
  AND NEW.status IN ('completed', 'failed', 'dead_lettered', 'expired', 'canceled', 'enqueue_failed')
  AND OLD.status NOT IN ('completed', 'failed', 'dead_lettered', 'expired', 'canceled', 'enqueue_failed')
BEGIN
  INSERT INTO webhook_deliveries (id, job_id, user_id, url, key_id, state, next_at, created_at,
      updated_at)
    VALUES ('msg_' || NEW.id, NEW.id, NEW.user_id, NEW.callback_url, NEW.callback_key, 'pending',
      NEW.updated_at, NEW.updated_at, NEW.updated_at)
    ON CONFLICT (id) DO NOTHING;
END;

-- Retention deletes a finished job with its webhook's delivery and attempts (two primary-key
-- lookups that find nothing for a job without a callback).
CREATE TRIGGER jobs_webhook_delete AFTER DELETE ON jobs
WHEN OLD.callback_url IS NOT NULL
BEGIN
  DELETE FROM webhook_attempts WHERE delivery_id = 'msg_' || OLD.id;
  DELETE FROM webhook_deliveries WHERE job_id = OLD.id;
END;
