-- torchsweep store, migration 4: how close each result came to the
-- machine's limit (docs/methodology.md), from the result's "efficiency"
-- section, which the agent adds.
--  * flops_per_step: the model's FLOPs of one step of the whole job,
--    counted analytically (2 per multiply-add of matmuls and convolutions,
--    a training step 3 forwards).
--  * achieved_flops_per_s: flops_per_step over the median step time.
--  * peak_flops_per_s: the measured peak of the devices the job used, in the
--    job's precision class (fp32, or bf16 for bf16/fp16).
--  * mfu: achieved over peak; NULL where no peak was measured.
-- Rows stored before leave them NULL.

ALTER TABLE results ADD COLUMN flops_per_step REAL;
ALTER TABLE results ADD COLUMN achieved_flops_per_s REAL;
ALTER TABLE results ADD COLUMN peak_flops_per_s REAL;
ALTER TABLE results ADD COLUMN mfu REAL;
