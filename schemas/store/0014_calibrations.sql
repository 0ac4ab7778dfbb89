-- torchsweep store, migration 14: A/A calibrations (docs/noise.md).
-- `torchsweep calibrate` records each calibration it ran: when, its rounds,
-- the hosts and environments its results came from, and per configuration
-- (query's configuration axes, a JSON object) the noise table's figures:
-- the variance components as spreads on the log scale (within a process,
-- between processes, between nodes), the spread of one run, the A/A false
-- alarms of the regression rule (nightly's, confirm's, the report's change
-- points), the threshold that noise needs and the
-- power to see a 10% slowdown at the calibration's runs a night.
CREATE TABLE calibrations (
  sweep_id TEXT PRIMARY KEY REFERENCES sweeps (sweep_id),
  recorded_at TEXT NOT NULL,
  rounds INTEGER NOT NULL,
  night_runs INTEGER NOT NULL,
  alpha REAL NOT NULL,
  hosts TEXT NOT NULL,        -- JSON array
  environments TEXT NOT NULL  -- JSON array of "ENV / torch VERSION"
);
CREATE TABLE calibration_noise (
  sweep_id TEXT NOT NULL REFERENCES calibrations (sweep_id),
  configuration TEXT NOT NULL,
  nodes INTEGER, processes INTEGER, epochs INTEGER,
  median_epoch_s REAL, within_cv REAL, process_cv REAL, node_cv REAL, run_cv REAL,
  aa_pairs INTEGER, false_alarms INTEGER, false_alarm_rate REAL, nominal_rate REAL,
  confirm_rate REAL, change_point_rate REAL,
  threshold_needed REAL, power_10pct REAL, note TEXT,
  PRIMARY KEY (sweep_id, configuration)
);
