-- torchsweep store, migration 22: what a result's energy is (#49, docs/methodology.md).
--  * energy_source: nvml (the GPUs' energy counters) or rapl (the CPU
--    packages' powercap counters);
--  * energy_joules, average_power_w: over the timed epochs, all the job's
--    GPUs or the node's packages together;
--  * joules_per_sample, joules_per_token: at the measured throughput.
-- From the judged result's energy section; NULL where no counter could be
-- read (the result's energy.reason says why), and for every row stored before.
ALTER TABLE results ADD COLUMN energy_source TEXT;
ALTER TABLE results ADD COLUMN energy_joules REAL;
ALTER TABLE results ADD COLUMN average_power_w REAL;
ALTER TABLE results ADD COLUMN joules_per_sample REAL;
ALTER TABLE results ADD COLUMN joules_per_token REAL;
