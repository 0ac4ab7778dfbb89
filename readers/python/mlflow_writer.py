#!@TS_MLFLOW_PYTHON@
"""torchsweep-mlflow: logs the results of `torchsweep export --to mlflow URI`
(docs/analysis.md) to an MLflow tracking store, one MLflow run per result,
through MLflow's own client. The export hands over each result's row (the
columns of schemas/result_columns.json, each with the role it plays here:
param, metric or tag), its full document, its sweep's name and, for a
compiled run, its eager partner and speedup.

Idempotent: a run carries its result's key as the tag torchsweep.result,
and a result whose finished run is already in the experiment is left alone.
A run this writer started and could not finish is deleted, so a failed
export leaves nothing half-written. Runs in the MLflow venv
(readers/python/requirements/mlflow.lock)."""
import argparse
import datetime
import json
import os
import pathlib
import sqlite3
import sys
import urllib.parse

# An unreachable server must fail in seconds, not after MLflow's minutes of retries.
os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", "10")

from mlflow.entities import Metric, Param, RunTag, ViewType  # noqa: E402
from mlflow.tracking import MlflowClient  # noqa: E402

RESULT_TAG = "torchsweep.result"
# A target the writer refuses (schemas/runner_contract.json, filled in at build time).
INVALID_INPUT = int("@TS_EXIT_INVALID_INPUT@")
DOCUMENT_ARTIFACT = "torchsweep/result.json"


class BadTarget(Exception):
    """The tracking URI names something that is not an MLflow store (exit 2: bad input, nothing written)."""


class Unreachable(Exception):
    """The tracking store cannot be reached or read (exit 1)."""


def milliseconds(iso):
    return int(datetime.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000) if iso else None


def local_path(uri):
    """The file a sqlite:// URI names or the folder a file:// (or plain path) URI names; None for a server."""
    parsed = urllib.parse.urlparse(uri)
    if parsed.scheme == "sqlite":  # sqlite:///relative.db, sqlite:////absolute.db
        return uri.split(":///", 1)[1].split("?", 1)[0] or None
    if parsed.scheme in ("", "file"):
        return parsed.path
    return None


def check_target(uri):
    """Refuses, before MLflow touches it, a local target that exists and is not an MLflow store:
    MLflow would otherwise migrate a foreign SQLite database or write into a foreign folder."""
    path = local_path(uri)
    if path is None or not os.path.exists(path):
        return
    if uri.startswith("sqlite:"):
        if os.path.isdir(path):
            raise BadTarget(f"tracking URI {uri}: {path} is a folder, not an MLflow SQLite store")
        try:
            with sqlite3.connect(pathlib.Path(path).absolute().as_uri() + "?mode=ro", uri=True) as connection:
                tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.DatabaseError as error:
            raise BadTarget(f"tracking URI {uri}: {path} is not a SQLite database ({error})") from None
        if tables and not {"experiments", "runs", "alembic_version"} <= tables:
            raise BadTarget(f"tracking URI {uri}: {path} is a SQLite database but not an MLflow tracking store "
                            f"(its tables: {', '.join(sorted(tables)[:8])})")
    elif not os.path.isdir(path):
        raise BadTarget(f"tracking URI {uri}: {path} is a file, not an MLflow file store folder")
    elif os.listdir(path) and not os.path.exists(os.path.join(path, "0", "meta.yaml")) \
            and not os.path.isdir(os.path.join(path, ".trash")):
        raise BadTarget(f"tracking URI {uri}: the folder {path} is not empty and is not an MLflow file store")


def artifact_location(uri, chosen):
    """Where a new experiment keeps its artifacts: the user's choice, else beside a local store (MLflow's
    own default is a folder under the current directory), else the server's default."""
    if chosen:
        return chosen
    path = local_path(uri)
    if path is None:
        return None
    return "file://" + os.path.abspath(path.rstrip("/") + (".artifacts" if uri.startswith("sqlite:") else "/artifacts"))


def experiment_id(client, name, artifacts):
    experiment = client.get_experiment_by_name(name)
    if experiment is None:
        return client.create_experiment(name, artifact_location=artifacts)
    if experiment.lifecycle_stage != "active":
        raise BadTarget(f"experiment {name!r} is deleted in the tracking store; restore it or pick another "
                        "with --experiment")
    return experiment.experiment_id


def logged_results(client, experiment):
    """{result key: run id} of the finished runs an earlier export left; deletes unfinished ones."""
    found, token = {}, None
    while True:
        page = client.search_runs([experiment], filter_string=f"tags.`{RESULT_TAG}` != ''",
                                  run_view_type=ViewType.ACTIVE_ONLY, max_results=1000, page_token=token)
        for run in page:
            key = run.data.tags.get(RESULT_TAG)
            if run.info.status in ("FINISHED", "FAILED"):
                found[key] = run.info.run_id
            else:  # an export that died between creating the run and finishing it
                client.delete_run(run.info.run_id)
        token = page.token
        if not token:
            return found


def result_key(job_id, attempt):
    return f"{job_id}/{attempt}"


