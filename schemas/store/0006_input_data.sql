-- torchsweep store, migration 6: what a job trained on (docs/data.md).
--  * data: 'synthetic', or the imagefolder dataset as the job named it
--    (job.data.folder): the `data` axis of the queries.
--  * input_stall_fraction: the median over the timed epochs of the time the
--    step loop waited for its next batch, as a fraction of the epoch.
--  * loader_images_per_s: the input pipeline alone (its separate pass).
--  * input_bound: 1 when the median epoch waited longer than the job's
--    input_bound_above.
ALTER TABLE results ADD COLUMN data TEXT NOT NULL DEFAULT 'synthetic';
ALTER TABLE results ADD COLUMN input_stall_fraction REAL;
ALTER TABLE results ADD COLUMN loader_images_per_s REAL;
ALTER TABLE results ADD COLUMN input_bound INTEGER;
