-- torchsweep store, migration 10: a language model's throughput in tokens
-- (docs/language-models.md).
--  * tokens_per_s: the result's timing.tokens_per_second, samples/s times
--    seq_len for the models that read tokens (gpt, hf:); NULL for the
--    others. Results stored before it: computed the same way from their
--    documents, whose job holds the seq_len the runner resolved.
ALTER TABLE results ADD COLUMN tokens_per_s REAL;
UPDATE results SET tokens_per_s = samples_per_s * (
  SELECT json_extract(d.document, '$.job.seq_len') FROM result_documents d
  WHERE d.job_id = results.job_id AND d.attempt = results.attempt)
WHERE status = 'ok' AND (model = 'gpt' OR model LIKE 'hf:%');
