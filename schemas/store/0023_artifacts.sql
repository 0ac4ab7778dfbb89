-- torchsweep store, migration 23: files kept beside the store (#51,
-- docs/explain.md). A row per stored result and kind of file (trace: its
-- profile's gzip Chrome trace), named by the SHA-256 of its contents: the
-- file is STORE.artifacts/AB/SHA256 (AB its first two hex digits), written
-- before the row, so a row always names a file that was complete; results
-- that share contents share the file. `torchsweep gc` deletes rows and then
-- the files no row names.
CREATE TABLE artifacts (
  job_id   TEXT NOT NULL,
  attempt  INTEGER NOT NULL,
  kind     TEXT NOT NULL,
  sha256   TEXT NOT NULL,
  bytes    INTEGER NOT NULL,
  PRIMARY KEY (job_id, attempt, kind),
  FOREIGN KEY (job_id, attempt) REFERENCES results (job_id, attempt)
);
CREATE INDEX artifacts_by_sha256 ON artifacts (sha256);
