#!/usr/bin/env python3
"""imagefolder data end to end (docs/data.md): examples/cpu-real-data.yaml
(one repeat, two epochs: CI's time) run by `torchsweep run` on a generated
tree with corrupt files, the query's real-vs-synthetic comparison with the
input stall for every runner, and the bad-input paths of every runner and
of the agent's data roots."""
import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

LOADERS = {"libtorch": "torchsweep-worker", "torch-compile": "torchvision.datasets.ImageFolder",
           "tensorflow": "tf.data", "jax": "grain.DataLoader"}


def run(command, **options):
    return subprocess.run(command, capture_output=True, text=True, **options)


def make_tree(script, directory, *extra):
    finished = run([sys.executable, script, directory, "--min-side", "40", "--max-side", "160", *extra])
    assert finished.returncode == 0, finished.stderr
    return json.loads(finished.stdout)


def run_job(runner, job, work):
    """(exit code, result document or None) of one job run by hand."""
    job_file, out = os.path.join(work, "job.json"), os.path.join(work, "result.json")
    if os.path.exists(out):
        os.remove(out)
    with open(job_file, "w") as handle:
        json.dump(dict({"schema_version": 1, "model": "resnet18", "batch_size": 4, "input_size": 32,
                        "num_classes": 4, "epochs": 1, "warmup": 1, "iters": 3}, **job), handle)
    finished = run([runner, "--job", job_file, "--out", out])
    result = json.load(open(out)) if os.path.exists(out) else None
    return finished.returncode, result, finished.stderr


def check_sweep(args, work):
    root = os.path.join(work, "data")
    counts = make_tree(args.make_imagefolder, os.path.join(root, "cpu-real-data"), "--classes", "4",
                       "--per-class", "64", "--corrupt", "2", "--not-jpeg", "1")
    import yaml
    with open(args.example) as handle:
        sweep = yaml.safe_load(handle)
    sweep["axes"]["runner"] = [name for name in sweep["axes"]["runner"] if name in args.runners]
    # CI's time: one repeat, two epochs of four steps, 32x32 crops (the
    # pipelines, the stalls and the judgement are what is tested, not the compute).
    sweep["repeats"], sweep["fixed"]["epochs"], sweep["fixed"]["iters"] = 1, 2, 4
    sweep["fixed"]["input_size"] = 32
    sweep_file = os.path.join(work, "cpu-real-data.json")
    with open(sweep_file, "w") as handle:
        json.dump(sweep, handle)
    db = os.path.join(work, "real.db")
    runner_options = [f"--runner={name}={path}" for name, path in args.runners.items()]
    report = os.path.join(work, "real.html")
    finished = run([args.torchsweep, "run", sweep_file, "--db", db, "--data-root", root, "--report", report,
                    "--work-dir", os.path.join(work, "agent"), *runner_options])
    assert finished.returncode == 0, finished.stdout + finished.stderr
    # The report of every runner's results, the frameworks' included (their
    # context has no torch version: that once failed it).
    with open(report, encoding="utf-8") as handle:
        page = handle.read()
    assert all(f'"runner":"{name}"' in page for name in args.runners), "a runner is missing from the report"
    query = run([args.torchsweep, "query", "--db", db, "--compare", "data", "--format", "json"])
    assert query.returncode == 0, query.stderr
    rows = json.loads(query.stdout)
    configurations = {(row["runner"], row["mode"]) for row in rows}
    assert configurations == {(runner, mode) for runner in args.runners for mode in ("eager", "compiled")}, rows
    for row in rows:
        assert row["runs:synthetic"] == 1 and row["runs:cpu-real-data"] == 1, row
        assert row["input_stall:cpu-real-data"] is not None and 0 <= row["input_stall:cpu-real-data"] <= 1, row
        assert row["speedup"] is not None and row["speedup"] > 0, row  # real over synthetic throughput

    with sqlite3.connect(db) as store:
        results = [json.loads(text) for (text,) in store.execute("SELECT document FROM result_documents")]
    real = [r for r in results if isinstance(r["job"]["data"], dict)]
    assert len(real) == 2 * len(args.runners) and all(r["status"] == "ok" for r in results), \
        [r.get("error") for r in results]
    corrupt_seen = set()
    for result in real:
        data = result["data"]
        assert data["images"] == counts["images"] + counts["corrupt"] + counts["not_jpeg"], data
        assert data["classes"] == 4 and data["workers"] == 2 and data["prefetch"] == 4, data
        assert len(data["epoch_input_stall_seconds"]) == 2, data
        # The agent's judgement of every runner's stalls (agent/judge/input_stalls).
        assert data["input_bound"] == (data["median_input_stall_fraction"] > result["job"]["input_bound_above"]), data
        assert 0 <= data["input_bound_epochs"] <= 2, data
        assert data["loader"].startswith(LOADERS[result["runner"]["name"]]), data
        assert data["loader_images_per_second"] > 0 and data["loader_pass_images"] == 4 * 16, data
        assert result["job"]["data"]["path"] == os.path.join(os.path.realpath(root), "cpu-real-data"), result["job"]
        corrupt_seen.update(os.path.basename(path) for path in data["corrupt_examples"])
        assert data["corrupt_files"] == len(data["corrupt_examples"]), data
    # Every bad file was met and skipped by some run; no good one was counted.
    assert corrupt_seen == {"corrupt_000.jpg", "corrupt_001.jpg", "not_jpeg_000.jpg"}, corrupt_seen
    return root


