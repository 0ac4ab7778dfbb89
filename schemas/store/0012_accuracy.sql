-- torchsweep store, migration 12: what the compiler did (docs/compiler.md).
--  * accuracy: the accuracy gate's verdict on a compiled (or graph) run,
--    pass, fail or skipped; NULL for eager runs and results stored before
--    the gate.
--  * accuracy_deviation: the worst compared tensor's error in units of
--    what the gate's rule allows (above 1 fails).
--  * graph_breaks, recompilations: Dynamo's counts while the job compiled
--    (torch.compile runs); older results read them from their documents.
--  * compile_mode, compile_cache: the torch.compile mode of a compiled job
--    and the compiler caches it started with (default, cold, warm); NULL
--    for other runs and older results.
ALTER TABLE results ADD COLUMN accuracy TEXT;
ALTER TABLE results ADD COLUMN accuracy_deviation REAL;
ALTER TABLE results ADD COLUMN graph_breaks INTEGER;
ALTER TABLE results ADD COLUMN recompilations INTEGER;
ALTER TABLE results ADD COLUMN compile_mode TEXT;
ALTER TABLE results ADD COLUMN compile_cache TEXT;
UPDATE results SET
  graph_breaks = (SELECT json_extract(d.document, '$.execution.compile.graph_breaks') FROM result_documents d
                  WHERE d.job_id = results.job_id AND d.attempt = results.attempt),
  recompilations = (SELECT json_extract(d.document, '$.execution.compile.recompilations') FROM result_documents d
                    WHERE d.job_id = results.job_id AND d.attempt = results.attempt)
WHERE compiler = 'inductor' OR runner = 'torch-compile';
