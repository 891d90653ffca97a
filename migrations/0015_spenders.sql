-- Who spends what (issue 19): the admins' view of cost, tokens and jobs by user and model over
-- a range of days reads the usage rollup by day across every user. Its key starts with the
-- user, so the range needs its own index. A rollup row's day never changes, so the index is
-- written once per (user, day, model, mode) — the row's first job — not at each settlement.
CREATE INDEX idx_usage_days_day ON usage_days (day, user_id, model);
