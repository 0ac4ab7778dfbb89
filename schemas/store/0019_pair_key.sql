-- torchsweep store, migration 19: a paired job's pair (docs/noise.md).
--  * jobs.pair_key: for a sweep with pairing.by, the job's configuration
--    key less that axis, as the coordinator computes it when it stores the
--    job (sweep::pair_key); NULL for a sweep without pairing. Queries find
--    a job's partner by it instead of spelling the rule again in SQL.
--    Older rows: the same key computed here, once.
ALTER TABLE jobs ADD COLUMN pair_key TEXT;
UPDATE jobs SET pair_key = json_remove(config_key, '$.' || (
  SELECT json_extract(s.spec, '$.pairing.by') FROM sweeps s WHERE s.sweep_id = jobs.sweep_id))
  WHERE (SELECT json_extract(s.spec, '$.pairing.by') FROM sweeps s WHERE s.sweep_id = jobs.sweep_id) IS NOT NULL;
