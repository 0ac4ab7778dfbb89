-- torchsweep store, migration 2: compact result rows, so that grouped
-- queries over millions of results read little more than the figures.
--  * Per-step times move into their epoch's row as one JSON array
--    (result_epochs.step_seconds) instead of one row per step: ingest writes
--    1 + epochs rows per result instead of 1 + epochs + steps. result_steps
--    stays readable as a view with the same columns.
--  * The full result document moves to result_documents: a scan of results
--    no longer reads ~2.5 KB of JSON per row.

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

CREATE TABLE result_documents (
  job_id    TEXT NOT NULL,
  attempt   INTEGER NOT NULL,
  document  TEXT NOT NULL,                    -- the full result document (JSON)
  PRIMARY KEY (job_id, attempt),
  FOREIGN KEY (job_id, attempt) REFERENCES results (job_id, attempt) ON DELETE CASCADE
);

INSERT INTO result_documents (job_id, attempt, document) SELECT job_id, attempt, document FROM results;

ALTER TABLE results DROP COLUMN document;