def check_bad_input(args, work, root):
    runners = args.runners
    empty = os.path.join(root, "with-empty-class")
    make_tree(args.make_imagefolder, empty, "--classes", "2", "--per-class", "4", "--empty-class")
    broken = os.path.join(root, "broken")
    make_tree(args.make_imagefolder, broken, "--classes", "2", "--per-class", "2", "--corrupt", "4")
    for name, runner in runners.items():
        # Each pipeline's own handling of a corrupt file.
        code, result, _ = run_job(runner, {"data": {"folder": broken, "format": "imagefolder"}, "on_corrupt": "fail"},
                                  work)
        assert code == 3 and "corrupt_00" in result["error"] and "on_corrupt is fail" in result["error"], \
            (name, result)
        code, result, _ = run_job(runner, {"data": {"folder": broken, "format": "imagefolder"}}, work)
        assert code == 0 and result["data"]["corrupt_files"] >= 1, (name, result)
        if name not in ("libtorch", "torch-compile"):
            continue  # the rest is the harness's, which every Python runner shares
        missing = os.path.join(root, "not-there")
        code, result, _ = run_job(runner, {"data": {"folder": missing, "format": "imagefolder"}}, work)
        assert code == 3 and result["status"] == "failed" and missing in result["error"], (name, result)
        code, result, _ = run_job(runner, {"data": {"folder": empty, "format": "imagefolder"}}, work)
        assert code == 3 and "has no JPEG files" in result["error"] and empty in result["error"], (name, result)
        code, result, stderr = run_job(runner, {"model": "mlp", "data": {"folder": broken, "format": "imagefolder"}},
                                       work)
        assert code == 2 and result is None and "data" in stderr and "reads features" in stderr, (name, stderr)

    # The agent reads under its data roots only: `torchsweep run` refuses the sweep before it starts.
    sweep = os.path.join(work, "outside.yaml")
    with open(sweep, "w") as handle:
        json.dump({"name": "outside", "axes": {"data": [{"folder": "../outside", "format": "imagefolder"}]},
                   "fixed": {"model": "resnet18", "batch_size": 4}}, handle)
    os.makedirs(os.path.join(work, "outside"), exist_ok=True)
    db = os.path.join(work, "outside.db")
    finished = run([args.torchsweep, "run", sweep, "--db", db, "--data-root", root])
    assert finished.returncode == 2 and "data.folder" in finished.stderr and root in finished.stderr, finished.stderr
    assert not os.path.exists(db), "a refused sweep created the store"


def main():
    parser = argparse.ArgumentParser()
    for option in ("--torchsweep", "--make-imagefolder", "--example"):
        parser.add_argument(option, required=True)
    parser.add_argument("--runner", action="append", required=True, help="NAME=PATH, each runner of the test")
    args = parser.parse_args()
    args.runners = dict(entry.split("=", 1) for entry in args.runner)
    with tempfile.TemporaryDirectory() as work:
        root = check_sweep(args, work)
        check_bad_input(args, work, root)
    print("real data: ok")


if __name__ == "__main__":
    main()
