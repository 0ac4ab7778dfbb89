-- torchsweep store, migration 11: generation and the sequence axes
-- (docs/language-models.md).
--  * seq_len: a language model's tokens a sample (gpt, hf:), an axis of
--    its configurations; NULL for the others. Results stored before it:
--    read from their documents, whose job holds the seq_len the runner
--    resolved.
--  * prompt_len, new_tokens: task generate's prompt and new tokens (axes).
--  * prefill_s: the median prefill of the timed generations;
--    decode_p50_s, decode_p90_s, decode_p99_s: the per-token decode
--    latency's percentiles; kv_cache_bytes: the key/value cache at the end
--    of a generation; tokens_match: compiled greedy decoding gave eager's
--    tokens (1), did not (0), or was not compared (NULL: eager runs).
--    tokens_per_s holds a generation's decode tokens per second.
ALTER TABLE results ADD COLUMN seq_len INTEGER;
ALTER TABLE results ADD COLUMN prompt_len INTEGER;
ALTER TABLE results ADD COLUMN new_tokens INTEGER;
ALTER TABLE results ADD COLUMN prefill_s REAL;
ALTER TABLE results ADD COLUMN decode_p50_s REAL;
ALTER TABLE results ADD COLUMN decode_p90_s REAL;
ALTER TABLE results ADD COLUMN decode_p99_s REAL;
ALTER TABLE results ADD COLUMN kv_cache_bytes INTEGER;
ALTER TABLE results ADD COLUMN tokens_match INTEGER;
UPDATE results SET seq_len = (
  SELECT json_extract(d.document, '$.job.seq_len') FROM result_documents d
  WHERE d.job_id = results.job_id AND d.attempt = results.attempt)
WHERE model = 'gpt' OR model LIKE 'hf:%';
