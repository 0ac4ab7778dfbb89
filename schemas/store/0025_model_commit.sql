-- torchsweep store, migration 25: the commit of the user's model code a
-- result ran (#52, docs/bisect.md): the job's model_commit, the full SHA the
-- agent exported the python: or torchscript: model's files at. A
-- configuration axis, so that runs of two commits never pool. NULL for the
-- files as they were, and for every row stored before.
ALTER TABLE results ADD COLUMN model_commit TEXT;
