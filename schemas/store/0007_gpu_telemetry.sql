-- torchsweep store, migration 7: the agent's GPU telemetry (docs/gpu-telemetry.md).
--  * throttled: 1 when NVML reported a thermal or hardware slowdown of one of
--    the job's GPUs in its timed epochs, 0 when it reported none, NULL when
--    the result has no telemetry (CPU jobs, no NVML): the `throttled` axis.
--  * gpu_process_memory_bytes: NVML's device memory of the job's processes,
--    the highest over the timed epochs on the busiest of its GPUs: the
--    figure that compares frameworks, whose allocators count differently.
-- The rest of the section stays in result_documents.
ALTER TABLE results ADD COLUMN throttled INTEGER;
ALTER TABLE results ADD COLUMN gpu_process_memory_bytes INTEGER;
