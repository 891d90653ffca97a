-- Consecutive overload answers (529 / 5xx) of a job's current model: two in a row move it to
-- the next model of MODEL_FALLBACKS; `model` records the model that answered.
ALTER TABLE jobs ADD COLUMN overloads INTEGER NOT NULL DEFAULT 0;
