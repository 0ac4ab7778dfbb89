-- torchsweep store, migration 5: why a job runs. "measurement": planned by
-- its sweep (every job before this migration); "confirmation": a rerun of
-- a flagged regression by `torchsweep confirm` (docs/report.md), which the
-- queries keep apart from the sweep's own runs.
ALTER TABLE jobs ADD COLUMN purpose TEXT NOT NULL DEFAULT 'measurement'
  CHECK (purpose IN ('measurement', 'confirmation'));
