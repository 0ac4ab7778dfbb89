-- torchsweep store, migration 2: per-step times move into their epoch's row
-- as one JSON array (result_epochs.step_seconds), instead of one row per
-- step. Ingest writes 1 + epochs rows per result instead of
-- 1 + epochs + steps (docs/benchmarks.md). result_steps stays readable, as
-- a view with the same columns, for the sqlite3 shell and old queries.

ALTER TABLE result_epochs ADD COLUMN step_seconds TEXT NOT NULL DEFAULT '[]';  -- JSON array, in step order

UPDATE result_epochs SET step_seconds = (
  SELECT json_group_array(seconds) FROM (
    SELECT s.seconds FROM result_steps s
    WHERE s.job_id = result_epochs.job_id AND s.attempt = result_epochs.attempt AND s.epoch = result_epochs.epoch
    ORDER BY s.step));

DROP TABLE result_steps;

CREATE VIEW result_steps AS
SELECT e.job_id, e.attempt, e.epoch, CAST(j.key AS INTEGER) AS step, j.value AS seconds
FROM result_epochs e, json_each(e.step_seconds) j;
