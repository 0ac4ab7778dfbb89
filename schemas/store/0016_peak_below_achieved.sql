-- torchsweep store, migration 16: a utilisation that cannot be (#49).
--  * peak_below_achieved: 1 when the result's achieved FLOP rate exceeds
--    the peak it was measured against (efficiency.peak_below_achieved: the
--    peak is wrong, and the agent measured it again before its next job);
--    0 when below; NULL without a peak. Older rows: from mfu, which is
--    above 1 exactly then.
ALTER TABLE results ADD COLUMN peak_below_achieved INTEGER;
UPDATE results SET peak_below_achieved = (mfu > 1) WHERE mfu IS NOT NULL;
