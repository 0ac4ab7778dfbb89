-- torchsweep store, migration 1. Applied in one transaction when a store's
-- PRAGMA user_version is below 1; docs/store.md describes every table.
-- Matrix axes are real, indexed columns so the sqlite3 shell can group by
-- them; the full documents are kept beside them.

CREATE TABLE sweeps (
  sweep_id     TEXT PRIMARY KEY,
  name         TEXT NOT NULL,
  spec         TEXT NOT NULL,                 -- the sweep document as submitted (JSON)
  submitter    TEXT,
  priority     INTEGER NOT NULL DEFAULT 0,
  state        TEXT NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'done', 'cancelled')),
  created_at   TEXT NOT NULL,                 -- UTC ISO 8601
  finished_at  TEXT
);
CREATE INDEX sweeps_by_name ON sweeps (name, created_at);

CREATE TABLE sweep_tags (
  sweep_id  TEXT NOT NULL REFERENCES sweeps (sweep_id) ON DELETE CASCADE,
  tag       TEXT NOT NULL,
  PRIMARY KEY (sweep_id, tag)
);
CREATE INDEX sweep_tags_by_tag ON sweep_tags (tag);

CREATE TABLE jobs (
  job_id        TEXT PRIMARY KEY,
  sweep_id      TEXT NOT NULL REFERENCES sweeps (sweep_id) ON DELETE CASCADE,
  ordinal       INTEGER NOT NULL,             -- position in the sweep's (interleaved) order
  config_key    TEXT NOT NULL,                -- the configuration without the repeat number
  repeat        INTEGER NOT NULL DEFAULT 0,
  runner        TEXT NOT NULL DEFAULT 'libtorch',
  gpus          INTEGER NOT NULL DEFAULT 1,
  document      TEXT NOT NULL,                -- the job document sent to the runner (JSON)
  state         TEXT NOT NULL DEFAULT 'queued'
                CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
  attempts      INTEGER NOT NULL DEFAULT 0,
  max_attempts  INTEGER NOT NULL DEFAULT 3,
  agent         TEXT,                         -- agent of the current or last attempt
  last_error    TEXT,
  created_at    TEXT NOT NULL,
  started_at    TEXT,
  finished_at   TEXT
);
CREATE INDEX jobs_by_sweep_state ON jobs (sweep_id, state);
CREATE INDEX jobs_by_state ON jobs (state, ordinal);

CREATE TABLE agents (
  name          TEXT PRIMARY KEY,
  hostname      TEXT,
  capabilities  TEXT NOT NULL DEFAULT '{}',   -- from the agent's hello (JSON)
  labels        TEXT NOT NULL DEFAULT '{}',
  first_seen    TEXT NOT NULL,
  last_seen     TEXT NOT NULL
);

-- One row per (job, attempt): storing the same result twice is a no-op.
CREATE TABLE results (
  job_id                TEXT NOT NULL,
  attempt               INTEGER NOT NULL,
  sweep_id              TEXT,
  status                TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'unsupported')),
  -- the matrix axes
  model                 TEXT NOT NULL,
  task                  TEXT NOT NULL,
  batch_size            INTEGER NOT NULL,
  precision             TEXT NOT NULL,
  mode                  TEXT NOT NULL,        -- as requested by the job
  mode_ran              TEXT,                 -- what actually ran (eager after a fallback)
  compiler              TEXT,
  runner                TEXT NOT NULL,
  gpus                  INTEGER NOT NULL,
  device_name           TEXT NOT NULL,        -- GPU model, or the CPU model
  torch_version         TEXT NOT NULL,
  host                  TEXT NOT NULL,
  agent                 TEXT,
  -- the figures
  median_epoch_s        REAL,
  samples_per_s         REAL,
  median_step_s         REAL,
  compile_s             REAL,                 -- first iteration (capture included for TorchScript)
  warmup_s              REAL,
  peak_memory_bytes     INTEGER,              -- peak reserved on CUDA, peak RSS on CPU
  peak_allocated_bytes  INTEGER,
  noisy                 INTEGER,
  fused_kernels         INTEGER,
  fallback_reason       TEXT,
  error                 TEXT,
  document              TEXT NOT NULL,        -- the full result document (JSON)
  received_at           TEXT NOT NULL,
  PRIMARY KEY (job_id, attempt)
);
CREATE INDEX results_by_config ON results (model, task, batch_size, precision, mode, gpus, device_name);
CREATE INDEX results_by_sweep ON results (sweep_id);
CREATE INDEX results_by_host ON results (host);
CREATE INDEX results_by_torch ON results (torch_version);

-- Raw timings, one row each: per-configuration medians pool them.
CREATE TABLE result_epochs (
  job_id     TEXT NOT NULL,
  attempt    INTEGER NOT NULL,
  epoch      INTEGER NOT NULL,
  seconds    REAL NOT NULL,
  PRIMARY KEY (job_id, attempt, epoch),
  FOREIGN KEY (job_id, attempt) REFERENCES results (job_id, attempt) ON DELETE CASCADE
);

CREATE TABLE result_steps (
  job_id     TEXT NOT NULL,
  attempt    INTEGER NOT NULL,
  epoch      INTEGER NOT NULL,
  step       INTEGER NOT NULL,
  seconds    REAL NOT NULL,
  PRIMARY KEY (job_id, attempt, epoch, step),
  FOREIGN KEY (job_id, attempt) REFERENCES results (job_id, attempt) ON DELETE CASCADE
) WITHOUT ROWID;

-- Per-configuration figures over every successful result (repeats and
-- nodes pooled). median() is registered by torchsweep on each connection;
-- in the plain sqlite3 shell use the percentile extension or docs/store.md.
CREATE VIEW config_medians AS
SELECT model, task, batch_size, precision, mode_ran AS mode, compiler, runner, gpus, device_name,
       COUNT(*)                  AS results,
       median(median_epoch_s)    AS median_epoch_s,
       median(samples_per_s)     AS samples_per_s,
       median(peak_memory_bytes) AS peak_memory_bytes,
       median(compile_s)         AS compile_s
FROM results
WHERE status = 'ok'
GROUP BY model, task, batch_size, precision, mode_ran, compiler, runner, gpus, device_name;

-- The newest sweep carrying each tag.
CREATE VIEW latest_sweep_per_tag AS
SELECT t.tag, s.sweep_id, s.name, s.created_at
FROM sweep_tags t JOIN sweeps s ON s.sweep_id = t.sweep_id
WHERE s.created_at = (SELECT MAX(s2.created_at) FROM sweep_tags t2 JOIN sweeps s2 ON s2.sweep_id = t2.sweep_id
                      WHERE t2.tag = t.tag);