def flattened(prefix, value, out):
    if isinstance(value, dict):
        for key, inner in value.items():
            flattened(f"{prefix}.{key}", inner, out)
    elif value is not None and not isinstance(value, list):
        out[prefix] = str(value)[:5000]


def run_contents(columns, entry, eager_run):
    row = dict(zip((column["name"] for column in columns), entry["row"]))
    params, metrics, tags = [], [], {}
    timestamp = milliseconds(row.get("received_at")) or 0
    for column in columns:
        value = row[column["name"]]
        if value is None:
            continue
        role = column.get("mlflow")
        if role == "param":
            params.append(Param(column["name"], str(value)))
        elif role == "metric":
            metrics.append(Metric(column["name"], float(value), timestamp, 0))
        elif role == "tag":
            tags[f"torchsweep.{column['name']}"] = str(bool(value)).lower() if column["type"] == "bool" else str(value)
    # The environment and provenance: the result's context (versions, host, commit) as tags.
    flattened("context", entry["document"].get("context", {}), tags)
    tags[RESULT_TAG] = result_key(row["job_id"], row["attempt"])
    tags["torchsweep.sweep_name"] = entry["sweep_name"]
    partner = entry.get("eager")
    if partner:
        tags["torchsweep.eager_result"] = result_key(partner["job_id"], partner["attempt"])
        if eager_run:
            tags["torchsweep.eager_run_id"] = eager_run
        if partner.get("speedup") is not None:
            metrics.append(Metric("speedup_vs_eager", float(partner["speedup"]), timestamp, 0))
    return row, params, metrics, [RunTag(key, value) for key, value in tags.items()]


def log_result(client, experiment, columns, entry, eager_run):
    row, params, metrics, tags = run_contents(columns, entry, eager_run)
    document = entry["document"]
    run = client.create_run(experiment, start_time=milliseconds(document.get("started_at")),
                            tags={RESULT_TAG: result_key(row["job_id"], row["attempt"])}, run_name=entry["label"])
    run_id = run.info.run_id
    try:
        for first in range(0, max(len(params), len(metrics), len(tags)), 100):  # MLflow's batch limit is 100 params
            client.log_batch(run_id, metrics=metrics[first:first + 100], params=params[first:first + 100],
                             tags=tags[first:first + 100])
        client.log_text(run_id, json.dumps(document, indent=2, sort_keys=True), DOCUMENT_ARTIFACT)
        client.set_terminated(run_id, status="FINISHED" if row["status"] == "ok" else "FAILED",
                              end_time=milliseconds(document.get("finished_at") or row.get("received_at")))
    except BaseException:
        client.delete_run(run_id)
        raise
    return run_id


def export(handed, uri, chosen_experiment, artifacts):
    check_target(uri)
    client = MlflowClient(tracking_uri=uri)
    try:
        client.search_experiments(max_results=1)
    except Exception as error:  # noqa: BLE001 - any failure here means the store cannot be used
        raise Unreachable(f"tracking URI {uri} cannot be reached or read: {str(error).splitlines()[0]}") from None
    columns = handed["columns"]
    by_experiment = {}
    for entry in handed["results"]:
        by_experiment.setdefault(chosen_experiment or entry["sweep_name"], []).append(entry)
    added = kept = 0
    for name, entries in by_experiment.items():
        experiment = experiment_id(client, name, artifact_location(uri, artifacts))
        runs = logged_results(client, experiment)
        # Eager runs first, so that a compiled run can name its eager run's id.
        entries.sort(key=lambda entry: entry.get("eager") is not None)
        for entry in entries:
            key = result_key(entry["row"][0], entry["row"][1])
            if key in runs:
                kept += 1
                continue
            partner = entry.get("eager")
            eager_run = runs.get(result_key(partner["job_id"], partner["attempt"])) if partner else None
            runs[key] = log_result(client, experiment, columns, entry, eager_run)
            added += 1
    print(json.dumps({"tracking_uri": uri, "experiments": sorted(by_experiment), "runs_added": added,
                      "runs_already_there": kept}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", required=True, help="the export's results as JSON (torchsweep export writes it)")
    parser.add_argument("--tracking-uri", required=True,
                        help="an MLflow tracking URI (sqlite:///F, file:///D, http://)")
    parser.add_argument("--experiment", help="one experiment for every result, instead of one per sweep name")
    parser.add_argument("--artifacts", help="the artifact location of experiments this export creates")
    args = parser.parse_args()
    with open(args.input) as handle:
        handed = json.load(handle)
    assert [column["name"] for column in handed["columns"][:2]] == ["job_id", "attempt"], "job_id, attempt first"
    try:
        export(handed, args.tracking_uri, args.experiment, args.artifacts)
    except BadTarget as error:
        sys.stderr.write(f"torchsweep-mlflow: {error}\n")
        sys.exit(INVALID_INPUT)
    except Unreachable as error:
        sys.exit(f"torchsweep-mlflow: {error}")


if __name__ == "__main__":
    try:
        main()
    except Exception as error:  # one line to stderr and a non-zero exit; the CLI says it failed
        sys.exit(f"torchsweep-mlflow: {type(error).__name__}: {error}")
