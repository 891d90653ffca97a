-- Every call made for a job: which model, when, and how it ended (the job page shows them).
CREATE TABLE job_attempts (
  job_id      TEXT NOT NULL,
  n           INTEGER NOT NULL,
  model       TEXT,
  started_at  INTEGER NOT NULL,
  ended_at    INTEGER NOT NULL,
  outcome     TEXT NOT NULL,
  error       TEXT,
  PRIMARY KEY (job_id, n)
);
