#!/usr/bin/env python3
"""`torchsweep export --to mlflow URI` (docs/analysis.md) on a store filled
by a real `torchsweep run` (eager and compiled, two repeats), read back
through MLflow's own client from real local tracking stores (SQLite: MLflow
3's file store is in maintenance mode):
- one run per result in the experiment named after the sweep (or the one
  chosen): the configuration as params, the figures as metrics, provenance
  as tags, the full result document as an artifact, each equal to the store;
- a compiled run's speedup over its eager partner of the same repeat, with
  the eager run's id as a tag;
- exporting again adds nothing; a later sweep's results are added;
- a target that is not an MLflow store and an unreachable server are
  refused naming the URI, with nothing written.
Runs in the MLflow venv (readers/python/requirements/mlflow.lock)."""
import argparse
import hashlib
import json
import os
import sqlite3
import subprocess
import tempfile
import time

from mlflow.entities import ViewType
from mlflow.tracking import MlflowClient

SWEEP = ("name: {name}\naxes: {{mode: [eager, compiled]}}\n"
         "fixed: {{model: mlp, batch_size: 8, epochs: 2, warmup: 2, iters: 3}}\nrepeats: 2\n")
PARAMS = ["model", "task", "batch_size", "precision", "mode", "runner", "gpus", "device_name"]
METRICS = ["median_epoch_s", "samples_per_s", "peak_memory_bytes", "median_step_s"]


def run(command, expect=0):
    finished = subprocess.run(command, capture_output=True, text=True)
    assert finished.returncode == expect, f"{command}: exit {finished.returncode}\n{finished.stderr[-3000:]}"
    return finished


def sweep(torchsweep, work, db, name):
    path = os.path.join(work, f"{name}.yaml")
    with open(path, "w") as handle:
        handle.write(SWEEP.format(name=name))
    run([torchsweep, "run", path, "--db", db, "--no-report"])


def stored_results(db):
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as store:
        store.row_factory = sqlite3.Row
        rows = store.execute("SELECT r.*, j.repeat, d.document, s.name AS sweep_name FROM results r "
                             "JOIN jobs j USING (job_id) JOIN result_documents d USING (job_id, attempt) "
                             "JOIN sweeps s ON s.sweep_id = r.sweep_id").fetchall()
        return {f"{row['job_id']}/{row['attempt']}": dict(row) for row in rows}


def runs_of(client, experiment):
    runs = client.search_runs([experiment.experiment_id], run_view_type=ViewType.ALL, max_results=1000)
    return {run.data.tags["torchsweep.result"]: run for run in runs}


def check_runs(client, experiment_name, stored):
    """Every stored result of the experiment is one finished run, equal to the store."""
    experiment = client.get_experiment_by_name(experiment_name)
    assert experiment is not None, f"no experiment {experiment_name!r}"
    runs = runs_of(client, experiment)
    assert set(runs) == set(stored), f"{experiment_name}: runs {sorted(runs)} != results {sorted(stored)}"
    for key, row in stored.items():
        found = runs[key]
        assert found.info.status == "FINISHED" and found.info.lifecycle_stage == "active", found.info
        for name in PARAMS:
            assert found.data.params[name] == str(row[name]), f"{key} param {name}: {found.data.params[name]!r}"
        for name in METRICS:
            assert found.data.metrics[name] == row[name], f"{key} metric {name}: {found.data.metrics.get(name)}"
        document = json.loads(row["document"])
        tags = found.data.tags
        assert tags["torchsweep.sweep_id"] == row["sweep_id"] and tags["torchsweep.host"] == row["host"], tags
        assert tags["context.torch_version"] == document["context"]["torch_version"], tags
        assert tags["context.torchsweep_commit"] == document["context"]["torchsweep_commit"], tags
        artifact = client.download_artifacts(found.info.run_id, "torchsweep/result.json")
        with open(artifact) as handle:
            assert json.load(handle) == document, f"{key}: the artifact is not the stored document"
    return runs


def check_pairs(runs, stored):
    """A compiled run names its eager partner of the same repeat and its speedup."""
    compiled = [key for key, row in stored.items() if row["mode"] == "compiled"]
    assert len(compiled) == 2, compiled
    for key in compiled:
        row = stored[key]
        eager = [other for other, candidate in stored.items()
                 if candidate["mode"] == "eager" and candidate["repeat"] == row["repeat"]
                 and candidate["sweep_id"] == row["sweep_id"]]
        assert len(eager) == 1, eager
        tags = runs[key].data.tags
        assert tags["torchsweep.eager_result"] == eager[0], tags
        assert tags["torchsweep.eager_run_id"] == runs[eager[0]].info.run_id, tags
        speedup = stored[eager[0]]["median_epoch_s"] / row["median_epoch_s"]
        assert abs(runs[key].data.metrics["speedup_vs_eager"] - speedup) <= 1e-12 * speedup, runs[key].data.metrics
        assert "speedup_vs_eager" not in runs[eager[0]].data.metrics
    print(f"pairs: {len(compiled)} compiled runs name their eager run and speedup")


