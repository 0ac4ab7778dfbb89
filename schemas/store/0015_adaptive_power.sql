-- torchsweep store, migration 15: adaptive repeats that run until the
-- regression rule has the power asked for (repeats.until.power,
-- docs/noise.md): each pair's power after its rounds; NULL for pairs run
-- until an interval, and before a side has two runs.
ALTER TABLE adaptive_pairs ADD COLUMN power REAL;
