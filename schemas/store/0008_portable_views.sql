-- torchsweep store, migration 8: every view in plain SQL (window functions,
-- SQLite 3.25 and later), so the sqlite3 shell, Python's sqlite3 (pandas)
-- and DuckDB's SQLite reader read them: config_medians used median(),
-- which only torchsweep's own connections have (docs/store.md). DuckDB
-- parses a SQLite view itself, so only SQL both read alike is used.
DROP VIEW config_medians;

-- Per-configuration figures over every successful result (repeats and
-- nodes pooled), each the exact median of its non-NULL values, type 7 as
-- shared/statistics computes it: the middle value, or the lower middle
-- plus half the gap to the upper one (the same arithmetic, so the same
-- double).
CREATE VIEW config_medians AS
WITH ok AS (
  SELECT model, task, batch_size, precision, mode_ran, compiler, runner, gpus, device_name,
         median_epoch_s, samples_per_s, peak_memory_bytes, compile_s,
         -- one number per configuration: ORDER BY, unlike =, takes NULL keys as equal
         DENSE_RANK() OVER (ORDER BY model, task, batch_size, precision, mode_ran, compiler, runner, gpus,
                                     device_name) AS configuration
  FROM results
  WHERE status = 'ok'
),
figures (configuration, figure, value) AS (
  SELECT configuration, 1, median_epoch_s FROM ok
  UNION ALL SELECT configuration, 2, samples_per_s FROM ok
  UNION ALL SELECT configuration, 3, peak_memory_bytes FROM ok
  UNION ALL SELECT configuration, 4, compile_s FROM ok
),
ranked AS (
  SELECT configuration, figure, value,
         ROW_NUMBER() OVER (PARTITION BY configuration, figure ORDER BY value) AS k,
         COUNT(*) OVER (PARTITION BY configuration, figure) AS n
  FROM figures
  WHERE value IS NOT NULL
),
medians AS (
  SELECT configuration,
         MAX(CASE figure WHEN 1 THEN middle END) AS median_epoch_s,
         MAX(CASE figure WHEN 2 THEN middle END) AS samples_per_s,
         MAX(CASE figure WHEN 3 THEN middle END) AS peak_memory_bytes,
         MAX(CASE figure WHEN 4 THEN middle END) AS compile_s
  FROM (SELECT configuration, figure, MIN(value) + 0.5 * (MAX(value) - MIN(value)) AS middle
        FROM ranked
        WHERE 2 * k BETWEEN n AND n + 2  -- the middle one or two; no division, which DuckDB makes real
        GROUP BY configuration, figure)
  GROUP BY configuration
),
counted AS (
  SELECT configuration, model, task, batch_size, precision, mode_ran, compiler, runner, gpus, device_name,
         COUNT(*) AS results
  FROM ok
  GROUP BY configuration, model, task, batch_size, precision, mode_ran, compiler, runner, gpus, device_name
)
SELECT c.model, c.task, c.batch_size, c.precision, c.mode_ran AS mode, c.compiler, c.runner, c.gpus, c.device_name,
       c.results, m.median_epoch_s, m.samples_per_s, m.peak_memory_bytes, m.compile_s
FROM counted c LEFT JOIN medians m ON m.configuration = c.configuration;