def digest(path):
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def check_refusals(torchsweep, db, work):
    """Not an MLflow store (the torchsweep store itself, a text file, a foreign folder), and an
    unreachable server: refused naming the URI, and nothing written."""
    notes = os.path.join(work, "notes.txt")
    with open(notes, "w") as handle:
        handle.write("not a database\n")
    foreign = os.path.join(work, "foreign")
    os.mkdir(foreign)
    with open(os.path.join(foreign, "data.csv"), "w") as handle:
        handle.write("a,b\n")
    before = {path: digest(path) for path in (db, notes, os.path.join(foreign, "data.csv"))}
    for uri in (f"sqlite:///{db}", f"sqlite:///{notes}", f"file://{foreign}", f"sqlite:///{foreign}"):
        refused = run([torchsweep, "export", "--db", db, "--to", "mlflow", uri], expect=2)
        assert uri in refused.stderr and "--to" in refused.stderr, refused.stderr
    assert {path: digest(path) for path in before} == before, "a refused export changed its target"
    assert sorted(os.listdir(foreign)) == ["data.csv"], os.listdir(foreign)
    assert not [name for name in os.listdir(work) if name.endswith(".artifacts")], os.listdir(work)
    started = time.monotonic()
    unreachable = run([torchsweep, "export", "--db", db, "--to", "mlflow", "http://127.0.0.1:9"], expect=4)
    assert "http://127.0.0.1:9" in unreachable.stderr and "cannot be reached" in unreachable.stderr, unreachable
    assert time.monotonic() - started < 60, "an unreachable server took a minute to refuse"
    wrong = run([torchsweep, "export", "--db", db, "--to", "wandb", "x"], expect=2)
    assert "--to" in wrong.stderr and "mlflow" in wrong.stderr, wrong.stderr
    print("refused: the torchsweep store, a text file, a foreign folder (unchanged); an unreachable server")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--torchsweep", required=True)
    args = parser.parse_args()
    torchsweep = args.torchsweep
    with tempfile.TemporaryDirectory() as work:
        db = os.path.join(work, "results.db")
        sweep(torchsweep, work, db, "mlflow-a")
        check_refusals(torchsweep, db, work)

        tracking = f"sqlite:///{work}/mlflow.db"
        first = json.loads(run([torchsweep, "export", "--db", db, "--to", "mlflow", tracking]).stdout)
        stored = stored_results(db)
        assert first["runs_added"] == len(stored) == 4 and first["experiments"] == ["mlflow-a"], first
        client = MlflowClient(tracking_uri=tracking)
        runs = check_runs(client, "mlflow-a", stored)
        check_pairs(runs, stored)
        artifacts = os.path.join(work, "mlflow.db.artifacts")
        assert os.path.isdir(artifacts), "the artifacts are not beside the store"
        print(f"sqlite tracking store: {len(runs)} runs equal to the store (params, metrics, tags, artifact)")

        again = json.loads(run([torchsweep, "export", "--db", db, "--to", "mlflow", tracking]).stdout)
        assert again["runs_added"] == 0 and again["runs_already_there"] == 4, again
        assert len(client.search_runs([client.get_experiment_by_name("mlflow-a").experiment_id],
                                      run_view_type=ViewType.ALL)) == 4
        sweep(torchsweep, work, db, "mlflow-b")
        later = json.loads(run([torchsweep, "export", "--db", db, "--to", "mlflow", tracking]).stdout)
        assert later["runs_added"] == 4 and later["runs_already_there"] == 4, later
        stored = stored_results(db)
        check_runs(client, "mlflow-b", {k: v for k, v in stored.items() if v["sweep_name"] == "mlflow-b"})
        print("exporting again adds nothing; a new sweep's results are added as a new experiment")

        # Another store, one chosen experiment for both sweeps, the filter honoured, artifacts where asked.
        other = f"sqlite:///{work}/other.db"
        chosen = os.path.join(work, "chosen-artifacts")
        run([torchsweep, "export", "--db", db, "--to", "mlflow", other, "--experiment", "nightly",
             "--where", "mode=compiled", "--artifacts", f"file://{chosen}"])
        compiled = {k: v for k, v in stored.items() if v["mode"] == "compiled"}
        check_runs(MlflowClient(tracking_uri=other), "nightly", compiled)
        assert os.path.isdir(chosen) and not os.path.exists(os.path.join(work, "other.db.artifacts"))
        print(f"--experiment nightly holds the {len(compiled)} compiled runs of both sweeps; --artifacts honoured")


if __name__ == "__main__":
    main()
