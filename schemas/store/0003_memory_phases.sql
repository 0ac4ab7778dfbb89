-- torchsweep store, migration 3: memory in phases, the warm-up check and
-- adaptive repeats
-- (docs/methodology.md).
--  * peak_memory_bytes is now the timed phase's own figure: on CUDA the
--    caching allocator's peak allocated after a reset at the end of warm-up
--    (it was peak reserved, which still held what warm-up and compilation
--    left in the cache); on CPU the resident high-water mark of the timed
--    phase above the process's baseline before the model was built (it was
--    the whole process life's ru_maxrss). peak_memory_field names the result
--    field it came from; rows stored before keep their old figure and say so.
--  * warmup_peak_memory_bytes: the same kind of figure for the warm-up and
--    compile phase (peak allocated on CUDA, resident high-water mark on CPU).
--  * peak_reserved_bytes: the timed phase's peak reserved on CUDA.
--  * warmup_insufficient: 1 when the first timed epoch took more than 1.5
--    times the median of the others (warm-up did not reach the steady
--    state), judged at ingest from the epoch times, the same rule for every
--    runner; NULL with fewer than 2 timed epochs.

ALTER TABLE results ADD COLUMN peak_memory_field TEXT;
ALTER TABLE results ADD COLUMN warmup_peak_memory_bytes INTEGER;
ALTER TABLE results ADD COLUMN peak_reserved_bytes INTEGER;
ALTER TABLE results ADD COLUMN warmup_insufficient INTEGER;

UPDATE results SET peak_memory_field = 'legacy (peak reserved on CUDA, process peak RSS on CPU)'
WHERE peak_memory_bytes IS NOT NULL;

-- Adaptive repeats (docs/sweeps.md): each compared pair of an adaptive
-- sweep, how many rounds it ran, the relative half-width of its speedup's
-- 95% interval after them (NULL while a side has too few runs), and why it
-- stopped.
CREATE TABLE adaptive_pairs (
  sweep_id    TEXT NOT NULL REFERENCES sweeps (sweep_id),
  pair_key    TEXT NOT NULL,               -- the configuration without the compared axis (canonical JSON)
  rounds      INTEGER NOT NULL,
  half_width  REAL,
  state       TEXT NOT NULL CHECK (state IN ('running', 'converged', 'max_reached')),
  PRIMARY KEY (sweep_id, pair_key)
);
