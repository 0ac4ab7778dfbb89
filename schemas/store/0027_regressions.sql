-- torchsweep store, migration 27: the regressions a nightly found (docs/bisect.md,
-- "A stored regression"). One row a configuration the regression rule called
-- regressed on a night against its baseline night, with what its reruns made
-- of it. Its id is what `torchsweep bisect ID` takes and `query --regressions`
-- lists; the client computes the rows from the store read-only
-- (readers/regression_records.hpp), the coordinator records them.
CREATE TABLE regressions (
  regression_id TEXT PRIMARY KEY,  -- r- and 12 hex digits of the night, the baseline and the configuration
  recorded_at TEXT NOT NULL,
  sweep_id TEXT NOT NULL REFERENCES sweeps (sweep_id),           -- the night
  baseline_sweep_id TEXT NOT NULL REFERENCES sweeps (sweep_id),  -- the night it was judged against
  configuration TEXT NOT NULL,     -- JSON: the configuration axes with a value
  job TEXT,                        -- JSON: the night's newest run's job, as submitted (what a bisection runs)
  metric TEXT NOT NULL,
  change REAL,                     -- the metric's relative change
  p_value REAL,
  threshold REAL,
  classification TEXT NOT NULL,    -- confirmed, unconfirmed, or flagged (not rerun)
  torch_versions TEXT NOT NULL     -- JSON: [the baseline night's versions, this night's], each an array
);
CREATE INDEX regressions_by_sweep ON regressions (sweep_id);
