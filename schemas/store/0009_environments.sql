-- torchsweep store, migration 9: the environment each result ran in
-- (docs/environments.md).
--  * env: the result's context.env.name, as its agent recorded it. Results
--    stored before environments ran in their runner's own, the only one
--    there was: the system's python3 and LibTorch for the torch.compile and
--    LibTorch runners, their venvs for the TensorFlow and JAX ones; an
--    operator's runner had none (NULL).
--  * config_medians: env is part of a configuration, so two environments'
--    figures are never pooled.
ALTER TABLE results ADD COLUMN env TEXT;
UPDATE results SET env = CASE runner WHEN 'libtorch' THEN 'system' WHEN 'torch-compile' THEN 'system'
                                     WHEN 'tensorflow' THEN 'tensorflow' WHEN 'jax' THEN 'jax' END;

DROP VIEW config_medians;

-- As migration 8 made it, with env beside runner.
CREATE VIEW config_medians AS
WITH ok AS (
  SELECT model, task, batch_size, precision, mode_ran, compiler, runner, env, gpus, device_name,
         median_epoch_s, samples_per_s, peak_memory_bytes, compile_s,
         -- one number per configuration: ORDER BY, unlike =, takes NULL keys as equal
         DENSE_RANK() OVER (ORDER BY model, task, batch_size, precision, mode_ran, compiler, runner, env,
                                     gpus, device_name) AS configuration
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
  SELECT configuration, model, task, batch_size, precision, mode_ran, compiler, runner, env, gpus, device_name,
         COUNT(*) AS results
  FROM ok
  GROUP BY configuration, model, task, batch_size, precision, mode_ran, compiler, runner, env, gpus, device_name
)
SELECT c.model, c.task, c.batch_size, c.precision, c.mode_ran AS mode, c.compiler, c.runner, c.env, c.gpus, c.device_name,
       c.results, m.median_epoch_s, m.samples_per_s, m.peak_memory_bytes, m.compile_s
FROM counted c LEFT JOIN medians m ON m.configuration = c.configuration;
