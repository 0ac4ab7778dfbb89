-- torchsweep store, migration 20: the store only stores (#50).
--  * warmup_peak_memory_field: which reading warmup_peak_memory_bytes is
--    (warmup_peak_allocated_bytes on a GPU, warmup_peak_rss_bytes on CPU),
--    now given by the judge's summary (agent/judge/summary.cpp) as
--    peak_memory_field is, rather than decided again by the readers.
--    Older rows: from their timed-phase field, as the readers did then.
ALTER TABLE results ADD COLUMN warmup_peak_memory_field TEXT;
UPDATE results SET warmup_peak_memory_field =
  CASE WHEN peak_memory_field IN ('peak_allocated_bytes', 'peak_reserved_bytes') THEN 'warmup_peak_allocated_bytes'
       WHEN warmup_peak_memory_bytes IS NOT NULL THEN 'warmup_peak_rss_bytes' END;
