-- torchsweep store, migration 21: what a result costs (#49, docs/methodology.md).
--  * price_per_hour: the price per device-hour the result was costed at
--    (the job's price_per_hour or the agent's --price-per-hour);
--  * cost_per_million_samples, cost_per_million_tokens: at the measured
--    throughput, all the job's devices together;
--  * run_cost: the whole run (start, compile, warm-up, timed epochs).
-- All from the judged result's cost section; NULL where no price named the
-- device, and for every row stored before.
ALTER TABLE results ADD COLUMN price_per_hour REAL;
ALTER TABLE results ADD COLUMN cost_per_million_samples REAL;
ALTER TABLE results ADD COLUMN cost_per_million_tokens REAL;
ALTER TABLE results ADD COLUMN run_cost REAL;
