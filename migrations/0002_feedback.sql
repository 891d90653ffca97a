-- The feedback flow: the input text, the model's raw answer and the parsed analysis live on the
-- row (all small and bounded); the raw answer is also kept in R2 under results/<id>.
ALTER TABLE jobs ADD COLUMN input_text TEXT;
ALTER TABLE jobs ADD COLUMN raw_text TEXT;
ALTER TABLE jobs ADD COLUMN analysis TEXT;

-- The cron poller looks jobs up by the Anthropic batch they are in.
CREATE INDEX idx_jobs_anthropic_batch ON jobs (anthropic_batch_id) WHERE anthropic_batch_id IS NOT NULL;
-- Newest-first lists of a user's jobs of one kind.
CREATE INDEX idx_jobs_user_kind_created ON jobs (user_id, kind, created_at);
