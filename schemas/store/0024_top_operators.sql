-- torchsweep store, migration 24: the top of a profiled result's summaries
-- (#51, docs/explain.md), from the judged result's summary:
--  * top_operator, top_operator_share: the operator with the most self time
--    a profiled step (the device's on a GPU, the host's on a CPU) and its
--    share of every operator's;
--  * top_kernel, top_kernel_share: the GPU kernel with the most device time
--    and its share of every kernel's.
-- NULL for results without a profile, and for every row stored before.
ALTER TABLE results ADD COLUMN top_operator TEXT;
ALTER TABLE results ADD COLUMN top_operator_share REAL;
ALTER TABLE results ADD COLUMN top_kernel TEXT;
ALTER TABLE results ADD COLUMN top_kernel_share REAL;
