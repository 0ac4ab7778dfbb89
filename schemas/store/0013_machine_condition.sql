-- torchsweep store, migration 13: the node's condition while a job ran (docs/noise.md).
--  * machine_busy: 1 when the agent found the node busy during the run
--    (context.condition.busy: other processes' CPU time, the hypervisor's
--    steal or memory pressure past their limits, another process on a job's
--    GPU), 0 when quiet, NULL for results stored before the agent recorded
--    it: the `condition` axis and the query table's `busy` column.
-- The rest of the section stays in result_documents.
ALTER TABLE results ADD COLUMN machine_busy INTEGER;
